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

test('a point of vLLM 0.14 or later also takes its GPU’s sim_recent overrides; one of the fit set’s releases does not', async () => {
  const pool = gpuAwarePool(echo, () => ({ 'A100-80GB': { eta_kv: 0.3 } }), () => ({ 'A100-80GB': { eta_kv: 0.8 }, 'H100-SXM': { eta_kv: 0.9 } }));
  const a: SimProfile = { ...catalog.profile, eta_kv: 0.5 };
  const at = (gpu: string, vllmVersion?: string): Omit<SimulateInput, 'catalog'> => ({ ...point(gpu), ...(vllmVersion === undefined ? {} : { vllmVersion }) });
  const out = await pool.summaries([at('H100-SXM', '0.12.0'), at('H100-SXM', '0.18.0'), at('A100-80GB', '0.10.2'), at('A100-80GB'), at('H100-SXM')], [a]);
  // No release named: a current one.
  assert.deepEqual(out[0]?.map((s) => s?.durationS), [0.5, 0.9, 0.3, 0.8, 0.9]);
});
