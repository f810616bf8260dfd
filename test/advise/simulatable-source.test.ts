import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DIES_PER_RUN, simulatableSource } from '../../src/advise/simulatable-source.js';
import { simulatedAnswer } from '../../src/advise/simulated-answer.js';
import type { Answer, Question } from '../../src/advise/answer.js';
import { priorSimulator, type RuntimeOomRisk } from '../../src/calibration/prior-simulator.js';
import { PROJECT_ROOT, defaultCatalog } from '../../src/catalog/index.js';
import { Workload, type ServerConfig } from '../../src/domain/index.js';
import type { CandidateSource } from '../../src/optimize/samplers.js';
import { spaceSource } from '../../src/optimize/space-source.js';
import { loadSpace } from '../../src/space/index.js';
import { createRng } from '../../src/util/rng.js';
import { loadYamlFile } from '../../src/util/yaml.js';

/**
 * What a simulated answer sends to the discrete-event simulator leaves out what the simulator's own
 * memory model condemns (does not load, or more likely than not dies of a run-time OOM): a larger
 * candidate pool must not fill the simulated runs with failures where a smaller one found runs.
 */

const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
const code = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'code.yaml'), Workload);

test('70B in fp8 on two A100-40GB, summarize: 20,000 candidates find runnable near misses at least as near as 2,000 do', () => {
  // Before, 20,000 candidates sent 32 configurations that failed to start or died to the simulator ("not one of
  // the 32 configurations simulated runs to the end"), where 2,000 found six that ran, and near misses among them.
  const summarize = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'summarize.yaml'), Workload);
  const answerAt = (candidates: number): Answer => {
    const q: Question = { gpu: 'A100-40GB', gpus: 2, model: 'llama-3.1-70b-fp8', workload: summarize, workloadRef: 'summarize.yaml', slo: summarize.slo ?? {}, candidates, seed: 0, keepPrecision: false };
    const simulator = priorSimulator(null, catalog, { hardware: { gpu: q.gpu, count: 2 }, model: q.model, workload: summarize, slo: q.slo });
    return simulatedAnswer({ question: q, space, catalog, simulator });
  };
  const nearestTput = (a: Answer): number => a.nearest?.candidates[0]?.values.output_throughput_per_gpu ?? 0;
  const large = answerAt(20_000);
  const small = answerAt(2_000);
  assert.equal(large.best, null);
  assert.ok(!large.trust.reasons.some((r) => /^not one of the \d+ configurations simulated/.test(r)), JSON.stringify(large.trust.reasons));
  assert.ok((large.nearest?.candidates.length ?? 0) > 0, 'near misses that ran');
  assert.ok(nearestTput(small) > 0 && nearestTput(large) >= nearestTput(small), `${nearestTput(large)} tok/s/GPU nearest at 20,000 against ${nearestTput(small)} at 2,000`);
  // The candidates the simulator refused count as scored: the answer screened the whole pool it drew.
  assert.ok(large.candidates_scored > small.candidates_scored && small.candidates_scored > 1000, `${large.candidates_scored} and ${small.candidates_scored} scored`);
});

/** A source over fixed configurations, and a simulator's risk that condemns some by their memory fraction. */
const configs: ServerConfig[] = [0.9, 0.95, 0.97, 0.98].map((u) => ({ gpu_memory_utilization: u }));
const fixed: CandidateSource = {
  sample: (n) => configs.slice(0, n),
  mutate: (c) => c,
  encode: (c) => [c.gpu_memory_utilization ?? 0],
  neighbours: () => configs,
  startable: (cs) => cs.map((c) => c.gpu_memory_utilization !== 0.95),
};
const risk = (c: ServerConfig): RuntimeOomRisk | null => {
  const u = c.gpu_memory_utilization ?? 0.9;
  if (u >= 0.98) return null;
  return { perRun: u >= 0.97 ? DIES_PER_RUN : 0, headroomGib: 1, gpuMemoryUtilization: u };
};

test('the source keeps what starts and likely survives, in sample, neighbours and startable; all of a draw when none would', () => {
  const s = simulatableSource(fixed, { runtimeOomRisk: risk });
  const rng = createRng(1);
  assert.deepEqual(s.sample(4, rng), [{ gpu_memory_utilization: 0.9 }, { gpu_memory_utilization: 0.95 }]);
  assert.deepEqual(s.neighbours?.({}), [{ gpu_memory_utilization: 0.9 }, { gpu_memory_utilization: 0.95 }]);
  // The space's own rules still apply to the anchors.
  assert.deepEqual(s.startable?.(configs), [true, false, false, false]);
  // Nothing in the draw survives: the draw is kept, so the answer can still say why none starts.
  const none = simulatableSource(fixed, { runtimeOomRisk: () => null });
  assert.deepEqual(none.sample(4, rng), configs);
  // Over the real space the filter is the simulator's own start-up verdict.
  const ctx = { hardware: catalog.gpu('H100-SXM'), gpuCount: 1, model: catalog.model('llama-3.1-70b'), workload: code };
  const sim = priorSimulator(null, catalog, { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-70b', workload: code, slo: {} });
  const kept = simulatableSource(spaceSource(space, ctx), sim).sample(3000, createRng(2));
  assert.ok(kept.length > 0);
  for (const c of kept) assert.ok((sim.runtimeOomRisk(c)?.perRun ?? 1) < DIES_PER_RUN, JSON.stringify(c));
});
