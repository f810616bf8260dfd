import { test } from 'node:test';
import assert from 'node:assert/strict';
import { priorSurrogate } from '../../src/surrogate/prior.js';
import type { TrainingRow } from '../../src/surrogate/surrogate.js';
import { crossValidate, type FitFn } from '../../src/surrogate/validate.js';
import { DEFAULT_SURROGATE_SPEC } from '../../src/surrogate/surrogate.js';
import { createRng } from '../../src/util/rng.js';
import { encoder, makeRows } from './fixtures.js';
import { featureNames } from '../../src/surrogate/features.js';

/**
 * k-fold validation must not score a fold on a configuration its training part has already seen: a
 * history that measured a configuration twice (a study re-measuring it, the same benchmark run again)
 * would otherwise report the run-to-run noise as the model's error.
 */
test('crossValidate keeps repeats of one configuration in the same fold', async () => {
  const { rows: distinct } = makeRows(12, 5);
  // Every configuration measured three times, each repeat with its own (noisy) figures.
  const rows: TrainingRow[] = distinct.flatMap((r) => [0, 1, 2].map((k) => ({ ...r, targets: Object.fromEntries(Object.entries(r.targets).map(([t, v]) => [t, v * (1 + 0.01 * k)])) })));
  const trains: (readonly TrainingRow[])[] = [];
  // A cheap fit (the simulator prior) that records what each fold trained on.
  const fit: FitFn = (train, names) => {
    trains.push(train);
    return Promise.resolve(priorSurrogate(train, names));
  };
  for (const seed of [1, 2, 3]) {
    trains.length = 0;
    const report = await crossValidate(rows, featureNames(encoder), DEFAULT_SURROGATE_SPEC, { folds: 4, rng: createRng(seed), fit });
    assert.equal(report.folds, 4);
    assert.equal(trains.length, 4);
    for (const train of trains) {
      const seen = new Set(train.map((r) => r.x.join(',')));
      const heldOut = rows.filter((r) => !train.includes(r));
      assert.ok(heldOut.length > 0);
      for (const r of heldOut) assert.ok(!seen.has(r.x.join(',')), `seed ${seed}: a held-out configuration was also trained on`);
    }
  }
});

test('crossValidate of a history of one configuration fits nothing on an empty training part', async () => {
  const { rows: one } = makeRows(1, 5);
  const rows = Array.from({ length: 9 }, () => one[0] as TrainingRow);
  let fits = 0;
  const fit: FitFn = (train, names) => {
    fits++;
    assert.ok(train.length > 0, 'no fold trains on nothing');
    return Promise.resolve(priorSurrogate(train, names));
  };
  const report = await crossValidate(rows, featureNames(encoder), DEFAULT_SURROGATE_SPEC, { folds: 3, rng: createRng(1), fit });
  assert.equal(report.rows, 9);
  assert.equal(fits, 0, 'no configuration can be held out');
  assert.deepEqual(report.targets, {});
});
