import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { loadSpace } from '../../src/space/index.js';
import { estimateCounts, pruneCountsOrEstimate } from '../../src/space/prune.js';
import { createRng } from '../../src/util/rng.js';
import { captureIo } from '../helpers/cli.js';
import { ctxOf, fixture, VLLM_SPACE } from './helpers.js';

test('the estimate agrees with the exact first-match count, conditional knobs weighted by their options', () => {
  // small.yaml's R3 reads the conditional capture size: an unweighted draw would over-count eager points.
  for (const [file, ctx] of [[fixture('small.yaml'), ctxOf('H100-SXM', 2, 'llama-3.1-8b')], [VLLM_SPACE, ctxOf('H100-SXM', 1, 'llama-3.1-8b')]] as const) {
    const s = loadSpace(file);
    const exact = s.prune(ctx);
    assert.equal(exact.method, 'exact');
    const est = estimateCounts(s.bind(ctx), 20_000, createRng(4));
    assert.equal(est.method, 'estimate');
    assert.equal(est.pointsBefore, exact.points_before, 'the point count stays exact');
    assert.equal(est.pointsBefore, est.pointsAfter + est.rules.reduce((a, r) => a + r.removed, 0));
    for (const [i, r] of exact.rules.entries()) {
      const share = (n: number): number => n / exact.points_before;
      // 20,000 draws: a share's standard error is at most 0.0035.
      assert.ok(Math.abs(share(est.rules[i]?.removed ?? 0) - share(r.removed)) < 0.015, `${r.id}: ${est.rules[i]?.removed ?? 0} estimated, ${r.removed} exact`);
    }
  }
});

test('a walk past its budget gives way to the estimate, naming the rule and the knobs that make it costly', () => {
  const s = loadSpace(fixture('small.yaml'));
  const b = s.bind(ctxOf('H100-SXM', 2, 'llama-3.1-8b'));
  const r = pruneCountsOrEstimate(b, createRng(1), { evaluations: 3, steps: 1_000 });
  assert.equal(r.method, 'estimate');
  assert.equal(r.samples, 20_000);
  assert.ok(r.costliest !== null);
  assert.equal(r.costliest.combinations, Math.max(...b.tables.map((t) => t.reads.reduce((a, p) => a * (b.options[p]?.length ?? 1), 1))));
  assert.deepEqual(r.costliest.knobs.map((k) => k.points), [...r.costliest.knobs.map((k) => k.points)].sort((x, y) => y - x), 'largest grid first');
  assert.equal(pruneCountsOrEstimate(b, createRng(1)).method, 'exact', 'within the default budget it counts');
});

// A user's copy of the shipped space with fine steps instead of grids: 5×10^16 points, and rule C13
// reads knobs whose grids multiply to 3×10^14 combinations. `lm-bench space` never finished on it.
const dir = mkdtempSync(join(tmpdir(), 'lmb-prune-estimate-'));
let fine = readFileSync(VLLM_SPACE, 'utf8');
for (const [from, to] of [
  ['grid: [8, 16, 32, 64, 128, 256, 384, 512, 768, 1024]', 'step: 1'],
  ['grid: [256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]', 'step: 16'],
  ['step: 0.02', 'step: 0.001'],
  ['grid: [2048, 4096, 8192, 16384, 32768, native]', 'step: 1024'],
  ['grid: [128, 256, 512, 1024]', 'step: 8'],
] as const) {
  assert.ok(fine.includes(from), `the shipped space no longer holds ${from}`);
  fine = fine.replace(from, to);
}
const fineFile = join(dir, 'fine.yaml');
writeFileSync(fineFile, fine.replaceAll('log: true\n    step', 'log: false\n    step'));
const args = ['space', '--space', fineFile, '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'data/workloads/chat.yaml'];

// The timeout only stops a walk that would not end (the old code's); nothing here asserts a duration.
test('lm-bench space on a space of fine steps answers with estimated removals and says why', { timeout: 120_000 }, async () => {
  const t = captureIo();
  assert.equal(await main([...args, '--json'], t), 0, t.err());
  const r = JSON.parse(t.out()) as { method: string; samples: number; points_before: number; points_after: number; rules: { id: string; removed: number }[]; costliest: { rule: string; knobs: { name: string; points: number }[] } };
  assert.equal(r.method, 'estimate');
  assert.equal(r.points_before, loadSpace(fineFile).size(ctxOf('H100-SXM', 1, 'llama-3.1-8b')));
  // On one GPU C1 keeps 1 of the 16 TP × DP pairs: 15/16 of every point, known without counting.
  const c1 = r.rules.find((x) => x.id === 'C1')?.removed ?? 0;
  assert.ok(Math.abs(c1 / r.points_before - 15 / 16) < 0.01, `C1 ${c1 / r.points_before}`);
  assert.ok(r.points_after > 0);
  assert.ok(r.costliest.knobs.some((k) => k.name === 'max_num_batched_tokens' && k.points === 4081));
  const text = captureIo();
  assert.equal(await main(args, text), 0, text.err());
  assert.match(text.out(), /Removals are ESTIMATED from 20,000 configurations .* rule C1[0-9]'s [\d.]+e\+\d+ combinations of its knobs \(max_num_batched_tokens 4,081 × max_num_seqs 1,017/);
});
