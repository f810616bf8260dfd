import type { BenchmarkResult, Bottleneck, KnobAdvice, ServerConfig, ServerEvidence } from '../domain/index.js';

/**
 * The knob changes that address a bottleneck, most direct first, with a value to try where the
 * evidence gives one (vLLM's optimization guide, docs.vllm.ai/en/latest/configuration/optimization.html, for what each knob does). A change the
 * configuration already has (fp8 set, CUDA graphs on) is not suggested.
 */
interface AdviceContext {
  readonly result: BenchmarkResult;
  readonly server: ServerEvidence | null;
  readonly known: ServerConfig;
}

const pow2Above = (x: number): number => 2 ** Math.ceil(Math.log2(Math.max(1, x)));

export function adviseKnobs(b: Bottleneck, ctx: AdviceContext): KnobAdvice[] {
  const { result, server: s, known: k } = ctx;
  const out: KnobAdvice[] = [];
  const push = (knob: KnobAdvice['knob'], change: KnobAdvice['change'], to: KnobAdvice['to'], why: string): void => {
    out.push({ knob, change, to, why });
  };
  const tp = k.tensor_parallel_size;
  const twiceTp = tp === undefined ? null : tp * 2;
  switch (b) {
    case 'kv_cache': {
      const gmu = k.gpu_memory_utilization;
      if (gmu === undefined || gmu < 0.95) {
        push('gpu_memory_utilization', 'raise', gmu === undefined ? null : Math.min(0.95, Math.round((gmu + 0.05) * 100) / 100), 'more of each GPU for KV blocks');
      }
      if (k.kv_cache_dtype === undefined || k.kv_cache_dtype === 'auto') push('kv_cache_dtype', 'set', 'fp8', 'half the bytes per cached token, twice the tokens; changes numerics, so check quality');
      const running = s?.running_mean ?? null;
      push('max_num_seqs', 'lower', running === null || running < 2 ? null : Math.max(1, Math.floor(running * 0.75)), 'fewer sequences sharing the cache, so fewer are preempted');
      push('tensor_parallel_size', 'raise', twiceTp, 'the KV cache spreads over more GPUs');
      break;
    }
    case 'admission': {
      const limit = k.max_num_seqs ?? (s?.running_limit_known === true ? s.running_limit : null) ?? s?.running_peak ?? null;
      const room = (s?.kv_usage_mean ?? 0) < 0.7 ? 2 : 1.5;
      push('max_num_seqs', 'raise', limit === null ? null : Math.min(1024, Math.round(limit * room)), `requests waited while ${limit === null ? 'the batch was full' : `${limit} ran`}${s?.kv_usage_mean === null || s?.kv_usage_mean === undefined ? '' : `; the KV cache was ${Math.round(s.kv_usage_mean * 100)}% full on average`}`);
      push('data_parallel_size', 'raise', k.data_parallel_size === undefined ? null : k.data_parallel_size * 2, 'another replica admits its own max_num_seqs, if the GPUs allow');
      break;
    }
    case 'prefill': {
      const meanPrompt = result.completed > 0 ? result.total_input_tokens / result.completed : null;
      const budget = k.max_num_batched_tokens;
      const target = meanPrompt === null ? null : Math.min(65_536, Math.max(2048, pow2Above(meanPrompt * 2)));
      if (budget === undefined || target === null || budget < target) {
        push('max_num_batched_tokens', 'raise', target, meanPrompt === null ? 'more prompt tokens per step' : `a ${Math.round(meanPrompt)}-token prompt takes ${budget === undefined ? 'several' : Math.ceil(meanPrompt / budget)} step(s) of the budget; more per step prefills it sooner`);
      }
      if (k.enable_prefix_caching !== true) push('enable_prefix_caching', 'set', true, 'prompts sharing a prefix skip its prefill');
      push('tensor_parallel_size', 'raise', twiceTp, 'prefill is compute-bound: more GPUs per replica shorten it');
      break;
    }
    case 'decode': {
      const running = s?.running_mean ?? null;
      push('max_num_seqs', 'lower', running === null || running < 4 ? null : Math.max(1, Math.floor(running * 0.6)), 'a smaller batch takes shorter steps, so tokens come faster');
      push('tensor_parallel_size', 'raise', twiceTp, 'each step reads the weights over more GPUs’ memory bandwidth');
      if (k.quantization !== 'fp8') push('quantization', 'set', 'fp8', 'half the weight bytes read per step; changes numerics, so check quality');
      if (k.enforce_eager === true) push('enforce_eager', 'set', false, 'CUDA graphs cut the per-step launch overhead');
      if (result.median_itl_ms > 0 && result.p99_itl_ms > 3 * result.median_itl_ms) {
        push('max_num_batched_tokens', 'lower', 2048, `ITL p99 is ${(result.p99_itl_ms / result.median_itl_ms).toFixed(1)}× its median: prefill chunks in the batch stall the decodes`);
      }
      break;
    }
    case 'client':
    case 'none':
      break;
  }
  return out;
}
