import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceConfig } from '../../src/http/config.js';
import { localSlurm } from '../helpers/slurm.js';
import { AUTH, SMALL_WORKLOAD, tempDb, testApp, waitFor } from './helpers.js';

const cluster = localSlurm();
const skip = cluster.skip;

function jobStates(name: string): string[] {
  const r = spawnSync('squeue', ['--noheader', '--states=all', `--name=lmb-${name}-t0`, '--format=%T'], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

test("DELETE /v1/studies/:id cancels a Slurm study's jobs with scancel (and wants the token)", { skip, timeout: 120_000 }, async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'lmb-http-slurm-'));
  const config = ServiceConfig.parse({
    recommend_candidates: 500,
    shutdown_grace_ms: 20_000,
    rate_limit: { max: 10_000, window_ms: 60_000 },
    targets: { cluster: { kind: 'slurm', partition: cluster.partition, time_limit: '5', engine: 'sim', work_dir: work, poll_interval_s: 0.3, setup: ['sleep 60'] } },
  });
  const app = await testApp(t, tempDb(t), { config });
  const name = `http-slurm-${process.pid}`;
  const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: { name, target: 'cluster', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: SMALL_WORKLOAD, budget_trials: 2, sampler: 'random', seed: 1 }, headers: AUTH });
  assert.equal(created.statusCode, 202, created.body);
  const deadline = Date.now() + 60_000;
  while (!jobStates(name).includes('RUNNING')) {
    assert.ok(Date.now() < deadline, 'the first job runs');
    await new Promise((r) => setTimeout(r, 200));
  }
  const anonymous = await app.inject({ method: 'DELETE', url: `/v1/studies/${name}` });
  assert.equal(anonymous.statusCode, 401);
  assert.deepEqual(jobStates(name), ['RUNNING'], 'an unauthorised DELETE changes nothing');
  const del = await app.inject({ method: 'DELETE', url: `/v1/studies/${name}`, headers: AUTH });
  assert.equal(del.statusCode, 202, del.body);
  const detail = (await waitFor(app, `/v1/studies/${name}`, (d: { active: boolean }) => !d.active)) as { study: { state: string }; progress: { counted: number } };
  assert.equal(detail.study.state, 'stopped');
  assert.deepEqual(jobStates(name), ['CANCELLED']);
  // Cancelled by lm-bench: not a finished trial, so a resume runs it again.
  assert.equal(detail.progress.counted, 0);
});
