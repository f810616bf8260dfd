import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLmBenchError } from '../../src/errors.js';
import { fitSurrogate, predictSurrogate, type SurrogateSpec } from '../../src/surrogate/surrogate.js';
import { toFeatureMatrix } from '../../src/surrogate/tree-eval.js';
import { createRng } from '../../src/util/rng.js';
import { createFitPool, poolFit } from '../../src/surrogate/fit-pool.js';
import { makeRows, names } from '../surrogate/fixtures.js';

const SPEC: SurrogateSpec = { members: 2, xgb: { rounds: 15, maxDepth: 3 }, feasibilityMembers: 1, targets: ['output_throughput_per_gpu'], minRows: 8 };

test('a worker thread fits the same surrogate as this thread, and errors keep their code', async (t) => {
  const pool = createFitPool({ threads: 1 });
  t.after(() => pool.close());
  const { rows } = makeRows(50, 8);
  const fit = poolFit(pool);
  const [remote, local] = await Promise.all([fit(rows, names, SPEC, createRng(3)), fitSurrogate(rows, names, SPEC, createRng(3))]);
  const x = toFeatureMatrix(rows.map((r) => r.x));
  const base = { output_throughput_per_gpu: Float64Array.from(rows, (r) => r.baselines.output_throughput_per_gpu) };
  assert.deepEqual(
    Array.from(predictSurrogate(remote, x, base).targets.output_throughput_per_gpu ?? []),
    Array.from(predictSurrogate(local, x, base).targets.output_throughput_per_gpu ?? []),
  );
  await assert.rejects(fit(rows.slice(0, 3), names, SPEC, createRng(1)), (e: unknown) => isLmBenchError(e, 'LMB_ERR_HISTORY_TOO_THIN'));
});
