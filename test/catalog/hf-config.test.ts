import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { modelSpecFromHfConfig, normalisedConfigHash } from '../../src/catalog/hf-config.js';
import { checkpointQuantMethod, kvBytesPerToken, quantGroupColumns, type ModelSpec } from '../../src/domain/index.js';
import { isLmBenchError, type ErrorCode } from '../../src/errors.js';

const DIR = join(PROJECT_ROOT, 'test/fixtures/hf-configs');
const fixture = (id: string): Record<string, unknown> => JSON.parse(readFileSync(join(DIR, `${id}.json`), 'utf8')) as Record<string, unknown>;
const derive = (config: unknown, id = 'x'): ModelSpec => modelSpecFromHfConfig(config, { id, hfName: `org/${id}`, source: `test fixture ${id}` });
const within = (actual: number, expected: number, rel: number, what: string): void =>
  assert.ok(Math.abs(actual / expected - 1) <= rel, `${what}: derived ${actual.toFixed(3)} vs ${expected} (more than ${rel * 100}% apart)`);

const catalog = defaultCatalog();

test('every catalog model has a config.json fixture, and each derives the catalog row', () => {
  const fixtures = new Set(readdirSync(DIR).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, '')));
  for (const row of catalog.models) {
    assert.ok(fixtures.has(row.id), `no fixture test/fixtures/hf-configs/${row.id}.json`);
    const d = derive(fixture(row.id), row.id);
    const exact = ['layers', 'hidden_size', 'num_attention_heads', 'num_kv_heads', 'head_dim', 'vocab_size', 'tied_embeddings', 'native_context', 'native_quantization', 'dtype'] as const;
    for (const f of exact) assert.equal(d[f], row[f], `${row.id}.${f}`);
    // intermediate_size: the HF value, which for an MoE model may be unused (Qwen3-MoE) — still the file's.
    assert.equal(d.intermediate_size, row.intermediate_size, `${row.id}.intermediate_size`);
    assert.deepEqual(d.moe, row.moe, `${row.id}.moe`);
    assert.deepEqual(d.sliding_window, row.sliding_window, `${row.id}.sliding_window`);
    assert.equal(d.mla, null);
    assert.equal(d.chunked_attention, null);
    // What the rules read of the precision: the method `--quantization` must match, the block width.
    assert.equal(checkpointQuantMethod(d), checkpointQuantMethod(row), `${row.id} quant method`);
    assert.equal(quantGroupColumns(d), quantGroupColumns(row), `${row.id} quant group`);
    assert.equal(kvBytesPerToken(d, 2), kvBytesPerToken(row, 2), `${row.id} KV bytes per token`);
    within(d.params_b, row.params_b, 0.01, `${row.id} params_b`);
    within(d.active_params_b, row.active_params_b, 0.01, `${row.id} active_params_b`);
    within(d.linear_params_b, row.linear_params_b, 0.01, `${row.id} linear_params_b`);
  }
});

// Published totals (model cards): billions of parameters, total and active.
const published: [id: string, total: number, active: number | null, what: string][] = [
  ['qwen2.5-32b-instruct', 32.8, null, 'Qwen2.5-32B-Instruct card: 32.8B'],
  ['gemma-3-27b-it', 27.4, null, 'gemma-3-27b-it: 27.4B with its ~0.4B SigLIP tower'],
  ['gemma-2-9b-it', 9.24, null, 'gemma-2-9b card: 9.24B'],
  ['phi-4', 14.7, null, 'phi-4 card: 14.7B'],
  ['mistral-small-24b-instruct-2501', 23.6, null, 'Mistral-Small-24B-Instruct-2501: 23.6B'],
  ['deepseek-v3', 671, 37, 'DeepSeek-V3 card: 671B total, 37B active (the 14B MTP module aside)'],
  ['llama-4-scout-17b-16e-instruct', 109, 17, 'Llama-4-Scout card: 109B total, 17B active'],
  ['llama-3.1-8b-fp8', 8.03, 8.03, 'nvidia/Llama-3.1-8B-Instruct-FP8: the 8.03B of Llama 3.1 8B'],
  ['llama-3.1-8b-instruct-w4a16', 8.03, 8.03, 'RedHatAI Llama-3.1-8B-Instruct quantized.w4a16'],
  ['qwen2.5-7b-instruct-awq', 7.62, 7.62, 'Qwen2.5-7B-Instruct-AWQ: the 7.61B of Qwen2.5-7B'],
];

for (const [id, total, active, what] of published) {
  test(`${id}: derived parameters within 2% of the published count (${what})`, () => {
    const d = derive(fixture(id), id);
    within(d.params_b, total, 0.02, `${id} total`);
    if (active !== null) within(d.active_params_b, active, 0.02, `${id} active`);
  });
}

test('DeepSeek-V3: multi-head latent attention caches 512 + 64 values per token per layer; 3 dense layers, then 256 experts, top 8, 1 shared', () => {
  const d = derive(fixture('deepseek-v3'));
  assert.deepEqual(d.mla, { kv_lora_rank: 512, qk_rope_head_dim: 64, qk_nope_head_dim: 128, v_head_dim: 128, q_lora_rank: 1536 });
  assert.equal(kvBytesPerToken(d, 1), 61 * (512 + 64));
  // Not 2 × 128 heads × 192 per layer: 68× less than MHA over the same heads.
  assert.ok(kvBytesPerToken(d, 1) < (61 * 2 * 128 * 192) / 60);
  assert.deepEqual(d.moe, { experts: 256, top_k: 8, shared_experts: 1, expert_intermediate_size: 2048, dense_layers: 3 });
  assert.equal(d.intermediate_size, 18432);
  assert.equal(d.native_quantization, 'fp8');
  assert.equal(quantGroupColumns(d), 128);
  assert.equal(d.native_context, 163840);
});

test('Gemma: 2 alternates 4096-token windows, 3 has 5 local layers to 1 global with a 1024 window; the vision tower counts in params only', () => {
  const g2 = derive(fixture('gemma-2-9b-it'));
  assert.deepEqual(g2.sliding_window, { tokens: 4096, layers: 21 });
  assert.equal(g2.dtype, 'bfloat16', 'a float32 config is served in bf16');
  assert.equal(g2.tied_embeddings, true);
  const g3 = derive(fixture('gemma-3-27b-it'));
  assert.deepEqual(g3.sliding_window, { tokens: 1024, layers: 52 });
  assert.equal(g3.vocab_size, 262208, 'Gemma3TextConfig default: the published text_config omits it');
  assert.equal(g3.native_context, 131072);
  within(g3.vision_params_b, 0.42, 0.05, 'SigLIP tower + projector');
  within(g3.params_b - g3.vision_params_b, g3.active_params_b, 1e-9, 'the text model is all active');
});

test('Llama 4 Scout: chunked attention on 36 of 48 layers, every layer MoE with 16 experts, top 1, and a shared expert', () => {
  const d = derive(fixture('llama-4-scout-17b-16e-instruct'));
  assert.deepEqual(d.chunked_attention, { tokens: 8192, layers: 36 });
  assert.equal(d.sliding_window, null);
  assert.deepEqual(d.moe, { experts: 16, top_k: 1, shared_experts: 1, expert_intermediate_size: 8192 });
  assert.equal(d.intermediate_size, 16384);
  assert.ok(d.vision_params_b > 0.5 && d.vision_params_b < 1.2, `${d.vision_params_b}`);
});

test('precision: each quantizer layout maps to its format, method and group', () => {
  const cases: [string, ModelSpec['native_quantization'], string, number | null, ModelSpec['dtype']][] = [
    ['llama-3.1-8b-fp8', 'fp8', 'modelopt', null, 'bfloat16'],
    ['llama-3.1-8b-instruct-w4a16', 'w4a16', 'compressed-tensors', 128, 'bfloat16'],
    ['qwen2.5-7b-instruct-awq', 'awq', 'awq', 128, 'float16'],
    ['qwen3-30b-a3b-fp8', 'fp8', 'fp8', 128, 'bfloat16'],
    ['gpt-oss-120b', 'mxfp4', 'mxfp4', null, 'bfloat16'],
    ['llama-3.1-8b', 'none', 'none', null, 'bfloat16'],
  ];
  for (const [id, format, method, group, dtype] of cases) {
    const d = derive(fixture(id));
    assert.equal(d.native_quantization, format, id);
    assert.equal(checkpointQuantMethod(d), method, id);
    assert.equal(quantGroupColumns(d), group, id);
    assert.equal(d.dtype, dtype, id);
  }
  const base = fixture('llama-3.1-8b');
  const q = (quantization_config: unknown) => derive({ ...base, quantization_config });
  const w8a8 = (type: string) => ({ quant_method: 'compressed-tensors', config_groups: { group_0: { targets: ['Linear'], weights: { num_bits: 8, type, strategy: 'channel' }, input_activations: { num_bits: 8, type, dynamic: true } } } });
  assert.equal(q(w8a8('float')).native_quantization, 'fp8');
  assert.equal(q(w8a8('int')).native_quantization, 'int8');
  assert.equal(q({ quant_method: 'gptq', bits: 4, group_size: 128, desc_act: false, sym: true }).native_quantization, 'gptq');
  assert.equal(q({ quant_method: 'fbgemm_fp8', activation_scale_ub: 1200 }).quantization_method, 'fbgemm_fp8');
  const fp4 = q({ quant_method: 'modelopt', quant_algo: 'NVFP4', group_size: 16 });
  assert.equal(fp4.native_quantization, 'fp4');
  assert.equal(quantGroupColumns(fp4), 16);
});

function throwsCode(fn: () => unknown, code: ErrorCode, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(isLmBenchError(e, code), `expected ${code}, got ${String(e)}`);
    assert.match(e.message, pattern);
    return true;
  });
}

test('bad inputs fail with the catalog code, naming the field', () => {
  const base = fixture('llama-3.1-8b');
  const without = (key: string) => Object.fromEntries(Object.entries(base).filter(([k]) => k !== key));
  throwsCode(() => derive(without('hidden_size')), 'LMB_ERR_MODEL_CONFIG_INVALID', /hidden_size is missing/);
  throwsCode(() => derive({ ...base, hidden_size: -4096 }), 'LMB_ERR_MODEL_CONFIG_INVALID', /hidden_size must be positive/);
  throwsCode(() => derive({ ...base, num_hidden_layers: 0 }), 'LMB_ERR_MODEL_CONFIG_INVALID', /num_hidden_layers must be positive/);
  throwsCode(() => derive({ ...base, num_hidden_layers: 5000 }), 'LMB_ERR_MODEL_CONFIG_INVALID', /num_hidden_layers is 5000, more than 1000/);
  throwsCode(() => derive({ ...base, num_attention_heads: 30 }), 'LMB_ERR_MODEL_CONFIG_INVALID', /num_key_value_heads \(8\) must divide num_attention_heads \(30\)/);
  throwsCode(() => derive({ ...base, num_attention_heads: 24, num_key_value_heads: 8 }), 'LMB_ERR_MODEL_CONFIG_INVALID', /num_attention_heads \(24\) must divide hidden_size \(4096\) when head_dim is absent/);
  throwsCode(() => derive({ ...base, vocab_size: 12.5 }), 'LMB_ERR_MODEL_CONFIG_INVALID', /vocab_size must be an integer/);
  throwsCode(() => derive({ ...base, hidden_size: 1 << 20, num_hidden_layers: 1000, intermediate_size: 1 << 20 }), 'LMB_ERR_MODEL_CONFIG_INVALID', /trillion: not a real model/);
  throwsCode(() => derive({ ...base, quantization_config: { quant_method: 'bitsandbytes', load_in_4bit: true } }), 'LMB_ERR_MODEL_CONFIG_INVALID', /quantization_config\.quant_method is "bitsandbytes"/);
  throwsCode(() => derive({ ...fixture('mixtral-8x7b'), num_experts_per_tok: 9 }), 'LMB_ERR_MODEL_CONFIG_INVALID', /num_experts_per_tok \(9\) exceeds the expert count \(8\)/);
  const g3 = fixture('gemma-3-27b-it');
  throwsCode(() => derive({ ...g3, text_config: { ...(g3['text_config'] as object), num_hidden_layers: null } }), 'LMB_ERR_MODEL_CONFIG_INVALID', /text_config\.num_hidden_layers is missing/);
  throwsCode(() => derive('not an object'), 'LMB_ERR_MODEL_CONFIG_INVALID', /must be a JSON object/);
});

test('an architecture outside the supported set fails naming it and the fields a model needs', () => {
  const base = fixture('llama-3.1-8b');
  throwsCode(() => derive({ ...base, architectures: ['BertForMaskedLM'], model_type: 'bert' }), 'LMB_ERR_UNSUPPORTED_ARCHITECTURE', /BertForMaskedLM.*num_key_value_heads.*experts per token/s);
  throwsCode(() => derive({ ...base, architectures: undefined, model_type: 'falcon' }), 'LMB_ERR_UNSUPPORTED_ARCHITECTURE', /model_type "falcon"/);
  // model_type alone is enough for a supported one.
  assert.equal(derive({ ...base, architectures: undefined }).layers, 32);
});

test('the config hash is the identity of the checkpoint: key order does not matter, any value does', () => {
  const a = fixture('qwen3-8b');
  const reordered = Object.fromEntries(Object.entries(a).reverse());
  assert.match(normalisedConfigHash(a), /^[0-9a-f]{64}$/);
  assert.equal(normalisedConfigHash(reordered), normalisedConfigHash(a));
  assert.notEqual(normalisedConfigHash({ ...a, vocab_size: 151937 }), normalisedConfigHash(a));
  assert.notEqual(normalisedConfigHash(fixture('qwen3-30b-a3b-fp8')), normalisedConfigHash(fixture('qwen3-30b-a3b')));
  // Nested objects are canonical too.
  const g = fixture('gemma-3-27b-it');
  const tc = g['text_config'] as Record<string, unknown>;
  assert.equal(normalisedConfigHash({ ...g, text_config: Object.fromEntries(Object.entries(tc).reverse()) }), normalisedConfigHash(g));
});
