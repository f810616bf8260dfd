/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- JSON bodies are read loosely; the assertions check their shape */
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { StudySpec } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { StudyManager } from '../../src/http/study-manager.js';
import { TargetSpec } from '../../src/targets/spec.js';
import { objectivesFor } from '../../src/optimize/objectives.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/index.js';
import { AUTH, SMALL_WORKLOAD, SPACE_PATH, tempDb, testApp, waitFor } from './helpers.js';

// Stop, cancel and resume as a client sends them: one after the other, without waiting for a stopped
// loop to wind down first.

const study = (name: string, budget: number) => ({ name, target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: SMALL_WORKLOAD, budget_trials: budget, sampler: 'random', seed: 5 });

test('a resume sent while a stopped study is still winding down is not lost: the study runs to its budget', { timeout: 120_000 }, async (t) => {
  const app = await testApp(t, tempDb(t));
  for (const [name, how] of [
    ['stop-then-resume', { method: 'POST', url: '/v1/studies/stop-then-resume/stop' }],
    ['cancel-then-resume', { method: 'DELETE', url: '/v1/studies/cancel-then-resume' }],
  ] as const) {
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: study(name, 4), headers: AUTH });
    assert.equal(created.statusCode, 202, created.body);
    // The loop is still active (its worker thread has only just started) when both arrive.
    const stopped = await app.inject({ ...how, headers: AUTH });
    assert.equal(stopped.statusCode, 202, stopped.body);
    const resumed = await app.inject({ method: 'POST', url: `/v1/studies/${name}/resume`, headers: AUTH });
    assert.equal(resumed.statusCode, 202, resumed.body);
    assert.equal(resumed.json().active, true);
    const done = await waitFor(app, `/v1/studies/${name}`, (d) => d.active === false && d.study.state !== 'running', 90_000);
    assert.equal(done.study.state, 'done', `${name}: the resume ran the study on (stop_reason ${String(done.stop_reason)})`);
    assert.equal(done.progress.counted, 4);
  }
  // Every trial the service's studies finished is counted once, by its state.
  const details = await Promise.all(['stop-then-resume', 'cancel-then-resume'].map(async (n) => (await app.inject({ method: 'GET', url: `/v1/studies/${n}` })).json<{ trials: { state: string }[] }>()));
  const finished = details.flatMap((d) => d.trials).filter((tr) => tr.state === 'complete' || tr.state === 'failed');
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const counted = (state: string): number => Number(new RegExp(`^lmb_trials_finished_total\\{state="${state}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
  assert.equal(counted('complete') + counted('failed'), finished.length, metrics.split('\n').filter((l) => l.startsWith('lmb_trials')).join('\n'));
  assert.equal(counted('complete'), finished.filter((tr) => tr.state === 'complete').length);
  assert.ok(finished.length >= 8);
});

test('a stop after a resume that waited on an earlier stop withdraws that resume', { timeout: 120_000 }, async (t) => {
  const app = await testApp(t, tempDb(t));
  const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: study('stop-resume-stop', 40), headers: AUTH });
  assert.equal(created.statusCode, 202, created.body);
  for (const url of ['/v1/studies/stop-resume-stop/stop', '/v1/studies/stop-resume-stop/resume', '/v1/studies/stop-resume-stop/stop']) {
    assert.equal((await app.inject({ method: 'POST', url, headers: AUTH })).statusCode, 202, url);
  }
  const end = await waitFor(app, '/v1/studies/stop-resume-stop', (d) => d.active === false && d.study.state !== 'running', 90_000);
  assert.equal(end.study.state, 'stopped');
  assert.ok(end.progress.counted < 40);
});

test('a study created after shutdown began is refused before anything is stored', async (t) => {
  const db = tempDb(t);
  const store = openStore(db);
  t.after(() => store.close());
  const catalog = defaultCatalog();
  const space = loadSpace(SPACE_PATH);
  const log = { info: () => undefined, error: () => undefined };
  const manager = new StudyManager({ store, dbPath: db, spacePath: SPACE_PATH, catalog, space, targets: { sim: { kind: 'sim' } }, now: Date.now, log });
  await manager.shutdown(0);
  const spec = StudySpec.parse({
    name: 'late',
    space: SPACE_PATH,
    hardware: { gpu: 'H100-SXM', count: 1 },
    model: 'llama-3.1-8b',
    workload: SMALL_WORKLOAD,
    slo: SMALL_WORKLOAD.slo,
    objectives: objectivesFor('goodput'),
    target: JSON.stringify({ kind: 'sim' }),
    seed: 0,
    budget_trials: 2,
    budget_hours: null,
    parallel: 1,
    measure: 'fixed',
  });
  assert.throws(() => manager.create(spec, { profile: 'sim', sampler: 'random' }), (e) => isLmBenchError(e, 'LMB_ERR_INTERRUPTED'));
  assert.deepEqual(store.listStudies(), []);
});

test('a study stopped just before the service shuts down stays stopped after the restart; one resumed meanwhile runs on', { timeout: 120_000 }, async (t) => {
  const db = tempDb(t);
  const first = await testApp(t, db);
  for (const name of ['stopped-then-shutdown', 'resumed-then-shutdown']) {
    assert.equal((await first.inject({ method: 'POST', url: '/v1/studies', payload: study(name, 40), headers: AUTH })).statusCode, 202);
  }
  await waitFor(first, '/v1/studies/stopped-then-shutdown', (d) => d.counts.complete >= 1, 90_000);
  // Both are sent while the loops run; the service shuts down before either loop has wound down.
  for (const url of ['/v1/studies/stopped-then-shutdown/stop', '/v1/studies/resumed-then-shutdown/stop', '/v1/studies/resumed-then-shutdown/resume']) {
    assert.equal((await first.inject({ method: 'POST', url, headers: AUTH })).statusCode, 202, url);
  }
  await first.close();
  const second = await testApp(t, db);
  const stopped = (await second.inject({ method: 'GET', url: '/v1/studies/stopped-then-shutdown' })).json();
  assert.deepEqual([stopped.study.state, stopped.active], ['stopped', false]);
  const resumed = (await second.inject({ method: 'GET', url: '/v1/studies/resumed-then-shutdown' })).json();
  assert.ok(resumed.active === true || resumed.study.state === 'done', `resumed on restart: ${String(resumed.study.state)}, active ${String(resumed.active)}`);
  await second.inject({ method: 'DELETE', url: '/v1/studies/resumed-then-shutdown', headers: AUTH });
});

test('a profile that starts processes here keeps their pid files beside the history unless it names a state_dir', (t) => {
  const db = tempDb(t);
  const store = openStore(db);
  t.after(() => store.close());
  const targets = {
    harness: TargetSpec.parse({ kind: 'command', command: '/bin/true' }),
    box: TargetSpec.parse({ kind: 'vllm', state_dir: '/var/lib/lm-bench/servers' }),
    sim: TargetSpec.parse({ kind: 'sim' }),
  };
  const log = { info: () => undefined, error: () => undefined };
  const manager = new StudyManager({ store, dbPath: db, spacePath: SPACE_PATH, catalog: defaultCatalog(), space: loadSpace(SPACE_PATH), targets, now: Date.now, log });
  const harness = manager.profile('harness');
  assert.equal(harness.kind === 'command' ? harness.state_dir : null, join(dirname(db), 'servers'));
  const box = manager.profile('box');
  assert.equal(box.kind === 'vllm' ? box.state_dir : null, '/var/lib/lm-bench/servers');
  assert.deepEqual(manager.profile('sim'), { kind: 'sim' });
});
