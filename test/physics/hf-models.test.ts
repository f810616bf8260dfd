import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { modelSpecFromHfConfig } from '../../src/catalog/hf-config.js';
import type { ModelSpec, ServerConfig } from '../../src/domain/index.js';
import { embeddingParams, makeStepModel, memoryModel, priceDecodeMs, resolveConfig, startupCheck, weightBytesTotal } from '../../src/physics/index.js';
import { contextFeatures, CONTEXT_FEATURES } from '../../src/surrogate/features.js';
import { loadSpace } from '../../src/space/index.js';
import { ctxOf, VLLM_SPACE } from '../space/helpers.js';

// The physics of models derived from config.json (issue 24): formats, MLA, chunked and 5:1 sliding layers.
const catalog = defaultCatalog();
const h100 = catalog.gpu('H100-SXM');
const h200 = catalog.gpu('H200');
const fixture = (id: string): Record<string, unknown> => JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/fixtures/hf-configs', `${id}.json`), 'utf8')) as Record<string, unknown>;
const derived = (id: string, config: Record<string, unknown> = fixture(id)): ModelSpec => modelSpecFromHfConfig(config, { id, hfName: id, source: 'test' });
const resolved = (m: ModelSpec, config: ServerConfig = {}, hw = h100) => resolveConfig(config, hw, m);
const start = (m: ModelSpec, config: ServerConfig, gpus = 8, hw = h100) => startupCheck(config, { hardware: hw, gpuCount: gpus, model: m });

test('weight bytes per format: linear layers at the format’s bits a weight (scales included), embeddings and lm_head at bf16', () => {
  const cases: [string, number][] = [
    ['llama-3.1-8b', 16], // bf16
    ['llama-3.1-8b-fp8', 8], // ModelOpt FP8: scales per tensor
    ['llama-3.1-8b-instruct-w4a16', 4 + 16 / 128], // a 16-bit scale per 128
    ['qwen2.5-7b-instruct-awq', 4 + 20 / 128], // a 16-bit scale and a 4-bit zero point per 128
  ];
  for (const [id, bits] of cases) {
    const m = derived(id);
    const embed = embeddingParams(m);
    const expected = (m.params_b * 1e9 - embed) * (bits / 8) + embed * 2;
    const actual = weightBytesTotal(resolved(m), m);
    assert.ok(Math.abs(actual / expected - 1) < 1e-9, `${id}: ${actual} vs ${expected}`);
  }
  // A 4-bit 8B checkpoint is about a third of the bf16 one (its 1.05B of embeddings stay 16-bit).
  const ratio = weightBytesTotal(resolved(derived('llama-3.1-8b-instruct-w4a16')), derived('llama-3.1-8b-instruct-w4a16')) / weightBytesTotal(resolved(derived('llama-3.1-8b')), derived('llama-3.1-8b'));
  assert.ok(ratio > 0.33 && ratio < 0.37, `${ratio}`);
});

test('the vision tower is weight memory in bf16, not decode work', () => {
  const g3 = derived('gemma-3-27b-it');
  const textOnly: ModelSpec = { ...g3, params_b: g3.params_b - g3.vision_params_b, vision_params_b: 0 };
  const delta = weightBytesTotal(resolved(g3), g3) - weightBytesTotal(resolved(textOnly), textOnly);
  assert.ok(Math.abs(delta - g3.vision_params_b * 1e9 * 2) < 1e3, `${delta}`);
  const decode = (m: ModelSpec) => priceDecodeMs(makeStepModel(resolved(m), h100, m, catalog.profile), 16, 2000);
  assert.equal(decode(g3), decode(textOnly));
});

test('MLA: every TP rank holds the whole 576-value latent per layer, so KV per GPU does not shrink with TP', () => {
  const ds = derived('deepseek-v3');
  for (const tp of [1, 8]) {
    const mem = memoryModel(resolved(ds, { tensor_parallel_size: tp }, h200), h200, ds);
    assert.equal(mem.kvBytesPerTokenPerGpu, 61 * 576 * 2, `TP ${tp}`);
  }
  // The FP8 checkpoint (≈ 671 GB) fits 8 × H200 and not 8 × H100.
  const onH200 = start(ds, { tensor_parallel_size: 8, max_model_len: 32768 }, 8, h200);
  assert.ok(onH200.ok, onH200.ok ? '' : onH200.failure.message);
  const gib = onH200.memory.weightsGibPerGpu;
  assert.ok(gib > 75 && gib < 85, `${gib} GiB per H200`);
  const onH100 = start(ds, { tensor_parallel_size: 8, max_model_len: 32768 });
  assert.ok(!onH100.ok && onH100.failure.rule === 'C12');
});

test('MLA decode reads the latent, not per-head K and V: a long-context decode step is far cheaper than MHA over the same heads', () => {
  const ds = derived('deepseek-v3');
  const mha: ModelSpec = { ...ds, id: 'deepseek-v3-as-mha', mla: null, num_kv_heads: 128, head_dim: 192 };
  const r = resolved(ds, { tensor_parallel_size: 8, max_model_len: 32768 }, h200);
  const decode = (m: ModelSpec, ctx: number) => priceDecodeMs(makeStepModel(r, h200, m, catalog.profile), 64, ctx);
  const mlaGrowth = decode(ds, 32000) - decode(ds, 1000);
  const mhaGrowth = decode(mha, 32000) - decode(mha, 1000);
  assert.ok(mlaGrowth > 0, `${mlaGrowth}`);
  // KV per token per GPU: 576 values vs 2 × 16 heads × 192 = 6144 values on each of 8 ranks.
  assert.ok(mhaGrowth > 5 * mlaGrowth, `MHA +${mhaGrowth.toFixed(2)} ms vs MLA +${mlaGrowth.toFixed(2)} ms`);
});

test('DeepSeek’s three dense layers are priced as dense MLPs, not as experts', () => {
  const ds = derived('deepseek-v3');
  const allMoe: ModelSpec = { ...ds, moe: ds.moe === null ? null : { ...ds.moe, dense_layers: 0 } };
  const r = resolved(ds, { tensor_parallel_size: 8 }, h200);
  const step = (m: ModelSpec) => priceDecodeMs(makeStepModel(r, h200, m, catalog.profile), 1, 1000);
  // One token touches 8 of 256 experts (+1 shared, 2048 wide) in an MoE layer, the whole 18432-wide MLP in a dense one.
  assert.notEqual(step(ds), step(allMoe));
  assert.ok(Number.isFinite(step(ds)) && step(ds) > 0);
});

test('local layers are block groups of their own: Gemma 3 has 6 groups of 1024-token windows, Llama 4 3 groups of 8192-token chunks', () => {
  const g3 = derived('gemma-3-27b-it');
  const g = memoryModel(resolved(g3), h100, g3);
  assert.deepEqual(g.slidingGroups, { groups: 6, maxBlocks: 1024 / 16 + 1 });
  assert.equal(g.kvBytesPerTokenPerGpu, 10 * 2 * 16 * 128 * 2, 'only the 10 global layers grow with the context');
  const scout = derived('llama-4-scout-17b-16e-instruct');
  const s = memoryModel(resolved(scout, { tensor_parallel_size: 4, max_model_len: 131072 }), h100, scout);
  assert.deepEqual(s.slidingGroups, { groups: 3, maxBlocks: 8192 / 16 + 1 });
  assert.equal(s.kvBytesPerTokenPerGpu, 12 * 2 * 2 * 128 * 2);
  // The chunked layers attend to at most a chunk: a long-context decode costs less than with global attention everywhere.
  const global: ModelSpec = { ...scout, chunked_attention: null };
  const r = resolved(scout, { tensor_parallel_size: 4, max_model_len: 131072 });
  const decode = (m: ModelSpec) => priceDecodeMs(makeStepModel(r, h100, m, catalog.profile), 32, 100000);
  assert.ok(decode(scout) < decode(global));
});

test('C18/C19 for derived checkpoints: the checkpoint fixes --quantization, and 4-bit groups must divide each slice', () => {
  const modelopt = derived('llama-3.1-8b-fp8');
  const c19 = start(modelopt, { quantization: 'fp8' });
  assert.ok(!c19.ok && c19.failure.rule === 'C19', 'a ModelOpt FP8 checkpoint refuses --quantization fp8');
  assert.match(c19.failure.message, /model config \(modelopt\)/);
  assert.ok(start(modelopt, {}).ok);
  assert.ok(start(derived('qwen3-30b-a3b-fp8'), { quantization: 'fp8' }).ok, "Qwen's own fp8 method matches");
  // Qwen2.5-72B's unpadded 29568-wide MLP in 128-groups divides only at TP 1 (docs/references/vllm-engine.md#model-configurations).
  const awq72 = derived('qwen2.5-72b-awq', { ...fixture('qwen2.5-72b'), quantization_config: { bits: 4, group_size: 128, quant_method: 'awq', version: 'gemm', zero_point: true } });
  const tp2 = start(awq72, { tensor_parallel_size: 2, max_model_len: 8192 });
  assert.ok(!tp2.ok && tp2.failure.rule === 'C18', tp2.ok ? 'started' : tp2.failure.message);
  assert.match(tp2.failure.message, /14784 is not divisible by the quantization group_size = 128/);
  // The search space's CEL rules say the same.
  const space = loadSpace(VLLM_SPACE);
  const base = ctxOf('H100-SXM', 8, 'llama-3.1-8b');
  const verdict = space.isFeasible({ quantization: 'fp8' }, { ...base, model: modelopt });
  assert.equal(verdict.ok ? 'kept' : verdict.rule, 'C19');
  const awqVerdict = space.isFeasible({ tensor_parallel_size: 2, max_model_len: 8192 }, { ...base, model: awq72 });
  assert.equal(awqVerdict.ok ? 'kept' : awqVerdict.rule, 'C18');
  assert.ok(space.isFeasible({ quantization: 'fp8' }, ctxOf('H100-SXM', 8, 'qwen3-30b-a3b-fp8')).ok);
});

test('the surrogate’s KV feature is the domain’s KV per token: MLA’s latent, not 2 × heads × head_dim', () => {
  const chat = ctxOf('H100-SXM', 8, 'llama-3.1-8b').workload;
  const at = CONTEXT_FEATURES.indexOf('model_kv_bytes_per_token');
  const feature = (m: ModelSpec): number => contextFeatures({}, { hardware: h200, gpuCount: 8, model: m, workload: chat }).row[at] ?? Number.NaN;
  const ds = derived('deepseek-v3');
  assert.equal(feature(ds), ds.layers * (512 + 64) * 2);
  const llama = catalog.model('llama-3.1-8b');
  assert.equal(feature(llama), 32 * 2 * 8 * 128 * 2, 'a dense model’s value is unchanged');
});
