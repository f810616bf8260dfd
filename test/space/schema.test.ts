import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLmBenchError } from '../../src/errors.js';
import { loadSpace } from '../../src/space/index.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ctxOf, fixture, VLLM_SPACE } from './helpers.js';

test('the shipped space loads: 14 knobs with flags, 18 rules C1–C14 and C16–C19, each with message and source', () => {
  const s = loadSpace(VLLM_SPACE);
  assert.equal(s.knobs.length, 14);
  assert.deepEqual(
    s.rules.map((r) => r.id),
    ['C1', 'C2', 'C3', 'C4', 'C17', 'C18', 'C19', 'C5', 'C6', 'C7', 'C8', 'C9', 'C10', 'C11', 'C12', 'C13', 'C14', 'C16'],
  );
  for (const r of s.rules) {
    assert.ok(r.message.length > 0 && r.source.length > 0, r.id);
    assert.ok(r.line !== null && r.line > 1, `${r.id} has a line`);
  }
  assert.equal(s.knobs.find((k) => k.name === 'max_num_seqs')?.flag, '--max-num-seqs');
  assert.equal(s.knobs.find((k) => k.name === 'max_cudagraph_capture_size')?.when, '!config.enforce_eager');
  assert.deepEqual(s.rules.find((r) => r.id === 'C6')?.reads, ['max_num_seqs', 'max_num_batched_tokens']);
  assert.deepEqual(s.rules.find((r) => r.id === 'C14')?.reads.includes('gpu_memory_utilization'), true);
});

test('a typo in a field is LMB_ERR_SPACE_INVALID naming file, line and field', () => {
  assert.throws(
    () => loadSpace(fixture('bad-typo.yaml')),
    (e) => {
      assert.ok(isLmBenchError(e, 'LMB_ERR_SPACE_INVALID'));
      assert.match(e.message, /bad-typo\.yaml:6: knobs\.max_num_seqs: unknown field\(s\) "hihg"/);
      return true;
    },
  );
});

test('a knob that is no vLLM engine argument lm-bench passes is refused at its line', () => {
  assert.throws(
    () => loadSpace(fixture('bad-unknown-knob.yaml')),
    (e) => isLmBenchError(e, 'LMB_ERR_SPACE_INVALID') && /bad-unknown-knob\.yaml:4: knobs\.swap_space: "swap_space" is not/.test(e.message),
  );
});

test('rule compile errors are LMB_ERR_RULE_INVALID naming the rule id and its line', () => {
  const cases: [string, RegExp][] = [
    ['bad-rule.yaml', /bad-rule\.yaml:10: rule broken: /],
    ['bad-knob-ref.yaml', /bad-knob-ref\.yaml:6: rule typo: reads config\.max_num_seq, which is not a knob/],
    ['bad-type.yaml', /bad-type\.yaml:6: rule not-bool: must yield a bool, yields int/],
  ];
  for (const [file, re] of cases) {
    assert.throws(
      () => loadSpace(fixture(file)),
      (e) => {
        assert.ok(isLmBenchError(e, 'LMB_ERR_RULE_INVALID'), file);
        assert.match(e.message, re);
        return true;
      },
    );
  }
});

test('a missing file is LMB_ERR_FILE_NOT_FOUND', () => {
  assert.throws(() => loadSpace(fixture('nope.yaml')), (e) => isLmBenchError(e, 'LMB_ERR_FILE_NOT_FOUND'));
});

test('conditions may read only earlier knobs, defaults and conditions may not call the memory model, rules fail loudly at run time', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-space-'));
  const write = (name: string, text: string): string => {
    const f = join(dir, name);
    writeFileSync(f, text);
    return f;
  };
  try {
    const later = write('later.yaml', "version: 1\nknobs:\n  max_cudagraph_capture_size: { type: int, low: 128, high: 512, log: true, when: '!config.enforce_eager', default: 256 }\n  enforce_eager: { type: bool, default: false }\n");
    assert.throws(() => loadSpace(later), (e) => isLmBenchError(e, 'LMB_ERR_RULE_INVALID') && /knobs\.max_cudagraph_capture_size\.when: reads config\.enforce_eager/.test(e.message));
    const mem = write('mem.yaml', "version: 1\nknobs:\n  max_num_seqs: { type: int, low: 8, high: 64, log: true, default: { expr: 'kv_cache_tokens(config) > 0 ? 8 : 16' } }\n");
    assert.throws(() => loadSpace(mem), (e) => isLmBenchError(e, 'LMB_ERR_RULE_INVALID') && /may be called in rules only/.test(e.message));
    const unguarded = write(
      'unguarded.yaml',
      "version: 1\nknobs:\n  enforce_eager: { type: bool, default: false }\n  max_cudagraph_capture_size: { type: int, low: 128, high: 512, log: true, when: '!config.enforce_eager', default: 256 }\nrules:\n  - id: cg\n    require: config.max_cudagraph_capture_size <= 256\n    message: m\n    source: s\n",
    );
    const s = loadSpace(unguarded);
    const ctx = ctxOf('H100-SXM', 1, 'llama-3.1-8b');
    assert.equal(s.isFeasible({ enforce_eager: false, max_cudagraph_capture_size: 512 }, ctx).rule, 'cg');
    assert.throws(() => s.isFeasible({ enforce_eager: true }, ctx), (e) => isLmBenchError(e, 'LMB_ERR_RULE_INVALID') && /rule cg: .*has\(config\.x\)/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
