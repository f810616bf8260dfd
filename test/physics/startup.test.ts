import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryModel, resolveConfig, startupCheck, validateConfig, checkMemory, cudagraphCaptureSizes } from '../../src/physics/index.js';
import type { ServerConfig } from '../../src/domain/index.js';
import { catalog } from '../sim/helpers.js';

const ctx = (gpu: string, gpuCount: number, model: string) => ({ hardware: catalog.gpu(gpu), gpuCount, model: catalog.model(model) });
const check = (gpu: string, n: number, model: string, config: ServerConfig) => startupCheck(config, ctx(gpu, n, model));

test('defaults resolve as `vllm serve` does: big non-A100 GPUs 8192/1024, A100 2048/256', () => {
  const h = resolveConfig({}, catalog.gpu('H100-SXM'), catalog.model('llama-3.1-8b'));
  assert.equal(h.max_num_batched_tokens, 8192);
  assert.equal(h.max_num_seqs, 1024);
  assert.equal(h.gpu_memory_utilization, 0.9);
  assert.equal(h.max_model_len, 131072);
  assert.equal(h.async_scheduling, true);
  assert.equal(h.max_cudagraph_capture_size, 512);
  const a = resolveConfig({}, catalog.gpu('A100-80GB'), catalog.model('llama-3.1-8b'));
  assert.deepEqual([a.max_num_batched_tokens, a.max_num_seqs], [2048, 256]);
  const off = resolveConfig({ enable_chunked_prefill: false, max_model_len: 16384 }, catalog.gpu('A100-80GB'), catalog.model('llama-3.1-8b'));
  assert.equal(off.max_num_batched_tokens, 16384, 'chunked off raises the default budget to max_model_len');
  const small = resolveConfig({ max_num_seqs: 8 }, catalog.gpu('H100-SXM'), catalog.model('llama-3.1-8b'));
  assert.equal(small.max_cudagraph_capture_size, 16);
  assert.deepEqual(cudagraphCaptureSizes(small), [1, 2, 4, 8, 16]);
});

test('KV capacity of Llama-3.1-8B on H100 at 0.9 is ≈421k tokens (llm-d measurement) within 5%', () => {
  const r = resolveConfig({}, catalog.gpu('H100-SXM'), catalog.model('llama-3.1-8b'));
  const m = memoryModel(r, catalog.gpu('H100-SXM'), catalog.model('llama-3.1-8b'));
  assert.ok(Math.abs(m.kvTokenCapacity - 421_000) / 421_000 < 0.05, `${m.kvTokenCapacity}`);
  assert.ok(Math.abs(m.weightsGibPerGpu - 14.99) < 0.3);
  assert.ok(Math.abs(m.activationGib - 4.76) < 0.5);
  const fp8 = memoryModel(resolveConfig({ kv_cache_dtype: 'fp8' }, catalog.gpu('H100-SXM'), catalog.model('llama-3.1-8b')), catalog.gpu('H100-SXM'), catalog.model('llama-3.1-8b'));
  assert.ok(Math.abs(fp8.kvTokenCapacity - 2 * m.kvTokenCapacity) <= 2 * 16, 'fp8 KV doubles the tokens');
});

test('70B-FP8: TP2 on H100 leaves ≈32 GiB of KV; TP1 fails for want of memory (C12)', () => {
  const ok = check('H100-SXM', 2, 'llama-3.1-70b', { tensor_parallel_size: 2, quantization: 'fp8' });
  assert.ok(ok.ok);
  assert.ok(Math.abs(ok.memory.kvGibPerGpu - 32.0) < 1.5, `${ok.memory.kvGibPerGpu}`);
  const bad = check('H100-SXM', 1, 'llama-3.1-70b', { quantization: 'fp8' });
  assert.ok(!bad.ok);
  assert.equal(bad.failure.rule, 'C12');
  assert.equal(bad.failure.phase, 'memory');
});

test('each validation rule fires with vLLM-like wording', () => {
  const cases: [string, number, string, ServerConfig, string, RegExp][] = [
    ['H100-SXM', 1, 'llama-3.1-8b', { tensor_parallel_size: 2 }, 'C1', /exceeds the total number of available GPUs/],
    ['H100-SXM', 8, 'qwen2.5-7b', { tensor_parallel_size: 8 }, 'C2', /attention heads \(28\)/],
    ['H100-SXM', 1, 'llama-3.1-8b', { max_num_seqs: 512, max_num_batched_tokens: 256 }, 'C6', /must be greater than or equal to max_num_seqs/],
    ['H100-SXM', 1, 'llama-3.1-8b', { enable_chunked_prefill: false, max_num_batched_tokens: 4096, max_model_len: 8192 }, 'C7', /is smaller than max_model_len/],
    ['H100-SXM', 1, 'llama-3.1-8b', { max_model_len: 200000 }, 'C8', /greater than the derived max_model_len/],
    ['H100-SXM', 1, 'llama-3.1-8b', { long_prefill_token_threshold: 9000, max_model_len: 8192 }, 'C9', /long_prefill_token_threshold/],
    ['H100-SXM', 1, 'llama-3.1-8b', { block_size: 24 }, 'C10', /multiple of 16/],
    ['MI300X', 1, 'llama-3.1-8b', { kv_cache_dtype: 'fp8_e5m2' }, 'C11', /ROCm/],
    ['L4', 1, 'llama-3.1-8b', {}, 'C13', /estimated maximum model length is \d+/],
    ['H100-SXM', 1, 'llama-3.1-8b', { gpu_memory_utilization: 1 }, 'C14', /Free memory on device/],
  ];
  for (const [gpu, n, model, config, rule, re] of cases) {
    const out = check(gpu, n, model, config);
    assert.ok(!out.ok, `${rule} should fail`);
    assert.equal(out.failure.rule, rule, `${JSON.stringify(config)} → ${out.failure.rule}: ${out.failure.message}`);
    assert.match(out.failure.message, re);
  }
  const odd = { ...catalog.model('llama-3.2-3b'), num_attention_heads: 12, num_kv_heads: 3, intermediate_size: 8193 };
  const oddCtx = { hardware: catalog.gpu('H100-SXM'), gpuCount: 2, model: odd };
  assert.equal(validateConfig(resolveConfig({ tensor_parallel_size: 2 }, oddCtx.hardware, odd), oddCtx)?.rule, 'C3');
  const odd2 = { ...odd, num_kv_heads: 2 };
  assert.equal(validateConfig(resolveConfig({ tensor_parallel_size: 2 }, oddCtx.hardware, odd2), { ...oddCtx, model: odd2 })?.rule, 'C4');
  // Qwen2.5-7B has 4 KV heads: TP 2 and 4 are fine.
  const q = ctx('H100-SXM', 4, 'qwen2.5-7b');
  assert.equal(validateConfig(resolveConfig({ tensor_parallel_size: 4 }, q.hardware, q.model), q), null);
  assert.equal(checkMemory(resolveConfig({ tensor_parallel_size: 4 }, q.hardware, q.model), q), null);
});

test('start-up OOM cliff in gpu_memory_utilization: 70B bf16 on 2×H100 needs a high utilization, and 0.99 fails capture', () => {
  const util = [0.8, 0.9, 0.95, 0.97];
  const ok = util.map((u) => check('H100-SXM', 2, 'llama-3.1-70b', { tensor_parallel_size: 2, gpu_memory_utilization: u, max_model_len: 8192 }).ok);
  assert.deepEqual(ok, [false, false, true, true]);
  const eightB = [0.9, 0.95, 0.98, 0.99].map((u) => check('H100-SXM', 1, 'llama-3.1-8b', { gpu_memory_utilization: u }));
  assert.deepEqual(eightB.map((o) => o.ok), [true, true, true, false]);
  const last = eightB[3];
  assert.ok(last !== undefined && !last.ok && last.failure.rule === 'C14');
  assert.ok(check('H100-SXM', 1, 'llama-3.1-8b', { gpu_memory_utilization: 0.99, enforce_eager: true }).ok, 'eager skips graph capture');
});

test('raising max_num_batched_tokens costs KV memory', () => {
  const hw = catalog.gpu('H100-SXM');
  const m = catalog.model('llama-3.1-8b');
  const kv = [2048, 8192, 32768, 65536].map((t) => memoryModel(resolveConfig({ max_num_batched_tokens: t }, hw, m), hw, m).kvGibPerGpu);
  for (let i = 1; i < kv.length; i++) assert.ok((kv[i] as number) < (kv[i - 1] as number));
  assert.ok((kv[0] as number) - (kv[3] as number) > 2, 'several GiB between 2k and 64k');
});
