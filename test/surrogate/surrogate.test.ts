import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRng } from '../../src/util/rng.js';
import { deserializeSurrogate, fitSurrogate, predictSurrogate, serializeSurrogate, type TrainingRow } from '../../src/surrogate/surrogate.js';
import type { ServerConfig } from '../../src/domain/index.js';
import { crossValidate, evaluateSurrogate, knobColumns, scoreTarget } from '../../src/surrogate/validate.js';
import { toFeatureMatrix } from '../../src/surrogate/tree-eval.js';
import { isLmBenchError } from '../../src/errors.js';
import { makeRows, names, TOY_SPEC } from './fixtures.js';

const SPEC = TOY_SPEC;

test('surrogate learns the toy world; held-out MAPE is small and the blob round-trips exactly', async () => {
  const { rows } = makeRows(160, 1);
  const train = rows.slice(0, 120);
  const test = rows.slice(120);
  const s = await fitSurrogate(train, names, SPEC, createRng(2));
  assert.deepEqual(Object.keys(s.targets).sort(), ['itl_p99_ms', 'output_throughput_per_gpu', 'ttft_p99_ms']);
  assert.equal(s.feasibility.kind, 'model');
  const scores = evaluateSurrogate(s, test);
  assert.ok((scores.output_throughput_per_gpu?.mape ?? 1) < 0.1, JSON.stringify(scores));
  assert.ok((scores.ttft_p99_ms?.mape ?? 1) < 0.15, JSON.stringify(scores));

  const again = deserializeSurrogate(serializeSurrogate(s));
  const x = toFeatureMatrix(test.map((r) => r.x));
  const base = { output_throughput_per_gpu: Float64Array.from(test, (r) => r.baselines.output_throughput_per_gpu) };
  const a = predictSurrogate(s, x, base);
  const b = predictSurrogate(again, x, base);
  assert.deepEqual(Array.from(b.targets.output_throughput_per_gpu ?? []), Array.from(a.targets.output_throughput_per_gpu ?? []));
  assert.deepEqual(Array.from(b.pStart), Array.from(a.pStart));
  // The classifier separates the start-up failures (gpu_memory_utilization > 0.94).
  const accuracy = test.filter((r, i) => ((a.pStart[i] ?? 0) >= 0.5) === r.started).length / test.length;
  assert.ok(accuracy > 0.9, `accuracy ${accuracy}`);
});

test('the sustain classifier learns which configurations cannot keep up; models saved without it keep up', async () => {
  // The toy world's small batches (max_num_seqs ≤ 16) fall behind the arrivals: no TTFT to learn from them.
  const mark = (rows: TrainingRow[], configs: readonly ServerConfig[]): TrainingRow[] =>
    rows.map((r, i) => {
      if (!r.started || (configs[i]?.max_num_seqs ?? 256) > 16) return { ...r, saturated: false };
      const { ttft_p99_ms: _t, ...rest } = r.targets;
      return { ...r, targets: rest, saturated: true };
    });
  const { rows, configs } = makeRows(200, 6);
  const all = mark(rows, configs);
  const s = await fitSurrogate(all.slice(0, 150), names, SPEC, createRng(7));
  assert.equal(s.sustain?.kind, 'model');
  const test = all.slice(150);
  const x = toFeatureMatrix(test.map((r) => r.x));
  const p = predictSurrogate(s, x, {});
  const started = test.map((r, i) => ({ r, i })).filter(({ r }) => r.started);
  assert.ok(started.some(({ r }) => r.saturated === true) && started.some(({ r }) => r.saturated !== true));
  const right = started.filter(({ r, i }) => ((p.pSustain[i] ?? 1) >= 0.5) === (r.saturated !== true)).length;
  assert.ok(right / started.length > 0.9, `accuracy ${right / started.length}`);
  // It round-trips with the blob; a blob saved before the classifier existed predicts that everything keeps up.
  const again = predictSurrogate(deserializeSurrogate(serializeSurrogate(s)), x, {});
  assert.deepEqual(Array.from(again.pSustain), Array.from(p.pSustain));
  const json = JSON.parse(new TextDecoder().decode(serializeSurrogate(s))) as Record<string, unknown>;
  delete json['sustain'];
  const older = deserializeSurrogate(new TextEncoder().encode(JSON.stringify(json)));
  assert.ok(Array.from(predictSurrogate(older, x, {}).pSustain).every((v) => v === 1));
  // k-fold validation scores it; a history where every run kept up has nothing to score.
  const report = await crossValidate(all, names, { ...SPEC, members: 2, xgb: { ...SPEC.xgb, rounds: 25 } }, { folds: 3, rng: createRng(8) });
  assert.ok(report.sustain_accuracy !== null && report.sustain_accuracy > 0.9, String(report.sustain_accuracy));
  const plain = await crossValidate(rows, names, { ...SPEC, members: 2, xgb: { ...SPEC.xgb, rounds: 25 } }, { folds: 3, rng: createRng(8) });
  assert.equal(plain.sustain_accuracy, null);
  assert.deepEqual((await fitSurrogate(rows, names, SPEC, createRng(7))).sustain, { kind: 'constant', p: 1 });
});

test('too little history is LMB_ERR_HISTORY_TOO_THIN', async () => {
  const { rows } = makeRows(5, 3);
  await assert.rejects(fitSurrogate(rows, names, SPEC, createRng(1)), (e: unknown) => isLmBenchError(e, 'LMB_ERR_HISTORY_TOO_THIN'));
});

test('k-fold validation reports per-target scores and ranks max_num_seqs as the knob that matters', async () => {
  const { rows } = makeRows(90, 4);
  const report = await crossValidate(rows, names, { ...SPEC, members: 2, xgb: { ...SPEC.xgb, rounds: 25 } }, { folds: 3, rng: createRng(5) });
  assert.equal(report.folds, 3);
  assert.ok((report.targets.output_throughput_per_gpu?.n ?? 0) > 50);
  assert.ok((report.targets.output_throughput_per_gpu?.r2 ?? 0) > 0.8, JSON.stringify(report.targets));
  const imp = report.importance;
  assert.ok((imp['max_num_seqs'] ?? 0) > (imp['gpu_memory_utilization'] ?? 0), JSON.stringify(imp));
  assert.ok(report.feasibility_accuracy !== null && report.feasibility_accuracy > 0.85);
  assert.ok((report.interval_scale.output_throughput_per_gpu ?? 0) >= 1);
});

test('scoreTarget: MAPE and R² of known values; knob columns from encoded names', () => {
  const s = scoreTarget([110, 90], [100, 100]);
  assert.ok(Math.abs(s.mape - 0.1) < 1e-12);
  assert.deepEqual(knobColumns(['knob_log2(max_num_seqs)', 'knob_kv_cache_dtype=auto', 'knob_kv_cache_dtype=fp8', 'wl_input_mean']), {
    max_num_seqs: [0],
    kv_cache_dtype: [1, 2],
  });
});
