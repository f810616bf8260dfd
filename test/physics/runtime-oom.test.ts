import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryModel, resolveConfig, runtimeOomAt, runtimeOomPerRequest, runtimeOomRunProbability } from '../../src/physics/index.js';
import { simulate } from '../../src/sim/index.js';
import { createSimTarget } from '../../src/targets/sim-target.js';
import { createRng } from '../../src/util/rng.js';
import { catalog, fixed } from '../sim/helpers.js';

const h100 = catalog.gpu('H100-SXM');
const llama8b = catalog.model('llama-3.1-8b');
const memAt = (util: number) => memoryModel(resolveConfig({ gpu_memory_utilization: util }, h100, llama8b), h100, llama8b);
const workload = fixed(256, 64, { kind: 'closed', concurrency: 16 }, 400);

test('the chance of a run-time OOM rises monotonically as gpu_memory_utilization nears 1', () => {
  const utils = [0.8, 0.9, 0.94, 0.95, 0.96, 0.97, 0.98];
  const p = utils.map((u) => runtimeOomRunProbability(memAt(u)));
  for (let i = 1; i < p.length; i++) assert.ok((p[i] as number) > (p[i - 1] as number), `P(${utils[i]}) = ${p[i]} after P(${utils[i - 1]}) = ${p[i - 1]}`);
  assert.ok((p[1] as number) < 1e-6, `vLLM's default 0.9 practically never crashes: ${p[1]}`);
  assert.ok((p[6] as number) > 0.5, `0.98 leaves almost nothing: ${p[6]}`);
  // The per-request hazard compounds back to the per-run probability over 1,000 requests.
  const h = runtimeOomPerRequest(memAt(0.96));
  assert.ok(Math.abs(1 - (1 - h) ** 1000 - runtimeOomRunProbability(memAt(0.96))) < 1e-9);
});

test('the crash point is a seeded draw: the same seed crashes at the same request', () => {
  const mem = memAt(0.975);
  const draw = (seed: number) => {
    const rng = createRng(seed);
    return runtimeOomAt(mem, 1000, () => rng.next());
  };
  const seeds = Array.from({ length: 40 }, (_, i) => i);
  const first = seeds.map(draw);
  assert.deepEqual(seeds.map(draw), first);
  assert.ok(first.some((k) => k === null) && first.some((k) => k !== null), `some runs crash and some do not at 0.975: ${JSON.stringify(first)}`);
  assert.equal(runtimeOomAt(memAt(0.9), 1000, () => 0.5), null);
});

test('simulate: a crashed run is a runtime failure with torch\'s message, reproducible from its seed', () => {
  const outcome = (seed: number, util: number) => simulate({ config: { gpu_memory_utilization: util }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, seed, catalog });
  const seeds = Array.from({ length: 30 }, (_, i) => i);
  const crashes = seeds.filter((s) => {
    const o = outcome(s, 0.98);
    return !o.ok && o.failure.phase === 'runtime';
  });
  assert.ok(crashes.length > 0, 'at 0.98 some seeds crash');
  const seed = crashes[0] as number;
  const a = outcome(seed, 0.98);
  const b = outcome(seed, 0.98);
  assert.ok(!a.ok && !b.ok && a.failure.phase === 'runtime' && b.failure.phase === 'runtime');
  assert.deepEqual(a.failure, b.failure);
  assert.equal(a.failure.rule, 'R1');
  assert.match(a.failure.message, /torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate [\d.]+ MiB/);
  assert.ok(a.failure.atS > 0 && a.failure.atRequest < workload.num_prompts);
  // The default utilization never crashes, and calibration can switch the draw off.
  assert.ok(seeds.every((s) => outcome(s, 0.9).ok));
  const off = simulate({ config: { gpu_memory_utilization: 0.98 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, seed, catalog, runtimeFailures: false });
  assert.ok(off.ok);
});

test('the sim target reports a crash as a started, failed trial with LMB_ERR_SERVER_CRASHED', async () => {
  const target = createSimTarget({ catalog });
  const seeds = Array.from({ length: 30 }, (_, i) => i);
  const outcomes = await Promise.all(
    seeds.map((seed) => target.runTrial({ trial_id: seed, study: 't', seed, config: { gpu_memory_utilization: 0.98 }, workload, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', slo: {} })),
  );
  const crash = outcomes.find((o) => o.status === 'failed');
  assert.ok(crash !== undefined && crash.status === 'failed');
  assert.equal(crash.code, 'LMB_ERR_SERVER_CRASHED');
  assert.equal(crash.started, true);
  assert.match(crash.reason, /^R1: torch\.OutOfMemoryError/);
});
