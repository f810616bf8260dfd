import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerConfig, Workload } from '../../src/domain/index.js';
import { makeStepModel, startupCheck } from '../../src/physics/index.js';
import { buildRecords, DEFAULT_NOISE, runDes, simulate, simulateSummary, WeightedSample } from '../../src/sim/index.js';
import { createRng } from '../../src/util/rng.js';
import { arrivalTimes, concurrencyCap, sampleRequests } from '../../src/workload/sample.js';
import { catalog } from './helpers.js';

/**
 * Decode fast-forward and summary runs are speed-ups, not approximations: the same noise draws, block
 * allocations and token times as stepping one step at a time, checked on closed and open loops, DP
 * replicas, shared prefixes and a KV cache tight enough to preempt.
 */
function des(config: ServerConfig, gpus: number, model: string, w: Workload, fastForward: boolean) {
  const hw = catalog.gpu('H100-SXM');
  const spec = catalog.model(model);
  const start = startupCheck(config, { hardware: hw, gpuCount: gpus, model: spec });
  assert.ok(start.ok);
  const rng = createRng(5);
  const specs = sampleRequests(w, rng.fork('requests'));
  return runDes({
    resolved: start.resolved,
    numBlocks: start.memory.numBlocks,
    stepModel: makeStepModel(start.resolved, hw, spec, catalog.profileFor(hw)),
    frontend: catalog.profile,
    specs,
    arrivals: arrivalTimes(w.arrival, specs.length, rng.fork('arrivals')),
    cap: concurrencyCap(w.arrival) ?? Number.POSITIVE_INFINITY,
    noise: DEFAULT_NOISE,
    rng: rng.fork('engine'),
    fastForward,
  });
}

const mixed = (arrival: Workload['arrival'], n: number): Workload => ({
  name: 'mixed',
  api: 'completions',
  input_len: { dist: 'lognormal', mean: 300, std: 200, min: 8, max: 2000 },
  output_len: { dist: 'uniform', min: 50, max: 600 },
  shared_prefix: { groups: 3, length: 256, fraction: 0.5 },
  arrival,
  num_prompts: n,
  ignore_eos: true,
});

test('fast-forwarded decode runs give the same records as stepping', () => {
  const cases: [ServerConfig, number, string, Workload][] = [
    [{ max_num_seqs: 64, enable_prefix_caching: false }, 1, 'llama-3.1-8b', mixed({ kind: 'closed', concurrency: 64 }, 300)],
    [{ data_parallel_size: 2, max_num_seqs: 64 }, 2, 'llama-3.1-8b', mixed({ kind: 'poisson', rate_rps: 40 }, 300)],
    // Long prompts on few KV blocks: preemptions inside the run.
    [{ tensor_parallel_size: 2, max_num_seqs: 256, max_model_len: 8192 }, 2, 'llama-3.1-70b', { ...mixed({ kind: 'closed', concurrency: 256 }, 400), input_len: { dist: 'uniform', min: 2000, max: 4000 }, output_len: { dist: 'uniform', min: 500, max: 1500 } }],
  ];
  for (const [config, gpus, model, w] of cases) {
    const slow = des(config, gpus, model, w, false);
    const fast = des(config, gpus, model, w, true);
    assert.deepEqual(buildRecords(fast), buildRecords(slow));
    assert.deepEqual(fast.replicas.map((r) => [r.steps, r.preemptions, r.kv.peakUsedBlocks]), slow.replicas.map((r) => [r.steps, r.preemptions, r.kv.peakUsedBlocks]));
  }
  const tight = des(cases[2]?.[0] ?? {}, 2, 'llama-3.1-70b', cases[2]?.[3] as Workload, true);
  assert.ok((tight.replicas[0]?.preemptions ?? 0) > 0, 'the tight case preempts');
});

test('a summary run reports what the full run reports', () => {
  const input = { config: { max_num_seqs: 48 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: mixed({ kind: 'closed', concurrency: 48 }, 200), seed: 9, catalog };
  const full = simulate(input);
  const sum = simulateSummary(input);
  assert.ok(full.ok && sum.ok);
  const r = full.result;
  const s = sum.summary;
  assert.equal(s.completed, r.completed);
  assert.equal(s.outputTokens, r.total_output_tokens);
  for (const [a, b] of [[s.ttftMs.mean, r.mean_ttft_ms], [s.ttftMs.p99, r.p99_ttft_ms], [s.tpotMs.mean, r.mean_tpot_ms], [s.e2elMs.median, r.median_e2el_ms], [s.durationS, r.duration], [s.outputThroughput, r.output_throughput]] as const) {
    assert.equal(a, b);
  }
  // Pooled gaps are differences of the same times, summed in another order: equal to rounding.
  for (const [a, b] of [[s.itlMs.mean, r.mean_itl_ms], [s.itlMs.median, r.median_itl_ms], [s.itlMs.p99, r.p99_itl_ms]] as const) assert.ok(Math.abs(a - b) < 1e-6 * b, `${a} vs ${b}`);
});

test('weighted percentiles equal numpy\'s linear percentiles of the expanded sample', () => {
  const w = new WeightedSample();
  const plain: number[] = [];
  const rng = createRng(1);
  for (let i = 0; i < 200; i++) {
    const v = Math.round(rng.next() * 50);
    const c = 1 + rng.int(7);
    w.add(v, c);
    for (let j = 0; j < c; j++) plain.push(v);
  }
  plain.sort((a, b) => a - b);
  const np = (p: number): number => {
    const rank = (p / 100) * (plain.length - 1);
    const lo = Math.floor(rank);
    return (plain[lo] as number) + ((plain[Math.min(lo + 1, plain.length - 1)] as number) - (plain[lo] as number)) * (rank - lo);
  };
  assert.deepEqual(w.percentiles([0, 37.5, 50, 90, 99, 100]), [0, 37.5, 50, 90, 99, 100].map(np));
  assert.equal(w.size, plain.length);
});
