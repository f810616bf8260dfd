import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { loadSpace } from '../../src/space/index.js';
import { captureIo } from '../helpers/cli.js';
import { ctxOf, VLLM_SPACE } from './helpers.js';

// Space files a user might write, each wrong in one way: the error names file, line and field with
// its code, where these loaded (and vLLM refused the configurations) or crashed with LMB_ERR_INTERNAL.
const dir = mkdtempSync(join(tmpdir(), 'lmb-space-bad-values-'));
const file = (name: string, text: string): string => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const knobFile = (name: string, knob: string): string => file(name, `version: 1\nknobs:\n  max_num_seqs: { type: int, low: 8, high: 64, grid: [8, 64], default: 8 }\n${knob}\n`);
const error = (fn: () => unknown): Error & { code?: string } => {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string };
  }
  assert.fail('no error');
};

test('a knob declared with another type than its vLLM argument is refused at its line', () => {
  const b = error(() => loadSpace(knobFile('bool-block.yaml', '  block_size: { type: bool, default: true }')));
  assert.equal(b.code, 'LMB_ERR_SPACE_INVALID');
  assert.match(b.message, /bool-block\.yaml:4: knobs\.block_size\.type: block_size is an int in vLLM, not a bool/);
  const c = error(() => loadSpace(knobFile('cat-eager.yaml', '  enforce_eager: { type: categorical, values: ["yes", "no"], default: "no" }')));
  assert.match(c.message, /cat-eager\.yaml:4: knobs\.enforce_eager\.type: enforce_eager is a bool in vLLM, not a categorical/);
});

test('values vLLM refuses are refused at load, in a grid, a generated grid, a bound or the categories', () => {
  const cases: [string, string, RegExp][] = [
    ['block7.yaml', '  block_size: { type: int, low: 1, high: 128, grid: [7, 16, 32], default: 16 }', /block7\.yaml:4: knobs\.block_size\.grid\.0: vLLM refuses block_size 7: --block-size takes one of 1, 8, 16, 32, 64, 128, 256/],
    ['block-step.yaml', '  block_size: { type: int, low: 8, high: 64, step: 8, default: 16 }', /block-step\.yaml:4: knobs\.block_size\.step: vLLM refuses block_size 24: .*a value of the grid the range generates/],
    ['util.yaml', '  gpu_memory_utilization: { type: float, low: 0.5, high: 1.5, step: 0.25, default: 0.75 }', /util\.yaml:4: knobs\.gpu_memory_utilization\.high: gpu_memory_utilization 1\.5 is not a value lm-bench can pass to vLLM/],
    ['kv.yaml', '  kv_cache_dtype: { type: categorical, values: [auto, int4], default: auto }', /kv\.yaml:4: knobs\.kv_cache_dtype\.values\.1: kv_cache_dtype "int4" is not a value/],
  ];
  for (const [name, knob, message] of cases) {
    const e = error(() => loadSpace(knobFile(name, knob)));
    assert.equal(e.code, 'LMB_ERR_SPACE_INVALID', name);
    assert.match(e.message, message);
  }
  // Within vLLM's set, and a range's low outside it, are fine.
  assert.doesNotThrow(() => loadSpace(knobFile('block-ok.yaml', '  block_size: { type: int, low: 1, high: 256, grid: [8, 16, 256], default: 16 }')));
});

test('a condition or default expression failing at run time names the knob and its line (was LMB_ERR_INTERNAL)', () => {
  const ctx = ctxOf('H100-SXM', 1, 'llama-3.1-8b');
  const when = loadSpace(knobFile('when.yaml', "  max_num_batched_tokens: { type: int, low: 64, high: 128, grid: [64, 128], default: 64, when: '128 / (config.max_num_seqs - 8) > 1' }"));
  const w = error(() => when.size(ctx));
  assert.equal(w.code, 'LMB_ERR_RULE_INVALID');
  assert.match(w.message, /when\.yaml:4: knobs\.max_num_batched_tokens\.when: division by zero \(at \{"max_num_seqs":8\}\)/);
  // The same condition met while filling in defaults (tune's baseline, every partial config).
  const filled = error(() => when.defaultsFor(ctx));
  assert.equal(filled.code, 'LMB_ERR_RULE_INVALID');
  assert.match(filled.message, /when\.yaml:4: knobs\.max_num_batched_tokens\.when: division by zero/);
  const none = loadSpace(file('no-default.yaml', 'version: 1\nknobs:\n  max_num_seqs: { type: int, low: 8, high: 64, grid: [8, 64] }\n'));
  assert.match(error(() => none.defaultsFor(ctx)).message, /no-default\.yaml:3: knobs\.max_num_seqs\.default: the knob has no default/);
  const div = loadSpace(file('default-div.yaml', "version: 1\nknobs:\n  max_num_seqs: { type: int, low: 8, high: 64, grid: [8, 64], default: { expr: '64 / (hardware.gpus - 1)' } }\n"));
  const d = error(() => div.defaultsFor(ctx));
  assert.equal(d.code, 'LMB_ERR_RULE_INVALID');
  assert.match(d.message, /default-div\.yaml:3: knobs\.max_num_seqs\.default: division by zero/);
  const str = loadSpace(file('default-str.yaml', "version: 1\nknobs:\n  max_num_seqs: { type: int, low: 8, high: 64, grid: [8, 64], default: { expr: '\"lots\"' } }\n"));
  assert.match(error(() => str.defaultsFor(ctx)).message, /default-str\.yaml:3: knobs\.max_num_seqs\.default: "lots" yields "lots", not an integer/);
});

test('a rule message showing a field nothing has is refused at load (it printed as written)', () => {
  const e = error(() => loadSpace(file('msg.yaml', "version: 1\nknobs:\n  max_num_seqs: { type: int, low: 8, high: 64, grid: [8, 64], default: 8 }\nrules:\n  - id: R1\n    require: config.max_num_seqs > 8\n    message: 'seqs {config.max_num_seq} of {memory.kv_tokens}'\n    source: test\n")));
  assert.equal(e.code, 'LMB_ERR_RULE_INVALID');
  assert.match(e.message, /msg\.yaml:6: rule R1: its message shows \{config\.max_num_seq\}, which is not a knob of this space/);
  assert.doesNotThrow(() => loadSpace(VLLM_SPACE), 'the shipped messages name known fields');
});

test('a grid whose symbol yields no value in this context is refused naming the knob and the symbol', () => {
  const s = loadSpace(file('empty-grid.yaml', "version: 1\nsymbols:\n  few: { expr: '[128, 256].filter(n, n <= hardware.gpus)' }\nknobs:\n  max_num_seqs: { type: int, low: 8, high: 1024, grid: [few], default: 8 }\n"));
  const e = error(() => s.bind(ctxOf('H100-SXM', 2, 'llama-3.1-8b')));
  assert.equal(e.code, 'LMB_ERR_SPACE_INVALID');
  assert.match(e.message, /empty-grid\.yaml:5: knobs\.max_num_seqs\.grid: no value in this context \(symbol few yields \[\]\)/);
});

test('lm-bench space on rules that leave nothing prints the table, then LMB_ERR_SPACE_EMPTY naming the rules and counts', async () => {
  const f = file('none.yaml', `version: 1\nextends: ${VLLM_SPACE}\nrules:\n  - id: org.huge-batches\n    kind: policy\n    require: config.max_num_seqs > 2048\n    message: 'we only run huge batches'\n    source: test\n`);
  const t = captureIo();
  const code = await main(['space', '--space', f, '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'data/workloads/chat.yaml'], t);
  assert.equal(code, 2);
  assert.match(t.out(), /^after\s+0\s+0\.0$/m);
  assert.match(t.err(), /LMB_ERR_SPACE_EMPTY: nothing is left of the 62,208,000 configurations of vllm for llama-3\.1-8b on 1× H100-SXM, workload chat: C1 removed 58,320,000, .*org\.huge-batches removed 2,534,400; the last rule, org\.huge-batches, says: we only run huge batches/);
});
