import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constrainedEhvi, logMeanSd, probabilityMeetsSlo, probabilityMeetsSloWidened, selectBatch, type CandidatePredictions } from '../../src/optimize/acquisition.js';
import { normalCdf } from '../../src/util/normal.js';
import { meetsConstraints, objectiveVector, referencePoint, sloConstraints } from '../../src/optimize/objectives.js';
import type { Objective } from '../../src/domain/index.js';

const objectives: Objective[] = [
  { name: 'output_throughput_per_gpu', direction: 'maximize' },
  { name: 'ttft_p99_ms', direction: 'minimize' },
];
const constraints = sloConstraints({ ttft_p99_ms: 300 });

/** Candidates as (throughput, ttft) per draw. */
function preds(cands: [number, number][][], pStart?: number[]): CandidatePredictions {
  const draws = cands[0]?.length ?? 0;
  const tput = new Float64Array(cands.length * draws);
  const ttft = new Float64Array(cands.length * draws);
  cands.forEach((ds, i) =>
    ds.forEach(([a, b], s) => {
      tput[i * draws + s] = a;
      ttft[i * draws + s] = b;
    }),
  );
  return {
    count: cands.length,
    draws,
    targets: { output_throughput_per_gpu: tput, ttft_p99_ms: ttft },
    pStart: Float64Array.from(pStart ?? cands.map(() => 1)),
  };
}

test('SLO constraints map p90 to p99 and mean to p50; the reference point uses SLO limits', () => {
  const cs = sloConstraints({ ttft_p90_ms: 200, itl_mean_ms: 30 });
  assert.deepEqual(cs.map((c) => c.target), ['ttft_p99_ms', 'itl_p50_ms']);
  assert.equal(meetsConstraints({ ttft_p99_ms: 199, itl_p50_ms: 30 }, cs), true);
  assert.equal(meetsConstraints({ ttft_p99_ms: 201, itl_p50_ms: 30 }, cs), false);
  assert.deepEqual(objectiveVector({ output_throughput_per_gpu: 10, ttft_p99_ms: 5 }, objectives), [-10, 5]);
  assert.deepEqual(referencePoint(objectives, constraints, []), [0, 300]);
});

test('EHVI counts only draws that meet the SLO and scales by P(start)', () => {
  const p = preds(
    [
      [[100, 100], [100, 100]], // sure improvement
      [[100, 100], [100, 400]], // half the draws break the SLO
      [[100, 100], [100, 100]], // same as 0 but P(start) = 0.5
      [[1000, 400], [1000, 500]], // huge throughput, never meets the SLO
    ],
    [1, 1, 0.5, 1],
  );
  const ctx = { objectives, constraints, front: [[-50, 200]], ref: [0, 300] };
  const e = constrainedEhvi(p, ctx);
  assert.ok((e[0] ?? 0) > 0);
  assert.ok(Math.abs((e[1] ?? 0) - (e[0] ?? 0) / 2) < 1e-9);
  assert.ok(Math.abs((e[2] ?? 0) - (e[0] ?? 0) / 2) < 1e-9);
  assert.equal(e[3], 0);
  assert.deepEqual(Array.from(probabilityMeetsSlo(p, constraints)), [1, 0.5, 1, 0]);
});

test('P(keeps up with the load) weighs P(meets SLO) and EHVI where there are SLOs or a latency objective, not throughput alone', () => {
  const base = preds([[[100, 100], [100, 100]], [[100, 100], [100, 400]], [[100, 100], [100, 100]]]);
  const p: CandidatePredictions = { ...base, pSustain: Float64Array.from([1, 1, 0.25]) };
  assert.deepEqual(Array.from(probabilityMeetsSlo(p, constraints)), [1, 0.5, 0.25]);
  assert.deepEqual(Array.from(probabilityMeetsSlo(p, [])), [1, 1, 1]);
  const ctx = { objectives, constraints, front: [[-50, 200]], ref: [0, 300] };
  const e = constrainedEhvi(p, ctx);
  assert.ok((e[0] ?? 0) > 0);
  assert.ok(Math.abs((e[2] ?? 0) - (e[0] ?? 0) / 4) < 1e-9);
  // Predictions without the classifier (the simulator prior, older saved models) keep up.
  assert.deepEqual(Array.from(probabilityMeetsSlo(base, constraints)), [1, 0.5, 1]);
  // Without SLOs it still weighs an objective on the queue's figures (p99 TTFT), and not throughput alone.
  const loose = { objectives, constraints: [], front: [[-50, 200]], ref: [0, 300] };
  const free = constrainedEhvi(p, loose);
  assert.ok(Math.abs((free[2] ?? 0) - (free[0] ?? 0) / 4) < 1e-9);
  const tputOnly = { objectives: [objectives[0] as Objective], constraints: [], front: [[-50]], ref: [0] };
  const t = constrainedEhvi(p, tputOnly);
  assert.ok((t[0] ?? 0) > 0 && Math.abs((t[2] ?? 0) - (t[0] ?? 0)) < 1e-9);
});

test('a batch of q picks distinct, spread-out candidates (believer step)', () => {
  // 30 candidates: many near-duplicates of the best point plus a few elsewhere on the trade-off.
  const cands: [number, number][][] = [];
  const encoded: number[] = [];
  for (let i = 0; i < 20; i++) {
    cands.push([[200 + i * 0.01, 150], [200 + i * 0.01, 150]]);
    encoded.push(5, 5 + i * 0.001);
  }
  for (let i = 0; i < 10; i++) {
    cands.push([[60 + i * 12, 20 + i * 10], [60 + i * 12, 20 + i * 10]]);
    encoded.push(i, 0);
  }
  const picks = selectBatch(
    preds(cands),
    { objectives, constraints, front: [], ref: [0, 300] },
    { q: 4, poolSize: 30, encoded: Float32Array.from(encoded), dims: 2, minDistance: 0.5 },
  );
  assert.equal(picks.length, 4);
  assert.equal(new Set(picks.map((p) => p.index)).size, 4);
  assert.equal(picks.filter((p) => p.index < 20).length, 1, 'only one of the near-duplicates');
  assert.ok(picks.every((p) => !p.fallback));
});

test('with no expected improvement anywhere the batch falls back to feasibility', () => {
  const p = preds([[[10, 500]], [[10, 900]]], [0.9, 0.2]);
  const picks = selectBatch(p, { objectives, constraints, front: [], ref: [0, 300] }, { q: 1, poolSize: 2, encoded: new Float32Array([0, 1]), dims: 1, minDistance: 0.1 });
  assert.equal(picks[0]?.fallback, true);
  assert.equal(picks[0]?.index, 0);
});

test('with no expected improvement anywhere the fallback never picks a candidate that cannot start while one can', () => {
  // Every draw breaks the 300 ms SLO, so EHVI and P(meets SLO) are 0 everywhere. The first candidates
  // (the ones an all-zero ranking reaches first, and the whole EHVI pool) cannot start.
  const cands: [number, number][][] = [[[500, 900]], [[500, 900]], [[400, 800]], [[300, 700]], [[200, 600]]];
  const p = preds(cands, [0, 0, 0.2, 0.7, 0]);
  const picks = selectBatch(p, { objectives, constraints, front: [], ref: [0, 300] }, { q: 3, poolSize: 2, encoded: Float32Array.from([0, 1, 2, 3, 4]), dims: 1, minDistance: 0.1 });
  assert.ok(picks.length > 0 && picks.every((k) => k.fallback));
  assert.ok(picks.every((k) => k.pStart > 0), `picked ${JSON.stringify(picks.map((k) => [k.index, k.pStart]))}`);
  assert.deepEqual(picks.map((k) => k.index), [3, 2], 'likelier to start first; none that cannot start fills the batch');
});

test('where no candidate is believed to start (a feasibility model fitted on failures alone), the fallback still proposes', () => {
  const p = preds([[[500, 900]], [[400, 800]]], [0, 0]);
  const picks = selectBatch(p, { objectives, constraints, front: [], ref: [0, 300] }, { q: 2, poolSize: 2, encoded: Float32Array.from([0, 1]), dims: 1, minDistance: 0.1 });
  assert.equal(picks.length, 2);
  assert.ok(picks.every((k) => k.fallback));
});

test('P(meets SLO) as an answer states it reads the same widened spread as its intervals: members all under the SLO are not a certainty', () => {
  // Three members at 200, 250 and 300 ms p99 TTFT against a 300 ms SLO: every member meets it.
  const p = preds([[[1000, 200], [1000, 250], [1000, 299]], [[1000, 250], [1000, 250], [1000, 250]], [[1000, 400], [1000, 400], [1000, 400]]]);
  assert.equal(probabilityMeetsSlo(p, constraints)[0], 1, 'the members’ own fraction');
  const widened = probabilityMeetsSloWidened(p, constraints, () => 3);
  const { mu, sd } = logMeanSd(p.targets.ttft_p99_ms as Float64Array, 0, 3);
  assert.ok(Math.abs((widened[0] ?? 0) - normalCdf((Math.log(300) - mu) / (3 * sd))) < 1e-12);
  assert.ok((widened[0] ?? 1) < 0.9, `three-fold widened spread: ${widened[0]}`);
  assert.ok((probabilityMeetsSloWidened(p, constraints, () => 1)[0] ?? 0) > (widened[0] ?? 1), 'less widening, more certain');
  // Members that agree decide by their mean alone, however wide the scale.
  assert.deepEqual([...probabilityMeetsSloWidened(p, constraints, () => 10)].slice(1), [1, 0]);
  // SLOs read from one figure are one event: ttft_p90 and ttft_p99 both read ttft_p99_ms, at the tighter limit.
  const both = sloConstraints({ ttft_p99_ms: 300, ttft_p90_ms: 400 });
  assert.equal(both.length, 2);
  assert.equal(probabilityMeetsSloWidened(p, both, () => 3)[0], widened[0]);
  // P(keeps up) weighs it as it weighs the members' fraction.
  assert.equal(probabilityMeetsSloWidened({ ...p, pSustain: Float64Array.from([0.5, 0.5, 0.5]) }, constraints, () => 1)[1], 0.5);
});
