import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { Prices } from '../../src/cost/prices.js';
import type { Workload } from '../../src/domain/index.js';
import { plan, type SimRun } from '../../src/plan/plan.js';
import { fixedChat, standInResult } from './stand-in.js';
import type { PlanObjective } from '../../src/plan/types.js';

// The ranking across GPU types when a figure is unknown: a GPU without a price still ranks by its GPU
// count under "fewest GPUs". Stand-in replicas: an H100-SXM one serves up to 8 req/s within the SLO,
// an L4 one up to 2 req/s; only the L4 has a price.

const catalog = defaultCatalog();
const fixed: Workload = fixedChat(200, { kind: 'poisson', rate_rps: 1 });

const replica: SimRun = ({ gpu, workload }) => {
  const a = workload.arrival;
  const limit = gpu === 'L4' ? 2 : 8;
  const rps = a.kind === 'poisson' && 'rate_rps' in a ? (a.rate_rps ?? limit) : limit + 1;
  const over = a.kind === 'poisson' && rps > limit;
  const powerW = 50 + rps * 10;
  const result = standInResult({ completed: workload.num_prompts, rps, tokS: rps * 200, p99TtftMs: over ? 5000 : 500, powerW });
  return { result, failure: null };
};

const onlyL4: Prices = { of: (hw) => (hw.id === 'L4' ? { usdPerGpuHour: 0.8, source: 'test price' } : null) };

const ranked = (objective: PlanObjective) =>
  plan(
    { model: 'llama-3.1-8b', workload: fixed, traffic: { kind: 'rate', rate_rps: 10 }, slo: { ttft_p99_ms: 1000 }, gpus: ['L4', 'H100-SXM'], maxGpus: 16, objective, seed: 1 },
    { catalog, simulate: replica, prices: onlyL4, idleTdpFrac: 0.14, correction: () => null },
  ).deployments;

test('plan --objective gpus: an unpriced GPU type that needs fewer GPUs ranks first', () => {
  const ds = ranked('gpus');
  const h100 = ds.find((d) => d.gpu === 'H100-SXM');
  const l4 = ds.find((d) => d.gpu === 'L4');
  assert.ok(h100?.feasible && l4?.feasible, `${h100?.reason} ${l4?.reason}`);
  assert.equal(h100.usd_per_hour, null, 'no price for the H100 here');
  assert.ok((h100.gpus as number) < (l4.gpus as number), `${h100.gpus} H100s against ${l4.gpus} L4s`);
  // Before: GPUs × 10⁶ + $/h made the unpriced H100 Infinity, listed after the 6 L4s.
  assert.deepEqual(
    ds.map((d) => d.gpu),
    ['H100-SXM', 'L4'],
  );
});

test('plan --objective usd_per_mtok: an unknown price cannot be the cheapest, so the priced GPU type ranks first', () => {
  assert.deepEqual(
    ranked('usd_per_mtok').map((d) => d.gpu),
    ['L4', 'H100-SXM'],
  );
});
