import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadYamlFile, parseYaml, readUserFile } from '../../src/util/yaml.js';
import { isLmBenchError } from '../../src/errors.js';
import { Workload } from '../../src/domain/index.js';

const S = z.strictObject({ a: z.int(), nested: z.strictObject({ b: z.string() }) });

test('schema errors name the file, the line and the field, all at once', () => {
  const text = 'a: 1.5\nnested:\n  b: 3\n  typo: x\n';
  assert.throws(
    () => parseYaml(text, S, { file: 'x.yaml' }),
    (e) => {
      assert.ok(isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID'));
      assert.match(e.message, /x\.yaml:1: a: /);
      assert.match(e.message, /x\.yaml:3: nested\.b: /);
      assert.match(e.message, /unknown field\(s\) "typo"/);
      return true;
    },
  );
});

test('YAML syntax errors and duplicate keys are reported with a line', () => {
  assert.throws(() => parseYaml('a: 1\na: 2\n', S, { file: 'd.yaml' }), (e) => isLmBenchError(e) && /d\.yaml:2/.test(e.message));
  assert.throws(() => parseYaml('a: [1, 2\n', S, { file: 's.yaml' }), (e) => isLmBenchError(e) && /s\.yaml:\d/.test(e.message));
});

test('a merge key (<<: *anchor) brings the anchored fields in, and the entry\'s own fields win', () => {
  const L = z.strictObject({ items: z.array(z.strictObject({ a: z.int(), b: z.string() })) });
  const text = 'items:\n  - &base\n    a: 1\n    b: one\n  - <<: *base\n    b: two\n';
  assert.deepEqual(parseYaml(text, L, { file: 'm.yaml' }), { items: [{ a: 1, b: 'one' }, { a: 1, b: 'two' }] });
});

test('the shipped workloads parse, and a min above max is caught at its line', () => {
  const bad = 'name: w\ninput_len: { dist: uniform, min: 10, max: 5 }\noutput_len: { dist: fixed, value: 3 }\narrival: { kind: closed, concurrency: 1 }\nnum_prompts: 3\n';
  assert.throws(() => parseYaml(bad, Workload, { file: 'w.yaml' }), (e) => isLmBenchError(e) && /w\.yaml:2: input_len\.max: max \(5\) is below min \(10\)/.test(e.message));
});

test('a file that is not there, or is a folder, is LMB_ERR_FILE_NOT_FOUND saying which and what', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-yaml-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const gone = join(dir, 'nope.yaml');
  assert.throws(() => loadYamlFile(gone, Workload), (e: unknown) => isLmBenchError(e, 'LMB_ERR_FILE_NOT_FOUND') && (e as Error).message === `file ${gone} does not exist`);
  assert.throws(() => readUserFile(dir, 'run config'), (e: unknown) => isLmBenchError(e, 'LMB_ERR_FILE_NOT_FOUND') && (e as Error).message === `run config ${dir} is a directory, not a file`);
});
