import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';
import { captureIo, type CapturedIo } from '../helpers/cli.js';

const io = (): CapturedIo => captureIo();

// One GPU keeps the prune short; the shipped example (8×H100) is the same code path.
const args = ['space', '--space', 'search-spaces/vllm.yaml', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'data/workloads/chat.yaml'];

test('lm-bench space --json prints one report: before, per-rule removals (first-match), after', async () => {
  const t = io();
  const code = await main([...args, '--json'], t);
  assert.equal(code, 0, t.err());
  const r = JSON.parse(t.out()) as { attribution: string; method: string; points_before: number; points_after: number; rules: { id: string; removed: number }[]; knobs: unknown[] };
  assert.equal(r.attribution, 'first-match');
  assert.equal(r.method, 'exact', 'the shipped space is counted point by point');
  assert.equal(r.points_before, 62_208_000);
  assert.equal(r.points_before, r.points_after + r.rules.reduce((a, x) => a + x.removed, 0));
  assert.equal(r.rules.length, 18);
  assert.equal(r.knobs.length, 14);
});

test('lm-bench space prints a table on a terminal', async () => {
  const t = io();
  assert.equal(await main(args, t), 0, t.err());
  assert.match(t.out(), /^rule\s+kind\s+removed\s+%\s+source$/m);
  assert.match(t.out(), /^C1\s+static\s+58,320,000\s+93\.8/m);
  assert.match(t.out(), /^after\s+[\d,]+/m);
});

test('bad input exits 2 with the error code', async () => {
  const t = io();
  assert.equal(await main(['space', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'nope', '--workload', 'data/workloads/chat.yaml'], t), 2);
  assert.match(t.err(), /LMB_ERR_UNKNOWN_MODEL/);
  const u = io();
  assert.equal(await main(['space', '--space', 'test/fixtures/space/bad-rule.yaml', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'data/workloads/chat.yaml'], u), 2);
  assert.match(u.err(), /LMB_ERR_RULE_INVALID.*rule broken/);
});
