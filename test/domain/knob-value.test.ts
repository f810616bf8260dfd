import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ALL_KNOB_NAMES,
  coerceKnobValue,
  CONDITIONAL_KNOB_NAMES,
  KNOB_NAMES,
  knobKind,
  knobNamed,
  parseKnobAssignments,
  ResolvedServerConfig,
  ServerConfig,
  validateServerConfig,
  type AnyKnobName,
} from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(isLmBenchError(err), `a catalog error, not ${String(err)}`);
    return err.code;
  }
  return 'ok';
}

function errorOf(fn: () => unknown): { code: string; message: string; details: Record<string, unknown> } {
  try {
    fn();
  } catch (err) {
    assert.ok(isLmBenchError(err), `a catalog error, not ${String(err)}`);
    return { code: err.code, message: err.message, details: err.details };
  }
  assert.fail('expected an error');
}

test('the knob lists are the schema: every field once, core then conditional, both schemas alike', () => {
  assert.deepEqual([...ALL_KNOB_NAMES].sort(), Object.keys(ServerConfig.shape).sort());
  assert.deepEqual(Object.keys(ResolvedServerConfig.shape), Object.keys(ServerConfig.shape));
  assert.deepEqual(ALL_KNOB_NAMES, [...KNOB_NAMES, ...CONDITIONAL_KNOB_NAMES]);
  assert.equal(new Set(ALL_KNOB_NAMES).size, ALL_KNOB_NAMES.length);
  assert.equal(KNOB_NAMES.length, 12, 'the core knobs the tuner searches');
  // ServerConfig leaves every knob optional; the resolved one requires each.
  assert.equal(ServerConfig.safeParse({}).success, true);
  for (const k of ALL_KNOB_NAMES) assert.ok(ResolvedServerConfig.shape[k].safeParse(undefined).success === false, `${k} required once resolved`);
  assert.equal(ServerConfig.safeParse({ swap_space: 4 }).success, false, 'still strict');
});

test('a knob kind is what its schema field accepts', () => {
  for (const k of ALL_KNOB_NAMES) {
    const field = ResolvedServerConfig.shape[k];
    const kind = knobKind(k);
    assert.equal(field.safeParse(true).success, kind === 'boolean', `${k}: boolean iff it takes true`);
    assert.equal(field.safeParse(0.5).success || field.safeParse(2).success, kind === 'integer' || kind === 'number', `${k}: numeric iff it takes a number`);
    if (kind === 'integer') assert.equal(field.safeParse(2.5).success, false, `${k}: integer refuses 2.5`);
  }
  assert.ok(ALL_KNOB_NAMES.some((k) => knobKind(k) === 'boolean') && ALL_KNOB_NAMES.some((k) => knobKind(k) === 'choice'));
});

test('coerceKnobValue: true/false in any case; integers in digits, other numbers in decimal, within the field; choices as vLLM spells them', () => {
  const cases: [AnyKnobName, string, boolean | number | string][] = [
    ['enable_prefix_caching', 'true', true],
    ['enable_prefix_caching', 'True', true],
    ['enable_prefix_caching', ' FALSE ', false],
    ['enforce_eager', 'false', false],
    ['max_num_seqs', '128', 128],
    ['max_num_seqs', ' +64 ', 64],
    ['max_num_batched_tokens', '10000', 10_000],
    ['gpu_memory_utilization', '9e-1', 0.9],
    ['gpu_memory_utilization', '0.9', 0.9],
    ['gpu_memory_utilization', '.85', 0.85],
    ['long_prefill_token_threshold', '0', 0],
    ['kv_cache_dtype', 'fp8', 'fp8'],
    ['quantization', ' none', 'none'],
  ];
  for (const [k, raw, want] of cases) assert.equal(coerceKnobValue(k, raw), want, `${k}=${JSON.stringify(raw)}`);

  const refused: [AnyKnobName, string][] = [
    ['enable_prefix_caching', '1'],
    ['enable_prefix_caching', '0'],
    ['enable_prefix_caching', 'yes'],
    ['enable_prefix_caching', ''],
    ['max_num_seqs', 'abc'],
    ['max_num_seqs', ''],
    ['max_num_seqs', '0x80'],
    ['max_num_seqs', 'Infinity'],
    ['max_num_seqs', '1.5'],
    // vLLM's argparse reads an integer knob with int(), which refuses both.
    ['max_num_seqs', '1e2'],
    ['max_num_batched_tokens', '8192.0'],
    ['max_num_seqs', '-4'],
    ['gpu_memory_utilization', '1.5'],
    ['kv_cache_dtype', 'FP8'],
    ['quantization', ''],
  ];
  for (const [k, raw] of refused) {
    const e = errorOf(() => coerceKnobValue(k, raw));
    assert.equal(e.code, 'LMB_ERR_KNOB_OUT_OF_DOMAIN', `${k}=${JSON.stringify(raw)}`);
    assert.ok(e.message.includes(k) && e.message.includes(JSON.stringify(raw)), `names the knob and the text: ${e.message}`);
    assert.equal(e.details['value'], raw);
  }
  const labelled = errorOf(() => coerceKnobValue('max_num_seqs', 'lots', { label: '--max-num-seqs', field: 'max-num-seqs' }));
  assert.match(labelled.message, /^--max-num-seqs = "lots": expected an integer$/);
  assert.equal(labelled.details['field'], 'max-num-seqs');
});

test('knobNamed takes vLLM and CLI spellings; anything else is LMB_ERR_UNKNOWN_KNOB naming it', () => {
  assert.equal(knobNamed('max-num-seqs'), 'max_num_seqs');
  assert.equal(knobNamed(' enable_prefix_caching '), 'enable_prefix_caching');
  const e = errorOf(() => knobNamed('swap-space', { label: 'query.config.swap-space', field: 'config.swap-space' }));
  assert.equal(e.code, 'LMB_ERR_UNKNOWN_KNOB');
  assert.match(e.message, /query\.config\.swap-space: unknown knob "swap_space"/);
});

test('--set reads values by the same rules (a sweep, a sidecar, the CLI alike)', () => {
  assert.deepEqual(parseKnobAssignments(['enable_prefix_caching=True', 'max-num-seqs=256', 'kv_cache_dtype=fp8']), { enable_prefix_caching: true, max_num_seqs: 256, kv_cache_dtype: 'fp8' });
  for (const [k, raw] of [['enable_prefix_caching', '1'], ['max_num_seqs', '1.5'], ['kv_cache_dtype', 'FP8']] as const) {
    assert.equal(codeOf(() => parseKnobAssignments([`${k}=${raw}`])), codeOf(() => coerceKnobValue(k, raw)));
  }
  assert.equal(codeOf(() => parseKnobAssignments(['swap_space=4'])), 'LMB_ERR_UNKNOWN_KNOB');
});

test('validateServerConfig names every bad knob with its value, and the unknown ones first by code', () => {
  const two = errorOf(() => validateServerConfig({ max_num_seqs: -4, gpu_memory_utilization: 2 }, 'sidecar a.yaml'));
  assert.equal(two.code, 'LMB_ERR_KNOB_OUT_OF_DOMAIN');
  assert.match(two.message, /^sidecar a\.yaml: /);
  assert.match(two.message, /max_num_seqs = -4: /);
  assert.match(two.message, /gpu_memory_utilization = 2: /);
  assert.equal(two.details['field'], 'max_num_seqs');
  const mixed = errorOf(() => validateServerConfig({ max_num_seqs: -4, swap_space: 4 }));
  assert.equal(mixed.code, 'LMB_ERR_UNKNOWN_KNOB');
  assert.match(mixed.message, /swap_space/);
  assert.match(mixed.message, /max_num_seqs = -4/, 'the bad value is reported too');
  assert.equal(mixed.details['field'], 'swap_space');
});
