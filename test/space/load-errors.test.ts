import { test } from 'node:test';
import assert from 'node:assert/strict';
import { remember } from '../../src/space/bound.js';
import { CONTEXT_FIELDS, contextVars } from '../../src/space/cel.js';
import { loadSpace } from '../../src/space/index.js';
import { ctxOf, spaceEditor } from './helpers.js';

// Edited copies of the shipped space, as a user would make them (`tune --space FILE`).
const edited = spaceEditor('lmb-space-load-');
const loadError = (file: string): Error & { code?: string } => {
  try {
    loadSpace(file);
  } catch (err) {
    return err as Error & { code?: string };
  }
  assert.fail(`${file} loaded`);
};

test('a misspelt hardware field is refused at load, not absorbed by ||', () => {
  // CEL's `||` turns ("No such key" || true) into true: C10 with `hardware.platfrom` never fired.
  const file = edited('platfrom.yaml', 'hardware.platform != "cuda"', 'hardware.platfrom != "cuda"');
  const err = loadError(file);
  assert.equal(err.code, 'LMB_ERR_RULE_INVALID');
  assert.match(err.message, /platfrom\.yaml:\d+: rule C10: reads hardware\.platfrom, which no hardware has; known: .*\bplatform\b/);
});

test('a misspelt model or workload field names the rule and its line', () => {
  const m = loadError(edited('heads.yaml', 'require: model.num_attention_heads % config', 'require: model.num_attn_heads % config'));
  assert.match(m.message, /heads\.yaml:\d+: rule C2: reads model\.num_attn_heads/);
  const w = loadError(edited('wl.yaml', 'workload.max_request_tokens\n', 'workload.max_request_tokenz\n'));
  assert.match(w.message, /wl\.yaml:\d+: rule C16: reads workload\.max_request_tokenz/);
});

test('a field guarded with has() may be absent, and every field a context supplies is known', () => {
  const file = edited('guarded.yaml', "require: '!has(config.pipeline_parallel_size)", "require: '!has(model.future_field) || !has(config.pipeline_parallel_size)");
  assert.doesNotThrow(() => loadSpace(file));
  const vars = contextVars(ctxOf('H100-SXM', 2, 'qwen3-30b-a3b-fp8'));
  for (const root of ['model', 'hardware', 'workload'] as const) {
    for (const k of Object.keys(vars[root])) assert.ok(CONTEXT_FIELDS[root].includes(k), `${root}.${k} missing from CONTEXT_FIELDS`);
  }
});

test('a rule id used twice in one file is refused with both lines (it silently replaced the first)', () => {
  const file = edited('dup.yaml', '  - id: C7\n', '  - id: C6\n');
  const err = loadError(file);
  assert.equal(err.code, 'LMB_ERR_SPACE_INVALID');
  assert.match(err.message, /dup\.yaml:\d+.*rule id "C6" is used twice in this file \(also rules\.\d+, line \d+\)/);
});

test('a Map-backed rule cache forgets instead of overflowing V8 (Map maximum size exceeded)', () => {
  const cache = new Map<number, number>();
  for (let i = 0; i < 10; i++) remember(cache, i, i, 4);
  assert.ok(cache.size <= 4, `size ${cache.size}`);
  assert.equal(cache.get(9), 9);
  remember(cache, 9, 1, 4); // overwriting a key never clears
  assert.equal(cache.get(8), 8);
});

test('a categorical value listed twice is refused (it was enumerated and counted twice: 82,944,000 points, not 62,208,000)', () => {
  const err = loadError(edited('dupval.yaml', 'values: [auto, fp8_e4m3, fp8_e5m2]', 'values: [auto, fp8_e4m3, fp8_e5m2, auto]'));
  assert.equal(err.code, 'LMB_ERR_SPACE_INVALID');
  assert.match(err.message, /dupval\.yaml:\d+: knobs\.kv_cache_dtype\.values\.3: "auto" is listed twice/);
});

test('an alias spelt like a value is refused (it turned every `auto` into fp8_e5m2)', () => {
  const err = loadError(edited('alias.yaml', 'aliases: { fp8: fp8_e4m3 }', 'aliases: { fp8: fp8_e4m3, auto: fp8_e5m2 }'));
  assert.equal(err.code, 'LMB_ERR_SPACE_INVALID');
  assert.match(err.message, /alias\.yaml:\d+: knobs\.kv_cache_dtype\.aliases\.auto: "auto" is one of the values/);
});

test('a condition reading a knob declared after it says so, not that the knob is missing', () => {
  const err = loadError(edited('later.yaml', "when: '!config.enforce_eager'", "when: '!config.enforce_eager && config.enable_expert_parallel'"));
  assert.equal(err.code, 'LMB_ERR_RULE_INVALID');
  assert.match(err.message, /later\.yaml:\d+: knobs\.max_cudagraph_capture_size\.when: reads config\.enable_expert_parallel, which is declared after this knob/);
});
