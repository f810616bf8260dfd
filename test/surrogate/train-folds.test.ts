import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRng } from '../../src/util/rng.js';
import { foldFitOf } from '../../src/surrogate/train.js';
import { crossValidate } from '../../src/surrogate/validate.js';
import { makeRows, names, TOY_SPEC } from './fixtures.js';

// `surrogate train` on 10 runs with 3 folds: each fold trains on 6 or 7, below the 8 a fit needs. Those
// folds were scored by the simulator prior and printed as the surrogate's error (importance 0.0 pp for
// every knob: the prior reads no knob column), and the prior's interval scale was saved with the trees.

test('a fold short of minRows trains its trees on the rows it has, not the simulator prior', async () => {
  const rows = makeRows(40, 5).rows.filter((r) => r.started).slice(0, 6);
  const s = await foldFitOf()(rows, names, TOY_SPEC, createRng(1));
  assert.equal(s.prior, undefined, 'not the prior surrogate');
  assert.ok(s.targets.output_throughput_per_gpu !== undefined, 'a tree ensemble per target');
});

test('k-fold validation of a history just past minRows reports the trees: max_num_seqs matters', async () => {
  const rows = makeRows(40, 5).rows.filter((r) => r.started).slice(0, 10);
  const v = await crossValidate(rows, names, TOY_SPEC, { folds: 3, rng: createRng(2), fit: foldFitOf() });
  assert.equal(v.targets.output_throughput_per_gpu?.n, 10);
  assert.ok((v.importance['max_num_seqs'] ?? 0) > 0, JSON.stringify(v.importance));
});
