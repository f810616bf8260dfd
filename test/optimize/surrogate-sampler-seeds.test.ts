import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BenchmarkResult, ServerConfig, Trial } from '../../src/domain/index.js';
import { sloConstraints } from '../../src/optimize/objectives.js';
import { nearestToSlo } from '../../src/optimize/surrogate-sampler.js';
import { simulate } from '../../src/sim/index.js';
import { targetsOf } from '../../src/surrogate/targets.js';
import { catalog, fixed } from '../sim/helpers.js';

/**
 * Where no measured run meets the SLOs, the sampler's local moves start from the runs nearest them, not
 * from the last three (which, under SLOs nothing meets, can be the farthest off: the search then circled
 * its latest runs). Real simulated runs, their p99 TTFT far past a 1 ms SLO.
 */
const workload = fixed(800, 100, { kind: 'poisson', rate_rps: 30 }, 150);

function trial(number: number, config: ServerConfig): Trial {
  const out = simulate({ config, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, seed: 5, catalog });
  assert.ok(out.ok);
  return { id: number + 1, study_id: 1, number, state: 'complete', origin: 'surrogate', config, values: {}, result: out.result, failure_reason: null, started: true, created_at_ms: 0, started_at_ms: 0, finished_at_ms: 0, heartbeat_at_ms: 0, attrs: {} };
}

test('with nothing feasible, the local moves start from the runs nearest the SLOs (worst SLO first), not the latest', () => {
  const configs: ServerConfig[] = [{}, { max_num_batched_tokens: 8192 }, { max_num_seqs: 8 }, { max_num_seqs: 16 }, { max_num_seqs: 4 }];
  const trials = configs.map((c, i) => trial(i, c));
  const constraints = sloConstraints({ ttft_p99_ms: 1, itl_p99_ms: 1000 });
  const ttft = (t: Trial): number => targetsOf(t.result as BenchmarkResult, 1).ttft_p99_ms ?? Number.NaN;
  const order = nearestToSlo(trials, constraints, 1);
  assert.equal(order.length, trials.length);
  for (let k = 1; k < order.length; k++) assert.ok(ttft(order[k - 1] as Trial) <= ttft(order[k] as Trial), 'nearest first');
  // The runs with few sequences queue (their TTFT is far off) and came last: the seeds are not the latest three.
  const seeds = order.slice(0, 3).map((t) => t.number);
  assert.notDeepEqual(new Set(seeds), new Set([2, 3, 4]), `seeds ${JSON.stringify(seeds)}`);
  assert.ok(seeds.includes(0) || seeds.includes(1), `seeds ${JSON.stringify(seeds)}`);
  // A run that lacks a constrained figure is the farthest.
  const lacking = { ...trials[1], id: 99, number: 9, result: { ...(trials[1]?.result as BenchmarkResult), p99_ttft_ms: Number.NaN } } as Trial;
  assert.equal(nearestToSlo([lacking, ...trials], constraints, 1).at(-1)?.number, 9);
});
