import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { withSimulatedDiagnoses } from '../../src/advise/answer.js';
import { simulatedAnswer } from '../../src/advise/simulated-answer.js';
import { formatAnswer } from '../../src/advise/text.js';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { Workload, type BenchmarkResult } from '../../src/domain/index.js';
import { saturationLine, saturationText } from '../../src/diagnose/text.js';
import { priorSimulator } from '../../src/calibration/prior-simulator.js';
import type { RecommendedConfig } from '../../src/optimize/recommend.js';
import { loadSpace } from '../../src/space/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';

const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces/vllm.yaml'));
const chat = loadYamlFile(join(PROJECT_ROOT, 'data/workloads/chat.yaml'), Workload, 'LMB_ERR_WORKLOAD_INVALID');
const SAT = { saturated: true, offered_rps: 12, sustained_rps: 8.5, backlog_growth_rps: 3.4, window_start_s: 10, window_end_s: 20 };

test('a saturated run is said to be one in words: the rate sustained, the rate offered, the growth', () => {
  assert.equal(saturationText(SAT), 'cannot sustain this load: sustains 8.50 req/s of 12.0 offered, its queue growing by 3.40 req/s');
  assert.match(saturationLine(SAT) ?? '', /^SATURATED: cannot sustain .*latency figures measure the run's length/);
  assert.equal(saturationText({ ...SAT, saturated: false }), null);
  assert.equal(saturationText(null), null);
  assert.equal(saturationText(undefined), null);
});

test('a recommendation from history carries its simulated run’s saturation', () => {
  const run = { completed: 10, saturation: SAT, diagnosis: null } as unknown as BenchmarkResult;
  const c: RecommendedConfig = { config: { max_num_seqs: 64 }, predicted: {}, p_start: 1, p_meets_slo: 0.9, numerics_changes: [] };
  const trust = { level: 'ok' as const, reasons: [], run_next: [] };
  const fake = { profileSource: 'test', simulate: () => run, run: () => ({ ok: true as const, result: run }), runtimeOomRisk: () => ({ perRun: 1e-9, headroomGib: 6, gpuMemoryUtilization: 0.9 }) };
  const rec = withSimulatedDiagnoses({ best: c, precision_keeping: null, pareto: [], trust }, fake);
  assert.deepEqual(rec.best?.saturation, SAT);
  assert.deepEqual(rec.trust, trust, 'a pick the simulator runs without a doubt keeps its trust');
});

test('recommend for an open-loop rate no configuration sustains: no pick, no SLO to relax, and the most any configuration sustains', () => {
  // 100 req/s of 4,000-token prompts at an 8B on one H100, which prefills a few dozen a second at
  // most: every simulated run's queue grows, whatever max_num_seqs lets into the batch.
  const workload: Workload = { ...chat, input_len: { dist: 'fixed', value: 4000 }, output_len: { dist: 'fixed', value: 64 }, arrival: { kind: 'poisson', rate_rps: 100 }, num_prompts: 400 };
  const slo = { ttft_p99_ms: 60_000, itl_p99_ms: 1000 };
  const simulator = priorSimulator(null, catalog, { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, slo });
  const a = simulatedAnswer({
    question: { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload, workloadRef: 'prefill.yaml', slo, candidates: 300, seed: 1, keepPrecision: false },
    space,
    catalog,
    simulator,
    simulateTop: 4,
    // More GPUs saturate too at this rate and run as fast: the same deployment stands in for them.
    simulatorFor: () => simulator,
  });
  assert.equal(a.best, null);
  const sat = a.nearest?.saturated ?? null;
  assert.ok(sat !== null);
  assert.equal(sat.count, sat.of);
  assert.ok(sat.best_sustained_rps > 10 && sat.best_sustained_rps < 100, `sustained ${sat.best_sustained_rps}`);
  // The loose SLO is met by every percentile, yet nothing is offered as a near miss to relax it to.
  assert.deepEqual(a.nearest?.candidates, []);
  assert.ok(!a.nearest?.changes.some((ch) => ch.kind === 'relax_slo'));
  assert.match(formatAnswer(a), /Every one of the \d+ simulated configurations cannot sustain this load: the best sustains \d+(\.\d+)? req\/s of \d+(\.\d+)? offered/);
});
