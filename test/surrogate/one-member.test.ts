import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRng } from '../../src/util/rng.js';
import { summarizeDraws } from '../../src/surrogate/ensemble.js';
import { SIMULATOR_LOG_SD } from '../../src/surrogate/prior.js';
import { deserializeSurrogate, fitSurrogate, predictSurrogate, serializeSurrogate } from '../../src/surrogate/surrogate.js';
import { toFeatureMatrix } from '../../src/surrogate/tree-eval.js';
import { crossValidate } from '../../src/surrogate/validate.js';
import { makeRows, names, TOY_SPEC } from './fixtures.js';

// `surrogate train --members 1`: one tree per target has no spread, so its intervals were zero-width
// ([7888, 7888] tok/s) and P(meets the SLOs) 0 or 100%. Its draws now spread by the simulator's error.
const ONE = { ...TOY_SPEC, members: 1 };

test('a one-member surrogate predicts spread draws, not a zero-width interval', async () => {
  const { rows } = makeRows(60, 1);
  const started = rows.filter((r) => r.started);
  const s = await fitSurrogate(rows, names, ONE, createRng(2));
  const x = toFeatureMatrix(started.map((r) => r.x));
  const base = { output_throughput_per_gpu: Float64Array.from(started, (r) => r.baselines.output_throughput_per_gpu) };
  const p = predictSurrogate(s, x, base);
  assert.ok(p.draws > 1, `draws ${p.draws}`);
  const d = p.targets.output_throughput_per_gpu;
  assert.ok(d !== undefined);
  assert.equal(d.length, started.length * p.draws);
  const { std } = summarizeDraws(d.map((v) => Math.log(v)), p.draws);
  for (const sd of std) assert.ok(Math.abs(sd - SIMULATOR_LOG_SD.output_throughput_per_gpu) < 1e-9, `σ ${sd}`);

  // Saved and loaded, and a blob saved with `members: 1` before this reading, predict the same draws.
  const again = predictSurrogate(deserializeSurrogate(serializeSurrogate(s)), x, base);
  assert.deepEqual(Array.from(again.targets.output_throughput_per_gpu ?? []), Array.from(d));
  const old = JSON.parse(new TextDecoder().decode(serializeSurrogate(s))) as Record<string, unknown>;
  const legacy = deserializeSurrogate(new TextEncoder().encode(JSON.stringify({ ...old, members: 1 })));
  assert.deepEqual(Array.from(predictSurrogate(legacy, x, base).targets.output_throughput_per_gpu ?? []), Array.from(d));
});

test('k-fold validation of a one-member surrogate covers its held-out runs with a finite interval scale', async () => {
  const { rows } = makeRows(60, 3);
  const v = await crossValidate(rows, names, ONE, { folds: 3, rng: createRng(4) });
  const score = v.targets.output_throughput_per_gpu;
  assert.ok(score !== undefined);
  assert.ok(score.coverage >= 0.9, `coverage ${score.coverage}`);
  const scale = v.interval_scale.output_throughput_per_gpu ?? Number.NaN;
  assert.ok(scale >= 1 && scale < 50, `scale ${scale}`);
  for (const h of v.held_out) assert.ok(h.high > h.low, JSON.stringify(h));
});
