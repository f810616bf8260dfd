import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { modelSpecFromHfConfig } from '../../src/catalog/hf-config.js';
import { kvBytesPerToken, type ModelSpec } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';

// Published config.json layouts beyond the catalog's rows (test/fixtures/hf-configs-extra), and edits of
// the catalog's fixtures into the layouts users write, checked against the model cards' figures.

type Config = Record<string, unknown>;
const read = (dir: string, id: string): Config => JSON.parse(readFileSync(join(PROJECT_ROOT, dir, `${id}.json`), 'utf8')) as Config;
const fixture = (id: string): Config => read('test/fixtures/hf-configs', id);
const extra = (id: string): Config => read('test/fixtures/hf-configs-extra', id);
const derive = (config: unknown, id = 'x'): ModelSpec => modelSpecFromHfConfig(config, { id, hfName: `org/${id}`, source: `test fixture ${id}` });
const within = (actual: number, expected: number, rel: number, what: string): void =>
  assert.ok(Math.abs(actual / expected - 1) <= rel, `${what}: derived ${actual.toFixed(3)} vs ${expected} (more than ${rel * 100}% apart)`);
const textOf = (c: Config): Config => c['text_config'] as Config;

test('gemma-3-12b-it: the text_config omits head_dim, so Gemma3TextConfig’s 256 applies, not hidden_size / heads = 240', () => {
  const d = derive(extra('gemma-3-12b-it'));
  assert.equal(d.head_dim, 256);
  // KV per token: 2 × 48 layers × 8 KV heads × 256 × 2 bytes.
  assert.equal(kvBytesPerToken(d, 2), 2 * 48 * 8 * 256 * 2);
  // Model card: 12,187,325,040 parameters.
  within(d.params_b, 12.187, 0.005, 'gemma-3-12b-it total');
  assert.deepEqual(d.sliding_window, { tokens: 1024, layers: 40 });
});

test('gemma-3-4b-it: the text_config states no heads at all; 8 attention heads, 4 KV heads × 256 apply', () => {
  const d = derive(extra('gemma-3-4b-it'));
  assert.equal(d.num_attention_heads, 8);
  assert.equal(d.num_kv_heads, 4);
  assert.equal(d.head_dim, 256);
  assert.equal(kvBytesPerToken(d, 2), 2 * 34 * 4 * 256 * 2);
  // Model card: 4,300,079,472 parameters.
  within(d.params_b, 4.3, 0.005, 'gemma-3-4b-it total');
  assert.equal(d.native_context, 131072, 'Gemma 3’s linear rope factor is already in its 128K (vLLM skips it)');
});

test('Llama 4: an empty no_rope_layers means the default (every 4th layer NoPE), as transformers reads it', () => {
  const scout = fixture('llama-4-scout-17b-16e-instruct');
  const d = derive({ ...scout, text_config: { ...textOf(scout), no_rope_layers: [] } });
  assert.deepEqual(d.chunked_attention, { tokens: 8192, layers: 36 });
  const every2 = derive({ ...scout, text_config: { ...textOf(scout), no_rope_layers: [], no_rope_layer_interval: 2 } });
  assert.deepEqual(every2.chunked_attention, { tokens: 8192, layers: 24 });
});

test('Llama 4: a text_config saved as its difference from Llama4TextConfig’s defaults derives the same model', () => {
  const scout = fixture('llama-4-scout-17b-16e-instruct');
  const full = derive(scout);
  // What `save_pretrained` writes for a Scout text_config: only what differs from the class defaults.
  const defaults = ['vocab_size', 'hidden_size', 'intermediate_size', 'intermediate_size_mlp', 'num_hidden_layers', 'num_attention_heads', 'num_key_value_heads', 'head_dim', 'num_experts_per_tok', 'num_local_experts', 'interleave_moe_layer_step', 'attention_chunk_size', 'no_rope_layers'];
  const diff = Object.fromEntries(Object.entries(textOf(scout)).filter(([k]) => !defaults.includes(k)));
  const d = derive({ ...scout, text_config: diff });
  for (const f of ['layers', 'hidden_size', 'num_attention_heads', 'num_kv_heads', 'head_dim', 'intermediate_size', 'vocab_size', 'params_b', 'active_params_b'] as const) assert.equal(d[f], full[f], f);
  assert.deepEqual(d.moe, full.moe);
  assert.deepEqual(d.chunked_attention, full.chunked_attention);
});

test('Llama 4 Maverick without intermediate_size_mlp: its 24 dense layers are 16384 wide (the default), not the experts’ 8192', () => {
  const scout = fixture('llama-4-scout-17b-16e-instruct');
  const t = textOf(scout);
  const maverick = { ...t, num_local_experts: 128, interleave_moe_layer_step: 2, max_position_embeddings: 1048576 };
  const stated = derive({ ...scout, text_config: maverick });
  const omitted = derive({ ...scout, text_config: Object.fromEntries(Object.entries(maverick).filter(([k]) => k !== 'intermediate_size_mlp')) });
  assert.equal(omitted.intermediate_size, 16384);
  assert.equal(omitted.params_b, stated.params_b);
  // Model card: 400B total, 17B active (the vision tower in the total).
  within(stated.params_b, 400, 0.01, 'Maverick total');
  within(stated.active_params_b, 17, 0.02, 'Maverick active');
  assert.equal(stated.moe?.dense_layers, 24);
});

test('Llama 4: moe_layers must list distinct layers that exist, or the MoE layer count would be wrong', () => {
  const scout = fixture('llama-4-scout-17b-16e-instruct');
  const withLayers = (moe_layers: number[]) => derive({ ...scout, text_config: { ...textOf(scout), moe_layers } });
  assert.equal(withLayers([1, 3, 5]).moe?.dense_layers, 45);
  for (const bad of [[1, 1, 3], [0, 48], [-1, 2]]) {
    assert.throws(
      () => withLayers(bad),
      (e: unknown) => isLmBenchError(e, 'LMB_ERR_MODEL_CONFIG_INVALID') && /text_config\.moe_layers must list distinct layer indices from 0 to 47/.test(e.message),
      JSON.stringify(bad),
    );
  }
});

test('rope scaling: the context vLLM serves is max_position_embeddings × the factor, YaRN’s from its original length', () => {
  const qwen3 = fixture('qwen3-8b');
  // Qwen3's model card: add YaRN ×4 over 32768 to config.json for 131072 tokens (vLLM then derives 131072, not 40960).
  const yarn = { rope_type: 'yarn', factor: 4.0, original_max_position_embeddings: 32768 };
  assert.equal(derive({ ...qwen3, rope_scaling: yarn }).native_context, 131072);
  assert.equal(derive({ ...qwen3, rope_scaling: { type: 'yarn', factor: 4.0, original_max_position_embeddings: 32768 } }).native_context, 131072, 'the old `type` key');
  assert.equal(derive({ ...qwen3, rope_parameters: { ...yarn, rope_theta: 1e6 } }).native_context, 131072, 'transformers 5’s rope_parameters');
  assert.equal(derive({ ...fixture('llama-2-7b-hf'), rope_scaling: { type: 'linear', factor: 4.0 } }).native_context, 16384);
  assert.equal(derive({ ...qwen3, rope_scaling: { rope_type: 'default' } }).native_context, 40960);
  // Already counted in max_position_embeddings: llama3 (Llama 3.1), longrope (Phi-3), Gemma 3's linear.
  assert.equal(derive(fixture('llama-3.1-8b')).native_context, 131072);
  assert.equal(derive({ ...qwen3, rope_scaling: { rope_type: 'longrope', long_factor: [1], short_factor: [1] } }).native_context, 40960);
  assert.equal(derive(fixture('gemma-3-27b-it')).native_context, 131072);
  // DeepSeek-V3 and gpt-oss state YaRN whose product is their max_position_embeddings.
  assert.equal(derive(fixture('deepseek-v3')).native_context, 163840);
  assert.equal(derive(fixture('gpt-oss-120b')).native_context, 131072);
  assert.throws(
    () => derive({ ...qwen3, rope_scaling: { rope_type: 'yarn', factor: 'four' } }),
    (e: unknown) => isLmBenchError(e, 'LMB_ERR_MODEL_CONFIG_INVALID') && /rope_scaling\.factor must be a positive number/.test(e.message),
  );
});
