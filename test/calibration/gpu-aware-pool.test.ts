import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gpuAwarePool } from '../../src/calibration/gpu-aware-pool.js';
import type { SimPool } from '../../src/calibration/sim-pool.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { SimProfile } from '../../src/domain/index.js';
import type { SimSummary, SimulateInput } from '../../src/sim/index.js';

const catalog = defaultCatalog();

/** A pool that answers each point with the eta_kv of the profile it was simulated under (in durationS). */
const echo: SimPool = {
  threads: 1,
  close: async () => {},
  summaries: (points, profiles) => Promise.resolve(profiles.map((p) => points.map(() => ({ durationS: p.eta_kv }) as unknown as SimSummary))),
};
const point = (gpu: string): Omit<SimulateInput, 'catalog'> => ({ config: {}, hardware: { gpu, count: 1 }, model: 'llama-3.1-8b', workload: { name: 'w', api: 'completions', input_len: { dist: 'fixed', value: 8 }, output_len: { dist: 'fixed', value: 8 }, arrival: { kind: 'burst' }, num_prompts: 1, ignore_eos: true }, seed: 1 });

test('each point is simulated under the profile asked for with its own GPU’s overrides, in the caller’s order', async () => {
  const pool = gpuAwarePool(echo, () => ({ 'A100-80GB': { eta_kv: 0.3 } }));
  const a: SimProfile = { ...catalog.profile, eta_kv: 0.5 };
  const b: SimProfile = { ...catalog.profile, eta_kv: 0.6 };
  const out = await pool.summaries([point('H100-SXM'), point('A100-80GB'), point('H100-SXM')], [a, b]);
  assert.deepEqual(out.map((row) => row.map((s) => s?.durationS)), [[0.5, 0.3, 0.5], [0.6, 0.3, 0.6]]);
});
