import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { loadPrices } from '../../src/cost/prices.js';
import type { Workload } from '../../src/domain/index.js';
import { plan, type SimRun } from '../../src/plan/plan.js';
import { fixedChat, standInResult } from './stand-in.js';

// Closed-loop users over replicas: ⌈N/R⌉ on N mod R of them, ⌊N/R⌋ on the rest, and the deployment's
// figures the sum of what each replica serves. A stand-in replica whose every user gets 100 output
// tok/s at 200 W, and whose p99 TTFT passes 1 s past two users, makes the sums known.

const catalog = defaultCatalog();
const chat: Workload = fixedChat();

const replica: SimRun = ({ workload }) => {
  const a = workload.arrival;
  const u = a.kind === 'closed' ? a.concurrency : 1000;
  const tok = 100 * u;
  const result = standInResult({ completed: workload.num_prompts, rps: u / 2, tokS: tok, p99TtftMs: u <= 2 ? 500 : 5000, powerW: 200 * u });
  return { result, failure: null };
};

test('plan: 3 users on 2 replicas are served as 2 + 1, not priced as 4', () => {
  const a = plan(
    { model: 'llama-3.1-8b', workload: chat, traffic: { kind: 'users', users: 3 }, slo: { ttft_p99_ms: 1000 }, gpus: ['H100-SXM'], maxGpus: 2, objective: 'gpus', seed: 1 },
    { catalog, simulate: replica, prices: loadPrices(catalog), idleTdpFrac: 0.14, correction: () => null },
  );
  const d = a.deployments[0];
  assert.ok(d?.feasible, d?.reason ?? '');
  assert.equal(d.replicas, 2);
  assert.equal(d.tensor_parallel_size, 1);
  // Before: 2 × 200 = 400 tok/s and 800 W, a third more than 3 users ask for.
  assert.equal(d.output_throughput_tok_s, 300);
  assert.equal(d.avg_power_w, 600);
  assert.equal(d.energy_per_output_token_j, 2);
  assert.ok(Math.abs((d.usd_per_million_output_tokens as number) - ((d.usd_per_hour as number) / (300 * 3600)) * 1e6) < 1e-12);
  assert.equal(d.p99_ttft_ms, 500, "the heavier replica's p99");
});
