import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectBatch, sloNearness, type CandidatePredictions } from '../../src/optimize/acquisition.js';
import { sloConstraints } from '../../src/optimize/objectives.js';
import type { Objective } from '../../src/domain/index.js';
import { createRng } from '../../src/util/rng.js';

/**
 * SLOs nothing can meet (p99 TTFT of 1 ms): no candidate has expected improvement or any chance of
 * meeting them, so every pick is the fallback's. It must move toward the best the deployment can reach
 * (nearness to the SLOs), not take candidates in their own order (the local mutations of the first
 * trials come first), and still spread a batch.
 */
const objectives: Objective[] = [
  { name: 'output_throughput_per_gpu', direction: 'maximize' },
  { name: 'ttft_p99_ms', direction: 'minimize' },
];
const unreachable = sloConstraints({ ttft_p99_ms: 1, itl_p99_ms: 1 });

/** Candidates as draws of (ttft, itl) on a shared throughput of 100. */
function preds(cands: [number, number][][], pStart?: number[], pSustain?: number[]): CandidatePredictions {
  const draws = cands[0]?.length ?? 0;
  const ttft = new Float64Array(cands.length * draws);
  const itl = new Float64Array(cands.length * draws);
  cands.forEach((ds, i) =>
    ds.forEach(([a, b], s) => {
      ttft[i * draws + s] = a;
      itl[i * draws + s] = b;
    }),
  );
  return {
    count: cands.length,
    draws,
    targets: { output_throughput_per_gpu: new Float64Array(cands.length * draws).fill(100), ttft_p99_ms: ttft, itl_p99_ms: itl },
    pStart: Float64Array.from(pStart ?? cands.map(() => 1)),
    ...(pSustain === undefined ? {} : { pSustain: Float64Array.from(pSustain) }),
  };
}

const ctx = { objectives, constraints: unreachable, front: [], ref: [0, 1] };
const opts = (n: number, q: number, minDistance = 0.1) => ({ q, poolSize: n, encoded: Float32Array.from([...Array(n).keys()]), dims: 1, minDistance });

test('nearness to SLOs out of reach is the worst SLO’s optimistic log-ratio, less for a candidate unlikely to start or keep up', () => {
  const p = preds(
    [
      [[400, 40], [400, 40]], // TTFT 400× its limit, ITL 40×: TTFT decides
      [[100, 90], [100, 90]], // 100× and 90×: nearer
      [[100, 90], [100, 90]], // as near, half as likely to start
      [[50, 200], [200, 20]], // uncertain: the optimistic side of each figure counts
    ],
    [1, 1, 0.5, 1],
  );
  const near = [0, 1, 2, 3].map((i) => sloNearness(p, unreachable, i));
  assert.ok(Math.abs((near[0] ?? 0) + Math.log(400)) < 1e-9, String(near[0]));
  assert.ok(Math.abs((near[1] ?? 0) + Math.log(100)) < 1e-9, String(near[1]));
  assert.ok(Math.abs((near[2] ?? 0) - (near[1] ?? 0) - Math.log(0.5)) < 1e-9, 'P(start) ½ costs log 2');
  assert.ok((near[3] ?? 0) > -Math.log(100), `the spread of an unsure candidate brings it nearer: ${near[3]}`);
  const kept = preds([[[100, 90], [100, 90]]], [1], [0.25]);
  assert.ok(Math.abs(sloNearness(kept, unreachable, 0) - (near[1] ?? 0) - Math.log(0.25)) < 1e-9, 'P(keeps up) counts like P(start)');
});

test('with SLOs nothing meets, the fallback picks the candidates nearest the SLOs, not the first in order', () => {
  // The first candidates (local mutations of a first trial, say) are the farthest from the SLOs.
  const p = preds([[[900, 80]], [[850, 80]], [[800, 80]], [[120, 20]], [[300, 30]], [[150, 10]]]);
  const picks = selectBatch(p, ctx, opts(6, 3));
  assert.ok(picks.every((k) => k.fallback && k.pMeetsSlo === 0));
  assert.deepEqual(picks.map((k) => k.index), [3, 5, 4]);
});

test('with nearness off (predictions from the simulator prior) the fallback keeps the candidates’ own order, P(start) first', () => {
  const p = preds([[[900, 80]], [[850, 80]], [[120, 20]], [[300, 30]]], [0.5, 1, 1, 1]);
  const picks = selectBatch(p, ctx, { ...opts(4, 3), nearness: false });
  assert.deepEqual(picks.map((k) => k.index), [1, 2, 3]);
});

test('the fallback still never picks a candidate that cannot start while one can, however near it is predicted; of those that can, the nearer first', () => {
  const p = preds([[[900, 80]], [[2, 2]], [[500, 50]]], [1, 0, 1]);
  const picks = selectBatch(p, ctx, opts(3, 3));
  assert.deepEqual(picks.map((k) => k.index), [2, 0]);
});

test('a fallback batch stays spread out: a candidate within the distance rule of a pick is skipped, however near the SLOs', () => {
  // The two nearest are near-duplicates (0 and 0.05 apart): the second pick is the next one beyond the rule.
  const p = preds([[[900, 80]], [[120, 20]], [[121, 20]], [[300, 30]], [[200, 20]]]);
  const encoded = Float32Array.from([0, 1, 1.05, 3, 4]);
  const picks = selectBatch(p, ctx, { q: 3, poolSize: 5, encoded, dims: 1, minDistance: 0.5 });
  assert.deepEqual(picks.map((k) => k.index), [1, 4, 3]);
});

test('seeded: over rounds of fallback picks, the best reached is among the nearest the deployment can reach', () => {
  // 2,000 candidates on a square; the true p99 TTFT is least (300 ms) at (0.7, 0.2) and rises away from
  // it, far past a 1 ms SLO everywhere. The ensemble's draws scatter about the truth (each candidate a
  // bias of its own, each draw noise). Four rounds of two picks each, the measured ones out of the
  // running after (as the sampler's exclusion of tried configurations does).
  const rng = createRng(20261208);
  const n = 2000;
  const xy: number[] = [];
  const truth: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = rng.next();
    const y = rng.next();
    xy.push(x, y);
    truth.push(300 * Math.exp(4 * ((x - 0.7) ** 2 + (y - 0.2) ** 2)));
  }
  const draws = 8;
  const cands = truth.map((t) => {
    const bias = 0.15 * rng.normal();
    return Array.from({ length: draws }, (): [number, number] => [t * Math.exp(bias + 0.1 * rng.normal()), 5]);
  });
  const p = preds(cands);
  const encoded = Float32Array.from(xy);
  const measured: number[] = [];
  const slo = { objectives, constraints: sloConstraints({ ttft_p99_ms: 1 }), front: [], ref: [0, 1] };
  for (let round = 0; round < 4; round++) {
    const picks = selectBatch(p, slo, { q: 2, poolSize: 400, encoded, dims: 2, minDistance: 0.05 });
    assert.equal(picks.length, 2);
    for (const k of picks) {
      assert.ok(!measured.includes(k.index), 'a measured candidate is not proposed again');
      measured.push(k.index);
      p.pStart[k.index] = 0;
    }
  }
  const best = Math.min(...measured.map((i) => truth[i] ?? Number.POSITIVE_INFINITY));
  const rank = truth.filter((t) => t < best).length;
  assert.ok(rank < n * 0.02, `the best of 8 picks ranks ${rank} of ${n} by true p99 TTFT`);
});
