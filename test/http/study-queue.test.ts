/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-call -- JSON bodies are read loosely; the assertions check their shape */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AUTH, SMALL_WORKLOAD, TEST_CONFIG, tempDb, testApp } from './helpers.js';

// With `limits.running_studies` loops busy, a new study waits its turn instead of starting another
// thread of trials beside them.

const study = (name: string, budget: number) => ({ name, target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: SMALL_WORKLOAD, budget_trials: budget, sampler: 'random', seed: 5 });

test('past limits.running_studies a study is queued, starts when the running one ends, and a stop takes one out of the queue', { timeout: 150_000 }, async (t) => {
  const app = await testApp(t, tempDb(t), { config: { ...TEST_CONFIG, limits: { running_studies: 1 } } });
  const post = async (name: string, budget: number) => {
    const r = await app.inject({ method: 'POST', url: '/v1/studies', payload: study(name, budget), headers: AUTH });
    assert.equal(r.statusCode, 202, r.body);
    return r.json();
  };
  const first = await post('first', 3);
  assert.deepEqual([first.active, first.queued], [true, false]);
  const second = await post('second', 2);
  assert.deepEqual([second.state, second.active, second.queued], ['running', false, true]);
  const third = await post('third', 2);
  assert.equal(third.queued, true);
  const listed = (await app.inject({ method: 'GET', url: '/v1/studies' })).json().studies.map((s: { name: string; queued: boolean }) => [s.name, s.queued]);
  assert.deepEqual(listed.sort(), [['first', false], ['second', true], ['third', true]]);

  // A queued study stopped never runs: stopped, out of the queue, no trial.
  const stopped = await app.inject({ method: 'POST', url: '/v1/studies/third/stop', headers: AUTH });
  assert.deepEqual([stopped.json().state, stopped.json().active, stopped.json().queued], ['stopped', false, false]);
  // A resume of a queued study keeps its place (it does not start a second loop).
  const resumed = (await app.inject({ method: 'POST', url: '/v1/studies/second/resume', headers: AUTH })).json();
  assert.deepEqual([resumed.active, resumed.queued], [false, true]);

  // Until the first has ended the second runs no trial (its creation queued vLLM's defaults, `waiting`),
  // and no more than one loop runs.
  const deadline = Date.now() + 120_000;
  let overlap = false;
  let seen = 0;
  for (;;) {
    // The second read before the first: trials of the second seen while the first is still active after them overlap.
    const get = async (url: string) => (await app.inject({ method: 'GET', url })).json();
    const b = await get('/v1/studies/second');
    const a = await get('/v1/studies/first');
    const health = await get('/health');
    if (a.active === true && b.trials.some((tr: { state: string }) => tr.state !== 'waiting')) overlap = true;
    assert.ok(health.studies_running <= 1, JSON.stringify(health));
    seen++;
    if (b.active === false && b.queued === false && b.study.state !== 'running') break;
    assert.ok(Date.now() < deadline, 'the queued study did not finish in time');
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(overlap, false);
  assert.ok(seen > 1);
  const secondDone = (await app.inject({ method: 'GET', url: '/v1/studies/second' })).json();
  assert.equal(secondDone.study.state, 'done');
  assert.equal(secondDone.progress.counted, 2);
  assert.equal((await app.inject({ method: 'GET', url: '/v1/studies/first' })).json().study.state, 'done');
  const thirdEnd = (await app.inject({ method: 'GET', url: '/v1/studies/third' })).json();
  assert.deepEqual([thirdEnd.study.state, thirdEnd.trials.filter((tr: { state: string }) => tr.state !== 'waiting').length, thirdEnd.queued], ['stopped', 0, false]);
});
