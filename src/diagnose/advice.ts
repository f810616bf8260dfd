import type { BenchmarkResult, Bottleneck, KnobAdvice, ModelSpec, ServerConfig, ServerEvidence } from '../domain/index.js';
import { KV_FULL, oneTokenPromptsPerStep } from './evidence.js';

/**
 * The knob changes that address a bottleneck, most direct first, with a value to try where the
 * evidence gives one (vLLM's optimization guide, docs.vllm.ai/en/latest/configuration/optimization.html, for what each knob does). A change the
 * configuration already has (fp8 set, CUDA graphs on) is not suggested, nor a quantization to a
 * checkpoint that has its own.
 */
interface AdviceContext {
  readonly result: BenchmarkResult;
  readonly server: ServerEvidence | null;
  readonly known: ServerConfig;
  /** The checkpoint's own weight format (`native_quantization`), or null when the run does not say. */
  readonly checkpoint?: ModelSpec['native_quantization'] | null | undefined;
}

/**
 * `--quantization fp8` for a decode-bound run, or null. Only a 16-bit checkpoint takes it: a quantized
 * one's config.json names its method, which vLLM reads without a flag, and any other method is refused
 * (C19: a ModelOpt FP8 checkpoint refuses `fp8`); an FP8 checkpoint already reads one byte per weight.
 * When the run does not say which checkpoint it served, the advice says whom it is for.
 */
function quantizationWhy(k: ServerConfig, checkpoint: ModelSpec['native_quantization'] | null): string | null {
  if (k.quantization === 'fp8') return null;
  const why = 'half the weight bytes read per step; changes numerics, so check quality';
  if (checkpoint === null) return `for a 16-bit checkpoint (a quantized one's config.json already sets its format, no flag needed): ${why}`;
  return checkpoint === 'none' ? why : null;
}

const pow2Above = (x: number): number => 2 ** Math.ceil(Math.log2(Math.max(1, x)));

/** The top of max_num_seqs's range in search-spaces/vllm.yaml: advice stays inside what a study would try. */
const MAX_SEQS_ADVISED = 1024;

/** The mean running batch of one replica: /metrics and the simulator count every replica's together. */
function perReplicaRunning(s: ServerEvidence | null, k: ServerConfig): number | null {
  const running = s?.running_mean ?? null;
  return running === null ? null : running / (k.data_parallel_size ?? 1);
}

/**
 * The sequences one replica's KV cache holds at 95%, at the cache each running sequence took on
 * average (mean usage ÷ mean batch), or null when the run does not tell: a larger max_num_seqs than
 * that preempts instead of admitting.
 */
function seqsTheCacheHolds(s: ServerEvidence | null, k: ServerConfig): number | null {
  const kv = s?.kv_usage_mean ?? null;
  const running = perReplicaRunning(s, k);
  if (kv === null || running === null || kv <= 0 || running <= 0) return null;
  return Math.floor((KV_FULL * running) / kv);
}

/**
 * A max_num_seqs under the running batch (× share), or null (lower, no value) when the batch is not
 * known or under `minRunning`; undefined when that is not below the max_num_seqs in force, so a
 * "lower" never names a value at or above it.
 */
function belowSeqs(running: number | null, share: number, minRunning: number, current: number | undefined): number | null | undefined {
  if (current !== undefined && current <= 1) return undefined;
  if (running === null || running < minRunning) return null;
  const to = Math.max(1, Math.floor(running * share));
  return current !== undefined && to >= current ? undefined : to;
}

/**
 * Why a larger token budget helps: a prompt sliced over several steps prefills sooner; one that fits a
 * step already gains nothing itself, but queued prompts prefill together instead of a step each.
 */
function prefillWhy(meanPrompt: number | null, budget: number | undefined): string {
  if (meanPrompt === null) return 'more prompt tokens per step';
  const p = Math.round(meanPrompt);
  if (budget === undefined) return `${p}-token prompts: more tokens per step prefill them, and those waiting behind them, sooner`;
  if (meanPrompt > budget) return `a ${p}-token prompt takes ${Math.ceil(meanPrompt / budget)} steps of the ${budget}-token budget; more per step prefills it sooner`;
  const fit = Math.floor(budget / meanPrompt);
  return `a ${p}-token prompt fits one step of the ${budget}-token budget, but only ${fit} ${fit === 1 ? 'fits' : 'fit'} a step; more per step prefills waiting prompts together`;
}

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
      // Only preemption is cured by a smaller batch: a full cache without any already admits no more
      // than fit, and a lower max_num_seqs would only cap it further.
      const to = (s?.preemptions ?? 0) > 0 ? belowSeqs(perReplicaRunning(s, k), 0.75, 2, k.max_num_seqs) : undefined;
      if (to !== undefined) push('max_num_seqs', 'lower', to, 'fewer sequences sharing the cache, so fewer are preempted');
      push('tensor_parallel_size', 'raise', twiceTp, 'the KV cache spreads over more GPUs');
      break;
    }
    case 'admission': {
      // max_num_seqs is per replica; a plateau seen on /metrics is every replica's together. One-token
      // answers leave no plateau on the gauge: the prompts a step holds are the batch.
      const perStep = s === null ? null : oneTokenPromptsPerStep(s, result);
      const plateau = (s?.running_limit_known === true ? s.running_limit : null) ?? (perStep === null ? null : Math.round(perStep)) ?? s?.running_peak ?? null;
      const limit = k.max_num_seqs ?? (plateau === null ? null : Math.max(1, Math.round(plateau / (k.data_parallel_size ?? 1))));
      const to = limit === null ? null : Math.min(MAX_SEQS_ADVISED, 2 * limit, seqsTheCacheHolds(s, k) ?? Infinity);
      // At the search space's top already, or the cache holds no more: another replica, not a larger batch, admits more.
      if (to === null || limit === null || to > limit) {
        push('max_num_seqs', 'raise', to, `requests waited while ${limit === null ? 'the batch was full' : `${limit} ran`}${s?.kv_usage_mean === null || s?.kv_usage_mean === undefined ? '' : `; the KV cache was ${Math.round(s.kv_usage_mean * 100)}% full on average`}`);
      }
      push('data_parallel_size', 'raise', k.data_parallel_size === undefined ? null : k.data_parallel_size * 2, 'another replica admits its own max_num_seqs, if the GPUs allow');
      break;
    }
    case 'prefill': {
      const meanPrompt = result.completed > 0 ? result.total_input_tokens / result.completed : null;
      const budget = k.max_num_batched_tokens;
      const target = meanPrompt === null ? null : Math.min(65_536, Math.max(2048, pow2Above(meanPrompt * 2)));
      if (budget === undefined || target === null || budget < target) {
        push('max_num_batched_tokens', 'raise', target, prefillWhy(meanPrompt, budget));
      }
      if (k.enable_prefix_caching !== true) push('enable_prefix_caching', 'set', true, 'prompts sharing a prefix skip its prefill');
      push('tensor_parallel_size', 'raise', twiceTp, 'prefill is compute-bound: more GPUs per replica shorten it');
      break;
    }
    case 'decode': {
      // A batch of a few sequences steps about as fast as one (each step reads the weights whatever the
      // batch): lowering max_num_seqs under it only cuts throughput.
      const running = perReplicaRunning(s, k);
      const to = running !== null && running < 4 ? undefined : belowSeqs(running, 0.6, 4, k.max_num_seqs);
      if (to !== undefined) push('max_num_seqs', 'lower', to, 'a smaller batch takes shorter steps, so tokens come faster');
      push('tensor_parallel_size', 'raise', twiceTp, 'each step reads the weights over more GPUs’ memory bandwidth');
      const quantWhy = quantizationWhy(k, ctx.checkpoint ?? null);
      if (quantWhy !== null) push('quantization', 'set', 'fp8', quantWhy);
      if (k.enforce_eager === true) push('enforce_eager', 'set', false, 'CUDA graphs cut the per-step launch overhead');
      if (result.median_itl_ms > 0 && result.p99_itl_ms > 3 * result.median_itl_ms) {
        const tail = `ITL p99 is ${(result.p99_itl_ms / result.median_itl_ms).toFixed(1)}× its median`;
        if (k.enable_chunked_prefill === false) {
          // Without chunking a prompt prefills whole in one step, and vLLM refuses a budget under max_model_len.
          push('enable_chunked_prefill', 'set', true, `${tail}: whole prompts prefilled in one step stall the decodes; chunks bound the stall`);
        } else {
          const budget = k.max_num_batched_tokens;
          // vLLM refuses a budget under max_num_seqs; a budget already at or under the target is not lowered to it.
          const to = Math.max(2048, k.max_num_seqs ?? 0);
          if (budget === undefined || budget > to) push('max_num_batched_tokens', 'lower', to, `${tail}: prefill chunks in the batch stall the decodes`);
        }
      }
      break;
    }
    case 'client':
    case 'none':
      break;
  }
  return out;
}
