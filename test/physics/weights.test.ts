import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelSpec, ServerConfig } from '../../src/domain/index.js';
import { checkMemory, expertsTouched, GIB, localBlocksPerRequest, memoryModel, moeLayout, resolveConfig, startupCheck, weightBytesPerGpu, weightBytesTotal } from '../../src/physics/index.js';
import { catalog } from '../sim/helpers.js';

const h100 = catalog.gpu('H100-SXM');
const resolved = (model: string | ModelSpec, config: ServerConfig = {}) => resolveConfig(config, h100, typeof model === 'string' ? catalog.model(model) : model);
const perGpuGib = (model: string, config: ServerConfig = {}) => weightBytesPerGpu(resolved(model, config), catalog.model(model)) / GIB;
const start = (model: string | ModelSpec, config: ServerConfig, gpus = 8) =>
  startupCheck(config, { hardware: h100, gpuCount: gpus, model: typeof model === 'string' ? catalog.model(model) : model });
const near = (actual: number, expected: number, rel: number, what: string) => assert.ok(Math.abs(actual / expected - 1) <= rel, `${what}: ${actual.toFixed(2)} vs ${expected}`);

test('gpt-oss-120b: a 60.8 GiB checkpoint (model card) that loads as 66.0 GiB on one H100 with Marlin’s padding (vLLM #23278)', () => {
  const m = catalog.model('gpt-oss-120b');
  near(weightBytesTotal(resolved(m), m) / GIB, 60.8, 0.02, 'checkpoint');
  near(perGpuGib('gpt-oss-120b'), 65.97, 0.01, 'loaded on one GPU');
  // gpt-oss-20b: a 12.8 GiB checkpoint.
  const s = catalog.model('gpt-oss-20b');
  near(weightBytesTotal(resolved(s), s) / GIB, 12.8, 0.05, 'gpt-oss-20b checkpoint');
});

test('gpt-oss-120b on one H100 fails as vLLM does: no KV room at 0.9 (#23278), too little for 131k at 0.95 (#27508)', () => {
  const atDefault = start('gpt-oss-120b', {}, 1);
  assert.ok(!atDefault.ok);
  assert.equal(atDefault.failure.rule, 'C12');
  assert.match(atDefault.failure.message, /No available memory for the cache blocks/);
  // vLLM logged "Available KV cache memory: -2.14 GiB" for this start.
  const mem = memoryModel(resolved('gpt-oss-120b'), h100, catalog.model('gpt-oss-120b'));
  assert.ok(Math.abs(mem.kvGibPerGpu - -2.14) < 0.3, `${mem.kvGibPerGpu}`);
  const tighter = start('gpt-oss-120b', { gpu_memory_utilization: 0.95, max_num_batched_tokens: 1024 }, 1);
  assert.ok(!tighter.ok);
  assert.equal(tighter.failure.rule, 'C13');
  assert.match(tighter.failure.message, /max seq len \(131072\)/);
  // A shorter context starts on the same GPU.
  assert.ok(start('gpt-oss-120b', { gpu_memory_utilization: 0.95, max_num_batched_tokens: 1024, max_model_len: 32768 }, 1).ok);
});

test('every expert is resident: TP halves the experts per GPU, the dense parts too; DP alone does not shard a dense model', () => {
  const tp1 = perGpuGib('qwen3-30b-a3b');
  const tp2 = perGpuGib('qwen3-30b-a3b', { tensor_parallel_size: 2 });
  near(tp2, tp1 / 2, 0.01, 'TP2 vs TP1');
  near(tp1, (30.53e9 * 2) / GIB, 0.01, 'bf16 Qwen3-30B-A3B, all of it');
  // FP8 checkpoint: linear layers and experts in one byte, embeddings in bf16.
  const fp8 = perGpuGib('qwen3-30b-a3b-fp8');
  assert.ok(fp8 > tp1 / 2 && fp8 < tp1 / 2 + 1, `${fp8}`);
  // A dense model's DP ranks are replicas: same weights per GPU.
  assert.equal(perGpuGib('llama-3.1-8b', { data_parallel_size: 4 }), perGpuGib('llama-3.1-8b'));
  // An MoE model's experts spread over DP × TP even without expert parallelism (sliced).
  assert.ok(perGpuGib('qwen3-30b-a3b', { data_parallel_size: 4 }) < tp1 / 2);
});

test('expert parallelism: whole experts, ⌈E / ranks⌉ on the fullest GPU; no effect on one GPU or on a dense model', () => {
  const m = catalog.model('qwen3-30b-a3b');
  const ep6 = moeLayout(resolved(m, { tensor_parallel_size: 2, data_parallel_size: 3, enable_expert_parallel: true }), m);
  assert.deepEqual(ep6, { ranks: 6, expertParallel: true, expertsPerRank: 22, sliceWidth: 768 });
  const sliced = moeLayout(resolved(m, { tensor_parallel_size: 2, data_parallel_size: 4 }), m);
  assert.deepEqual(sliced, { ranks: 8, expertParallel: false, expertsPerRank: 128, sliceWidth: 96 });
  // 128 experts over 6 ranks: the fullest holds 22 (not 21.3), so EP costs it a little more than slicing.
  const ep = perGpuGib('qwen3-30b-a3b', { tensor_parallel_size: 2, data_parallel_size: 3, enable_expert_parallel: true });
  assert.ok(ep > perGpuGib('qwen3-30b-a3b', { tensor_parallel_size: 6 }) - 1e-9);
  assert.equal(moeLayout(resolved(m, { enable_expert_parallel: true }), m)?.expertParallel, false, 'one GPU: nothing to spread');
  assert.equal(perGpuGib('llama-3.1-8b', { tensor_parallel_size: 2, enable_expert_parallel: true }), perGpuGib('llama-3.1-8b', { tensor_parallel_size: 2 }));
});

test('sliding-window layers: KV per token from the full-attention layers only, plus a fixed window of blocks per request', () => {
  const m = catalog.model('gpt-oss-120b');
  const r = resolved(m, { tensor_parallel_size: 2 });
  const mem = memoryModel(r, h100, m);
  // 18 full layers × 2 (K, V) × 4 KV heads per GPU × 64 × 2 bytes.
  assert.equal(mem.kvBytesPerTokenPerGpu, 18 * 2 * 4 * 64 * 2);
  assert.deepEqual(mem.slidingGroups, { groups: 1, maxBlocks: 128 / 16 + 1 });
  assert.equal(memoryModel(resolved('llama-3.1-8b'), h100, catalog.model('llama-3.1-8b')).slidingGroups, null);
});

test('C13 edge on a KV-tight GPU: exactly the blocks of one request plus its window budget start, one block more fails', () => {
  const m = catalog.model('gpt-oss-120b');
  const config: ServerConfig = { gpu_memory_utilization: 0.95, max_num_batched_tokens: 1024 };
  const mem = memoryModel(resolved(m, config), h100, m);
  // The sliding group's budget as vLLM checks it: the window − 1 plus a step's tokens, plus a block.
  const room = mem.numBlocks - localBlocksPerRequest(resolved(m, config), m);
  const ctx = { hardware: h100, gpuCount: 1, model: m };
  assert.equal(checkMemory(resolved(m, { ...config, max_model_len: room * 16 }), ctx), null);
  assert.equal(checkMemory(resolved(m, { ...config, max_model_len: (room + 1) * 16 }), ctx)?.rule, 'C13');
});

test('experts touched by a step: k for one token, all of them for a big batch, never more', () => {
  assert.equal(expertsTouched(128, 4, 1), 4);
  assert.ok(expertsTouched(128, 4, 8) > 25 && expertsTouched(128, 4, 8) < 32);
  assert.ok(expertsTouched(128, 4, 1024) > 127.99);
  let last = 0;
  for (const t of [1, 2, 4, 16, 64, 256]) {
    const e = expertsTouched(128, 8, t);
    assert.ok(e > last && e <= 128);
    last = e;
  }
});

test('C17–C19: the rules a quantized checkpoint and an MoE layout add, in vLLM wording', () => {
  const quant = start('gpt-oss-120b', { tensor_parallel_size: 2, quantization: 'fp8' });
  assert.ok(!quant.ok);
  assert.equal(quant.failure.rule, 'C19');
  assert.match(quant.failure.message, /model config \(mxfp4\) does not match .* \(fp8\)/);
  assert.ok(start('qwen3-30b-a3b-fp8', { quantization: 'fp8' }).ok, 'the flag the checkpoint already has is fine');
  // Qwen3-30B-A3B-FP8: 768-wide experts in 128-wide blocks: TP 2 holds 384 (3 blocks), TP 4 holds 192.
  assert.ok(start('qwen3-30b-a3b-fp8', { tensor_parallel_size: 2 }).ok);
  const tp4 = start('qwen3-30b-a3b-fp8', { tensor_parallel_size: 4 });
  assert.ok(!tp4.ok);
  assert.equal(tp4.failure.rule, 'C18');
  assert.match(tp4.failure.message, /= 192 is not divisible by weight quantization block_n = 128/);
  assert.ok(start('qwen3-30b-a3b-fp8', { tensor_parallel_size: 4, enable_expert_parallel: true }).ok, 'whole experts need no slicing');
  // The public recipe caps Qwen3-235B-A22B-FP8 at TP 4 for the same reason (1536 / 8 = 192).
  assert.equal((start('qwen3-235b-a22b-fp8', { tensor_parallel_size: 8 }) as { failure?: { rule: string } }).failure?.rule, 'C18');
  // C17: experts whose width the ranks do not divide; C4 (the dense MLP) does not apply to an MoE model.
  const base = catalog.model('qwen3-30b-a3b');
  const odd: ModelSpec = { ...base, id: 'odd-moe', intermediate_size: 1002, moe: { experts: 128, top_k: 8, shared_experts: 0, expert_intermediate_size: 772 } };
  const c17 = start(odd, { tensor_parallel_size: 8 });
  assert.ok(!c17.ok);
  assert.equal(c17.failure.rule, 'C17');
  assert.match(c17.failure.message, /772 is not divisible by 8/);
  assert.ok(start(odd, { tensor_parallel_size: 4 }).ok, `${JSON.stringify(start(odd, { tensor_parallel_size: 4 }))}`);
  assert.ok(start(odd, { tensor_parallel_size: 8, enable_expert_parallel: true }).ok);
});
