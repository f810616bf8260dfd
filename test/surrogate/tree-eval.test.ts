import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRng } from '../../src/util/rng.js';
import { loadBooster, trainBooster } from '../../src/surrogate/xgb.js';
import { parseXgbModel, predictEnsemble, toFeatureMatrix } from '../../src/surrogate/tree-eval.js';

function data(n: number): { x: number[][]; y: number[]; yb: number[] } {
  const rng = createRng(42);
  const x: number[][] = [];
  const y: number[] = [];
  const yb: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = rng.next();
    const b = rng.next() * 100;
    const c = rng.int(4);
    x.push([a, b, c, a * b]);
    y.push(3 * a + Math.sin(b / 10) + c);
    yb.push(a + rng.next() > 1 ? 1 : 0);
  }
  return { x, y, yb };
}

test('typed-array evaluator agrees exactly with XGBoost predict (regression)', async () => {
  const { x, y } = data(300);
  const bst = await trainBooster(x, y, { rounds: 25, maxDepth: 5 });
  try {
    const model = parseXgbModel(bst.saveBytes());
    assert.equal(model.numTrees, 25);
    assert.equal(model.numFeature, 4);
    const probe = [...x.slice(0, 100), [0.5, 50, 2, 25], [-1, 1e6, 9, 0]];
    const expected = bst.predict(probe);
    const got = predictEnsemble(model, toFeatureMatrix(probe));
    probe.forEach((_, i) => assert.equal(got[i], expected[i], `row ${i}`));
  } finally {
    bst.free();
  }
});

test('classifier probabilities agree with predict within one float32 ulp', async () => {
  const { x, yb } = data(300);
  const bst = await trainBooster(x, yb, { rounds: 20, maxDepth: 4, objective: 'binary:logistic' });
  try {
    const model = parseXgbModel(bst.saveBytes());
    const expected = bst.predict(x);
    const got = predictEnsemble(model, toFeatureMatrix(x));
    x.forEach((_, i) => assert.ok(Math.abs((got[i] ?? 0) - (expected[i] ?? 0)) <= 6e-8, `row ${i}`));
  } finally {
    bst.free();
  }
});

test('a saved booster loads back and predicts the same; free() twice is harmless', async () => {
  const { x, y } = data(120);
  const bst = await trainBooster(x, y, { rounds: 10, maxDepth: 3 });
  const bytes = bst.saveBytes();
  const before = bst.predict(x.slice(0, 10));
  bst.free();
  bst.free();
  assert.equal(bst.alive, false);
  assert.throws(() => bst.predict(x), /after free/);
  const again = await loadBooster(bytes);
  try {
    assert.deepEqual(again.predict(x.slice(0, 10)), before);
  } finally {
    again.free();
  }
});

test('a truncated model is refused', () => {
  assert.throws(() => parseXgbModel(new Uint8Array(40)), /truncated/);
});
