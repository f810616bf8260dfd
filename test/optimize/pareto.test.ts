import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRng, type Rng } from '../../src/util/rng.js';
import { crowdingDistance, dominates, nonDominatedSort, paretoFront } from '../../src/optimize/pareto.js';
import {
  hvImprovement2d,
  hypervolume,
  hypervolumeMonteCarlo,
  prepareFront2d,
} from '../../src/optimize/hypervolume.js';

function randomInts(rng: Rng, n: number, m: number, max: number): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: m }, () => rng.int(max)));
}

/** Brute force on an integer grid: count unit cells [c, c+1)^m that some point dominates. */
function bruteHv(points: number[][], ref: number[]): number {
  const m = ref.length;
  let count = 0;
  const cell = new Array<number>(m).fill(0);
  const total = ref.reduce((a, r) => a * r, 1);
  for (let idx = 0; idx < total; idx++) {
    let rest = idx;
    for (let k = 0; k < m; k++) {
      cell[k] = rest % (ref[k] ?? 1);
      rest = Math.floor(rest / (ref[k] ?? 1));
    }
    if (points.some((p) => p.every((v, k) => v <= (cell[k] ?? 0)))) count++;
  }
  return count;
}

test('dominates is strict in at least one objective', () => {
  assert.equal(dominates([1, 2], [1, 3]), true);
  assert.equal(dominates([1, 2], [1, 2]), false);
  assert.equal(dominates([0, 3], [1, 2]), false);
});

test('non-dominated sort agrees with brute force on random sets', () => {
  const rng = createRng(7);
  for (let trial = 0; trial < 40; trial++) {
    const pts = randomInts(rng, 1 + rng.int(30), 2 + rng.int(3), 6);
    const fronts = nonDominatedSort(pts);
    assert.equal(fronts.flat().length, pts.length);
    assert.deepEqual([...(fronts[0] ?? [])].sort((a, b) => a - b), paretoFront(pts));
    fronts.forEach((front, k) => {
      const rest = fronts.slice(k).flat();
      for (const i of front) {
        assert.ok(!rest.some((j) => dominates(pts[j] ?? [], pts[i] ?? [])), 'a front member is dominated by a later one');
        if (k > 0) assert.ok((fronts[k - 1] ?? []).some((j) => dominates(pts[j] ?? [], pts[i] ?? [])));
      }
    });
  }
});

test('crowding distance: boundaries infinite, interior ordered by gaps', () => {
  const d = crowdingDistance([[0, 4], [1, 3], [3, 1], [4, 0]]);
  assert.equal(d[0], Number.POSITIVE_INFINITY);
  assert.equal(d[3], Number.POSITIVE_INFINITY);
  assert.ok(Math.abs((d[1] ?? 0) - 1.5) < 1e-12);
  assert.ok(Math.abs((d[2] ?? 0) - 1.5) < 1e-12);
});

test('exact 2-D and 3-D hypervolume equal the brute-force cell count', () => {
  const rng = createRng(11);
  for (let trial = 0; trial < 60; trial++) {
    const m = 2 + (trial % 2);
    const ref = new Array<number>(m).fill(8);
    const pts = randomInts(rng, 1 + rng.int(15), m, 10); // some outside the reference on purpose
    assert.equal(hypervolume(pts, ref), bruteHv(pts.filter((p) => p.every((v) => v < 8)), ref));
  }
});

test('Monte-Carlo hypervolume (4-D) is within 3% of brute force and replays from its seed', () => {
  const rng = createRng(3);
  const pts = randomInts(rng, 12, 4, 6);
  const ref = [6, 6, 6, 6];
  const exact = bruteHv(pts, ref);
  const a = hypervolume(pts, ref, { rng: createRng(5), samples: 200_000 });
  const b = hypervolume(pts, ref, { rng: createRng(5), samples: 200_000 });
  assert.equal(a, b);
  assert.ok(Math.abs(a - exact) / exact < 0.03, `${a} vs ${exact}`);
  assert.throws(() => hypervolume(pts, ref), /Monte-Carlo/);
  assert.equal(hypervolumeMonteCarlo([], ref, createRng(1)), 0);
});

test('2-D improvement of one point equals HV(front ∪ p) − HV(front)', () => {
  const rng = createRng(21);
  for (let trial = 0; trial < 300; trial++) {
    const ref = [10, 10];
    const pts = Array.from({ length: rng.int(12) }, () => [rng.next() * 12, rng.next() * 12]);
    const p = [rng.next() * 11, rng.next() * 11];
    const expected = hypervolume([...pts, p], ref) - hypervolume(pts, ref);
    const got = hvImprovement2d(prepareFront2d(pts, ref), p[0] ?? 0, p[1] ?? 0);
    assert.ok(Math.abs(got - expected) < 1e-9, `trial ${trial}: ${got} vs ${expected}`);
  }
});
