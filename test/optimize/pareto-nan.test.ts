import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dominates, paretoFront } from '../../src/optimize/pareto.js';
import { hypervolume } from '../../src/optimize/hypervolume.js';

// A configuration whose runs lack a figure (an energy axis where no power was measured: the report's
// J/token of such a run is NaN) was on the front and knocked the real points off it: [NaN, 100]
// "dominated" [-5, 200] on the second objective alone, since no comparison with NaN says it is worse.

test('a point with a NaN figure dominates nothing, is dominated by nothing, and is on no front', () => {
  assert.equal(dominates([Number.NaN, 100], [-5, 200]), false);
  assert.equal(dominates([-5, 200], [Number.NaN, 300]), false);
  const points = [[Number.NaN, 100], [-5, 200], [-3, 300], [-6, 250]];
  assert.deepEqual(paretoFront(points), [1, 3]);
  assert.deepEqual(paretoFront([[Number.NaN, Number.NaN]]), []);
});

test('one-objective hypervolume ignores a NaN point instead of returning NaN', () => {
  assert.equal(hypervolume([[-100], [Number.NaN]], [0]), 100);
  assert.equal(hypervolume([[Number.NaN]], [0]), 0);
});
