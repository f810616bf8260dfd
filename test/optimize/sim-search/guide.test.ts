import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../../src/catalog/index.js';
import { Workload, type Trial } from '../../../src/domain/index.js';
import { DEFAULT_OBJECTIVES } from '../../../src/optimize/objectives.js';
import { priorSimulator } from '../../../src/calibration/prior-simulator.js';
import { configKey } from '../../../src/optimize/sampler.js';
import { spaceEncoder, spaceSource } from '../../../src/optimize/space-source.js';
import { loadSpace } from '../../../src/space/index.js';
import { simulate } from '../../../src/sim/index.js';
import { openStore } from '../../../src/store/index.js';
import { saveProfile } from '../../../src/calibration/profiles.js';
import { simulatorGuide, simulatorSlo } from '../../../src/optimize/sim-search/index.js';
import { createRng } from '../../../src/util/rng.js';
import { loadYamlFile } from '../../../src/util/yaml.js';

test('the SLO the simulator is searched at: each limit divided by its metric’s measured residual, in 10% steps', () => {
  const slo = { ttft_p99_ms: 350, itl_p99_ms: 50 };
  assert.deepEqual(simulatorSlo(slo, {}), slo);
  const slower = simulatorSlo(slo, { ttft_p99_ms: { mean: Math.log(1.4), sd: 0.3 }, itl_p99_ms: { mean: Math.log(0.97), sd: 0.2 } });
  // 1.4 rounds to 1.1^4 = 1.46; 0.97 rounds to no step.
  assert.ok(Math.abs((slower.ttft_p99_ms ?? 0) - 350 / 1.1 ** 4) < 1e-9);
  assert.equal(slower.itl_p99_ms, 50);
});

test('the guide designs from the simulated front and, once a run is measured, proposes through its residual', async () => {
  const catalog = defaultCatalog();
  const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
  const workload = { ...loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload), num_prompts: 160 };
  const slo = { ttft_p99_ms: 350, itl_p99_ms: 50 };
  const context = { hardware: catalog.gpu('H100-SXM'), gpuCount: 1, model: catalog.model('llama-3.1-8b'), workload };
  const sim = priorSimulator(null, catalog, { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, slo });
  const guide = simulatorGuide({ source: spaceSource(space, context), context, encoder: spaceEncoder(space), slo, objectives: DEFAULT_OBJECTIVES, simulate: sim.simulate, rng: createRng(2), candidates: 3000, simulateTop: 12 });
  // `taken` holds keys on the guide's deployment (configKey with its context), as the study's sampler passes them.
  const [first, second] = await guide.design(2, new Set());
  assert.ok(first !== undefined && second !== undefined && configKey(first, context) !== configKey(second, context));
  const again = await guide.design(1, new Set([configKey(first, context)]));
  assert.ok(again.length === 1 && configKey(again[0] ?? {}, context) !== configKey(first, context), 'what is taken is not designed again');
  // One measured trial: a server whose TTFT is 3x the simulated one; proposals come from the simulator
  // re-searched at the tighter limit this implies, and never repeat what was measured.
  const measured = simulate({ config: first, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, seed: 9, slo, catalog });
  assert.ok(measured.ok);
  const result = { ...measured.result, p99_ttft_ms: measured.result.p99_ttft_ms * 3 };
  const trial = { id: 1, study_id: 1, number: 0, state: 'complete', origin: 'simulated', config: first, values: {}, result, failure_reason: null, started: true, created_at_ms: 0, started_at_ms: 0, finished_at_ms: 0, heartbeat_at_ms: null, attrs: {} } satisfies Trial;
  const next = await guide.propose(3, [trial], new Set([configKey(first, context)]));
  assert.ok(next.length >= 1);
  assert.ok(next.every((c) => configKey(c, context) !== configKey(first, context)));
});

test('a `sim calibrate` profile stored for the GPU prices the prior: it sharpens as real runs come in', () => {
  const catalog = defaultCatalog();
  const store = openStore(':memory:', { now: () => 1 });
  const workload = { ...loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload), num_prompts: 120 };
  const d = { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, slo: {} };
  const config = { max_num_seqs: 64, max_num_batched_tokens: 4096 };
  const before = priorSimulator(store, catalog, d);
  assert.match(before.profileSource, /^default/);
  const base = catalog.profileFor(catalog.gpu('H100-SXM'));
  saveProfile(store, { gpu: 'H100-SXM', model: 'llama-3.1-8b', runs: 9, profile: { ...base, eta_weights: base.eta_weights * 0.6 }, metrics: {} });
  const after = priorSimulator(store, catalog, d);
  assert.doesNotMatch(after.profileSource, /^default/);
  const tBefore = before.simulate(config)?.output_throughput ?? 0;
  const tAfter = after.simulate(config)?.output_throughput ?? 0;
  assert.ok(tAfter < tBefore * 0.95, `the slower calibrated GPU simulates slower: ${tAfter} vs ${tBefore}`);
  store.close();
});
