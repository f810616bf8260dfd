import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerConfig } from '../../src/domain/index.js';
import { loadSpace } from '../../src/space/index.js';
import { startupCheck } from '../../src/physics/index.js';
import { ctxOf, VLLM_SPACE } from './helpers.js';

const space = loadSpace(VLLM_SPACE);

// [context, config (unset knobs take vLLM's defaults), first rule broken or null]
const cases: [string, ReturnType<typeof ctxOf>, ServerConfig, string | null][] = [
  ['defaults on 1×H100, 8B', ctxOf('H100-SXM', 1, 'llama-3.1-8b'), {}, null],
  ['TP×DP above the GPUs', ctxOf('H100-SXM', 4, 'llama-3.1-8b'), { tensor_parallel_size: 4, data_parallel_size: 2 }, 'C1'],
  ['TP×DP equal to the GPUs', ctxOf('H100-SXM', 8, 'llama-3.1-8b'), { tensor_parallel_size: 4, data_parallel_size: 2 }, null],
  ['28 heads, TP 8 (Qwen2.5-7B)', ctxOf('H100-SXM', 8, 'qwen2.5-7b'), { tensor_parallel_size: 8 }, 'C2'],
  ['28 heads, TP 4 (Qwen2.5-7B)', ctxOf('H100-SXM', 8, 'qwen2.5-7b'), { tensor_parallel_size: 4, max_model_len: 8192 }, null],
  ['mbt below mns', ctxOf('H100-SXM', 1, 'llama-3.1-8b'), { max_num_seqs: 512, max_num_batched_tokens: 256 }, 'C6'],
  ['mbt equal to mns', ctxOf('H100-SXM', 1, 'llama-3.1-8b'), { max_num_seqs: 256, max_num_batched_tokens: 256, max_model_len: 8192 }, null],
  ['chunked off, mbt below max_model_len', ctxOf('H100-SXM', 1, 'llama-3.1-8b'), { enable_chunked_prefill: false, max_num_batched_tokens: 4096, max_model_len: 8192 }, 'C7'],
  ['chunked on, mbt below max_model_len', ctxOf('H100-SXM', 1, 'llama-3.1-8b'), { enable_chunked_prefill: true, max_num_batched_tokens: 4096, max_model_len: 8192 }, null],
  ['max_model_len outside the domain', ctxOf('H100-SXM', 1, 'llama-3.1-8b'), { max_model_len: 1000 }, 'domain'],
  ['max_model_len above native (Mistral 32k)', ctxOf('H100-SXM', 1, 'mistral-7b'), { max_model_len: 131072 }, 'C8'],
  ['fp8_e5m2 KV on ROCm', ctxOf('MI300X', 1, 'llama-3.1-8b'), { kv_cache_dtype: 'fp8_e5m2' }, 'C11'],
  ['fp8_e4m3 KV on ROCm', ctxOf('MI300X', 1, 'llama-3.1-8b'), { kv_cache_dtype: 'fp8_e4m3' }, null],
  ['70B bf16 on one H100', ctxOf('H100-SXM', 1, 'llama-3.1-70b'), { max_model_len: 8192 }, 'C12'],
  ['70B on 2×A100-80 at full length', ctxOf('A100-80GB', 2, 'llama-3.1-70b'), { tensor_parallel_size: 2, gpu_memory_utilization: 0.9 }, 'C13'],
  ['utilisation 0.98 with graphs on A100-40', ctxOf('A100-40GB', 1, 'llama-3.1-8b'), { gpu_memory_utilization: 0.98, max_model_len: 8192 }, 'C14'],
  ['utilisation 0.98 eager on A100-40', ctxOf('A100-40GB', 1, 'llama-3.1-8b'), { gpu_memory_utilization: 0.98, enforce_eager: true, max_model_len: 8192 }, null],
  ['summarize (6256-token requests) at 4096', ctxOf('H100-SXM', 1, 'llama-3.1-8b', { name: 'long', input_len: { dist: 'fixed', value: 6000 }, output_len: { dist: 'fixed', value: 256 }, arrival: { kind: 'closed', concurrency: 4 }, num_prompts: 8 }), { max_model_len: 4096 }, 'C16'],
];

for (const [name, ctx, config, expected] of cases) {
  test(`rule table: ${name} → ${expected ?? 'feasible'}`, () => {
    const v = space.isFeasible(config, ctx);
    assert.equal(v.ok ? null : v.rule, expected, v.message);
    if (!v.ok) assert.ok((v.message ?? '').length > 10 && !(v.message ?? '').includes('{config.'), v.message);
  });
}

test('messages fill in config, model and memory values', () => {
  const v = space.isFeasible({ max_num_seqs: 512, max_num_batched_tokens: 256 }, ctxOf('H100-SXM', 1, 'llama-3.1-8b'));
  assert.equal(v.message, 'max_num_batched_tokens (256) must be greater than or equal to max_num_seqs (512).');
  const m = space.isFeasible({ max_model_len: 8192 }, ctxOf('H100-SXM', 1, 'llama-3.1-70b'));
  assert.match(m.message ?? '', /take \d+(\.\d+)? GiB of the \d+(\.\d+)? GiB requested/);
});

test('defaults follow vLLM: 1024/8192 on H100, 256/2048 on A100 and L40S, graphs capped at 512', () => {
  const h = space.defaultsFor(ctxOf('H100-SXM', 1, 'llama-3.1-8b'));
  assert.equal(h.max_num_seqs, 1024);
  assert.equal(h.max_num_batched_tokens, 8192);
  assert.equal(h.max_model_len, 131072);
  assert.equal(h.max_cudagraph_capture_size, 512);
  for (const gpu of ['A100-80GB', 'L40S']) {
    const a = space.defaultsFor(ctxOf(gpu, 1, 'llama-3.1-8b'));
    assert.equal(a.max_num_seqs, 256, gpu);
    assert.equal(a.max_num_batched_tokens, 2048, gpu);
  }
});

test('C13 agrees with the simulator start-up on a sliding-window model: the window and a step\'s tokens count (gpt-oss-120b, H100)', () => {
  const ctx = ctxOf('H100-SXM', 1, 'gpt-oss-120b');
  let compared = 0;
  for (const gmu of [0.94, 0.96]) {
    for (const mnbt of [1024, 4096]) {
      for (let mml = 1024; mml <= 131072; mml += 1024) {
        const config: ServerConfig = { gpu_memory_utilization: gmu, max_num_batched_tokens: mnbt, max_model_len: mml };
        const v = space.isFeasible(config, ctx);
        if (!v.ok && v.rule === 'domain') continue;
        const sim = startupCheck(config, { hardware: ctx.hardware, gpuCount: 1, model: ctx.model });
        assert.equal(!v.ok && v.rule === 'C13', !sim.ok && sim.failure.rule === 'C13', `${JSON.stringify(config)}: space ${v.ok ? 'ok' : v.rule}, simulator ${sim.ok ? 'ok' : sim.failure.rule}`);
        compared++;
      }
    }
  }
  assert.ok(compared > 100, String(compared));
});
