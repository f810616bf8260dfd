/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- JSON bodies are read loosely; the assertions check their shape */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../src/store/index.js';
import { countsAgainstBudget } from '../../src/tune/loop.js';
import { AUTH, SMALL_WORKLOAD, tempDb, testApp, waitFor } from './helpers.js';

// Large enough that a study of fast simulated trials is still running when the first service closes.
const BUDGET = 30;

function snapshot(db: string) {
  const store = openStore(db, { readonly: true });
  try {
    const study = store.getStudy('restart');
    const trials = store.listTrials(study.id);
    return { state: study.state, trials, complete: trials.filter((t) => t.state === 'complete') };
  } finally {
    store.close();
  }
}

test('a service stopped mid-study resumes it on restart: nothing measured is lost and the budget is finished', { timeout: 120_000 }, async (t) => {
  const db = tempDb(t);
  // No grace period: the trial running at shutdown is left in the store as running, for the restart to re-queue.
  const first = await testApp(t, db, { config: { shutdown_grace_ms: 0, recommend_candidates: 500 } });
  const payload = { name: 'restart', target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: SMALL_WORKLOAD, budget_trials: BUDGET, sampler: 'random', seed: 5 };
  const created = await first.inject({ method: 'POST', url: '/v1/studies', payload, headers: AUTH });
  assert.equal(created.statusCode, 202, created.body);
  await waitFor(first, '/v1/studies/restart', (d) => d.counts.complete >= 2);
  await first.close();

  const before = snapshot(db);
  assert.equal(before.state, 'running', 'a study interrupted by shutdown stays marked to resume');
  assert.ok(before.complete.length >= 2 && before.complete.length < BUDGET, `stopped mid-study with ${before.complete.length} complete`);

  const second = await testApp(t, db);
  const done = await waitFor(second, '/v1/studies/restart', (d) => d.study.state === 'done' && d.active === false);
  assert.equal(done.stop_reason, 'budget');

  const after = snapshot(db);
  for (const t0 of before.complete) {
    const same = after.trials.find((x) => x.id === t0.id);
    assert.equal(same?.state, 'complete', `trial ${t0.number} kept`);
    assert.equal(same.result?.output_throughput, t0.result?.output_throughput, `trial ${t0.number} unchanged`);
  }
  assert.equal(after.trials.filter(countsAgainstBudget).length, BUDGET);
  assert.equal(after.trials.filter((x) => x.state === 'running' || x.state === 'waiting').length, 0);
});

test('a user stop is not undone by a restart', { timeout: 60_000 }, async (t) => {
  const db = tempDb(t);
  const first = await testApp(t, db);
  const payload = { name: 'restart', target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: SMALL_WORKLOAD, budget_trials: 50, sampler: 'random', seed: 6 };
  assert.equal((await first.inject({ method: 'POST', url: '/v1/studies', payload, headers: AUTH })).statusCode, 202);
  await waitFor(first, '/v1/studies/restart', (d) => d.counts.complete >= 1);
  assert.equal((await first.inject({ method: 'POST', url: '/v1/studies/restart/stop', headers: AUTH })).statusCode, 202);
  const stopped = await waitFor(first, '/v1/studies/restart', (d) => d.active === false);
  assert.equal(stopped.study.state, 'stopped');
  assert.equal(stopped.stop_reason, 'interrupted');
  await first.close();
  const second = await testApp(t, db);
  const d = (await second.inject({ method: 'GET', url: '/v1/studies/restart' })).json();
  assert.deepEqual([d.study.state, d.active], ['stopped', false]);
});
