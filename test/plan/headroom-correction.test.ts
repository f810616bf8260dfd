import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { loadPrices } from '../../src/cost/prices.js';
import type { Workload } from '../../src/domain/index.js';
import { plan, type SimRun } from '../../src/plan/plan.js';
import { fixedChat, standInResult } from './stand-in.js';
import type { HistoryCorrection } from '../../src/plan/history.js';
import type { PlanDeployment, PlanTraffic } from '../../src/plan/types.js';

// The headroom a plan prints is the per-replica figure its replicas were counted from, whatever the
// history's speed correction: R replicas, and R − 1 of them would not have covered the traffic at it.
// Stand-in replicas with a known limit (a closed loop passes up to 2 users; an open loop up to 8 req/s)
// make both known.

const catalog = defaultCatalog();
const prices = loadPrices(catalog);
const fixed: Workload = fixedChat();

const replica: SimRun = ({ workload }) => {
  const a = workload.arrival;
  // The load as requests a second: users at 2 s a request, a Poisson rate, or a burst's 10 req/s.
  const rps = a.kind === 'closed' ? a.concurrency / 2 : a.kind === 'poisson' && 'rate_rps' in a ? (a.rate_rps ?? 10) : 10;
  const over = a.kind === 'closed' ? a.concurrency > 2 : a.kind === 'poisson' && rps > 8;
  const result = standInResult({ completed: workload.num_prompts, rps, tokS: rps * 200, p99TtftMs: over ? 5000 : 500, powerW: 100 + rps * 20 });
  return { result, failure: null };
};

const corrected = (speedFactor: number): HistoryCorrection => ({ runs: 4, speedFactor, latencyFactor: 1, logSd: 0.05 });

function plannedWide(traffic: PlanTraffic, speedFactor: number): PlanDeployment {
  const a = plan(
    { model: 'llama-3.1-8b', workload: fixed, traffic, slo: { ttft_p99_ms: 1000 }, gpus: ['H100-SXM'], maxGpus: 64, objective: 'gpus', seed: 1 },
    { catalog, simulate: replica, prices, idleTdpFrac: 0.14, correction: () => corrected(speedFactor) },
  );
  const d = a.deployments[0];
  assert.ok(d?.feasible, d?.reason ?? '');
  assert.equal(d.tensor_parallel_size, 1, 'the cheapest in GPUs is TP 1 for a stand-in that does not scale with TP');
  return d;
}

test('plan: a server faster than simulated prints the headroom its users were sized by (5 users, 2 a replica: 3 replicas, 6 users)', () => {
  const d = plannedWide({ kind: 'users', users: 5 }, 2);
  assert.equal(d.replicas, 3);
  // Before: 2 users × speed 2 × 3 replicas = 12, a headroom 2 replicas would have covered.
  assert.equal(d.max_users, 6);
  const perReplica = (d.max_users as number) / (d.replicas as number);
  assert.ok(((d.replicas as number) - 1) * perReplica < 5, 'one replica fewer would not cover the users at the printed headroom');
});

test('plan: a server faster than simulated prints the req/s headroom its replicas were counted from', () => {
  const d = plannedWide({ kind: 'rate', rate_rps: 20 }, 2);
  const perReplica = (d.max_rate_rps as number) / (d.replicas as number);
  // The stand-in passes up to 8 req/s: the bisection lands within a step of it, never past.
  assert.ok(perReplica <= 8 && perReplica > 7, `headroom ${perReplica} req/s a replica`);
  assert.equal(d.replicas, Math.ceil(20 / perReplica));
  assert.ok((d.max_rate_rps as number) >= 20, 'the headroom covers the traffic');
});

test('plan: a server slower than simulated sizes and prints the same shrunken headroom', () => {
  const d = plannedWide({ kind: 'rate', rate_rps: 20 }, 0.5);
  const perReplica = (d.max_rate_rps as number) / (d.replicas as number);
  assert.ok(perReplica <= 4 && perReplica > 3.5, `headroom ${perReplica} req/s a replica (half the stand-in's 8)`);
  assert.equal(d.replicas, Math.ceil(20 / perReplica));
});

test('plan: users are whole: a slower server holding 1.5 users a replica takes 3 users on 3 replicas, not 2 with the heavier past its headroom', () => {
  const d = plannedWide({ kind: 'users', users: 3 }, 0.75);
  // Before: ⌈3 / 1.5⌉ = 2 replicas, one of them with 2 users where the history says it holds 1.5.
  assert.equal(d.replicas, 3);
  assert.equal(d.max_users, 3);
  assert.ok(Math.ceil(3 / (d.replicas as number)) <= (d.max_users as number) / (d.replicas as number), "the heaviest replica's users are within its headroom");
});

test('plan: a server too slow to hold one user within the SLOs is no size for a closed loop, and says why', () => {
  const a = plan(
    { model: 'llama-3.1-8b', workload: fixed, traffic: { kind: 'users', users: 3 }, slo: { ttft_p99_ms: 1000 }, gpus: ['H100-SXM'], maxGpus: 8, objective: 'gpus', seed: 1 },
    { catalog, simulate: replica, prices, idleTdpFrac: 0.14, correction: () => corrected(0.4) },
  );
  const d = a.deployments[0];
  // Before: 0.8 users a replica made it 4 replicas for 3 users, one idle and each user alone on a server the history says is too slow.
  assert.equal(d?.feasible, false, `${d?.replicas} replicas`);
  assert.match(d.reason ?? '', /TP 1: serves 2 users within the SLOs as simulated, under one at the speed your runs measured \(×0\.40\)/);
  assert.equal(a.feasible, false);
});

test('plan: a closed-loop headroom probe holds its users at once: a replica that keeps 700 users does not claim the 2,048 cap', () => {
  // A stand-in whose TTFT limit passes while at most 700 users are in flight: a run of fewer requests
  // than users has no more than its requests in flight, as a burst.
  const crowd: SimRun = ({ workload }) => {
    const a = workload.arrival;
    const inFlight = a.kind === 'closed' ? Math.min(a.concurrency, workload.num_prompts) : 1;
    const u = a.kind === 'closed' ? a.concurrency : 1;
    const result = standInResult({ completed: workload.num_prompts, rps: u / 2, tokS: u * 100, p99TtftMs: inFlight <= 700 ? 500 : 5000, powerW: 100 + u });
    return { result, failure: null };
  };
  const a = plan(
    { model: 'llama-3.1-8b', workload: fixed, traffic: { kind: 'users', users: 1400 }, slo: { ttft_p99_ms: 1000 }, gpus: ['H100-SXM'], maxGpus: 8, objective: 'gpus', seed: 1 },
    { catalog, simulate: crowd, prices, idleTdpFrac: 0.14, correction: () => null },
  );
  const d = a.deployments[0];
  assert.ok(d?.feasible, d?.reason ?? '');
  assert.equal(d.tensor_parallel_size, 1);
  const perReplica = (d.max_users as number) / (d.replicas as number);
  // Before: probes of 1,024 and 2,048 users over 600 requests passed, so the headroom was the cap (4,096 on 2 replicas).
  assert.ok(perReplica <= 700 && perReplica >= 650, `${perReplica} users a replica`);
  assert.equal(d.replicas, Math.ceil(1400 / perReplica));
});
