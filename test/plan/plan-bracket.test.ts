import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { loadPrices } from '../../src/cost/prices.js';
import { runPlan, simRun } from '../../src/plan/run-plan.js';
import { missed } from '../../src/plan/headroom.js';
import { contextFor } from '../../src/plan/plan.js';
import { CHAT } from './chat-workload.js';

// The planner on the embedded simulator: a replica's headroom is what it keeps up with, not the
// throughput of a burst too small to fill its batch.

const catalog = defaultCatalog();
const prices = loadPrices(catalog);
const chat = CHAT;
const slo = { ttft_p99_ms: 1000, itl_p99_ms: 80 };

test('plan: one H100 serves an 8B chat at 40 req/s within the SLOs, and the plan says so (it asked for two)', () => {
  // The simulator's own run: 40 req/s for 3,000 requests on one H100 keeps up, within both limits.
  const model = catalog.model('llama-3.1-8b');
  const run = simRun(catalog)({ config: { tensor_parallel_size: 1, max_model_len: contextFor(chat, model) }, gpu: 'H100-SXM', gpus: 1, model, workload: { ...chat, arrival: { kind: 'poisson', rate_rps: 40 }, num_prompts: 3000, slo }, seed: 1 });
  assert.deepEqual(run.result === null ? ['no result'] : missed(slo, run.result), []);
  const a = runPlan({ model: 'llama-3.1-8b', workload: chat, traffic: { kind: 'rate', rate_rps: 40 }, slo, gpus: ['H100-SXM'], maxGpus: 1, objective: 'gpus', seed: 1 }, { catalog, prices, store: null });
  const d = a.deployments[0];
  assert.ok(d?.feasible, d?.reason ?? '');
  assert.equal(d.gpus, 1);
  assert.ok((d.max_rate_rps as number) >= 40, `headroom ${d.max_rate_rps} req/s`);
});
