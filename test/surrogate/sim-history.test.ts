import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { datasetFromObservations } from '../../src/surrogate/dataset.js';
import { simulateHistory } from '../../src/surrogate/sim-history.js';
import { createRng } from '../../src/util/rng.js';
import { context, encoder } from './fixtures.js';

test('a simulated run that dies of a run-time OOM started: it teaches "cannot sustain", a launch failure "does not start"', () => {
  const catalog = defaultCatalog();
  const configs = [
    // Starts, then runs out of memory under the chat load (fp8 weights and KV at 98% of the GPU).
    { gpu_memory_utilization: 0.98, quantization: 'fp8', kv_cache_dtype: 'fp8_e5m2' },
    // Does not start.
    { gpu_memory_utilization: 0.99 },
    { max_num_seqs: 16 },
  ] as const;
  const obs = simulateHistory([{ hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: context.workload, configs }], catalog, createRng(1));
  assert.deepEqual(
    obs.map((o) => [o.result === null, o.brokeUnderLoad === true]),
    [
      [true, true],
      [true, false],
      [false, false],
    ],
  );
  const rows = datasetFromObservations(obs, catalog, encoder).rows;
  assert.deepEqual(
    rows.map((r) => [r.started, r.saturated]),
    [
      [true, true],
      [false, false],
      [true, false],
    ],
  );
});
