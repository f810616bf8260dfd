import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/store/sqlite-store.js';
import type { Trial } from '../../src/domain/index.js';
import { countsAgainstBudget } from '../../src/tune/loop.js';
import { localSlurm } from '../helpers/slurm.js';

/**
 * `lm-bench tune --target slurm` as a user runs it, against the local cluster: the controller killed
 * with -9 after its first job was submitted, then the same command again; and Ctrl-C/SIGTERM, which
 * cancels the study's jobs.
 */
const cluster = localSlurm();
const skip = cluster.skip;
const bin = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));

function setup(name: string, sleepS: number): { args: string[]; db: string } {
  const dir = mkdtempSync(join(tmpdir(), `lmb-tune-slurm-${name}-`));
  const workload = join(dir, 'w.yaml');
  writeFileSync(workload, ['name: slurm-cli', 'api: completions', 'input_len: { dist: fixed, value: 128 }', 'output_len: { dist: fixed, value: 32 }', 'arrival: { kind: closed, concurrency: 8 }', 'num_prompts: 40', 'slo: { ttft_p99_ms: 5000, itl_p99_ms: 200 }'].join('\n'));
  const config = join(dir, 'slurm.yaml');
  // The setup line keeps each job on the node for a while, so the controller can die while they run.
  writeFileSync(config, [`partition: ${cluster.partition}`, 'time_limit: "5"', 'engine: sim', `work_dir: ${join(dir, 'work')}`, 'max_jobs: 2', 'poll_interval_s: 0.3', 'setup:', `  - sleep ${sleepS}`].join('\n'));
  const db = join(dir, 'h.db');
  const args = [bin, 'tune', '--study', name, '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--budget-trials', '4', '--parallel', '2', '--sampler', 'random', '--target', 'slurm', '--slurm-config', config, '--no-report', '--db', db];
  return { args, db };
}

function trials(db: string, name: string): Trial[] {
  if (!existsSync(db)) return [];
  try {
    const store = openStore(db, { readonly: true });
    try {
      const s = store.findStudy(name);
      return s === null ? [] : store.listTrials(s.id);
    } finally {
      store.close();
    }
  } catch {
    return [];
  }
}

const jobIdOf = (t: Trial): string | null => ((t.attrs['job'] as { job_id?: string | null } | undefined)?.job_id ?? null);

/** Every job Slurm ran under this study's job names. */
function jobsOf(name: string): { id: string; name: string; state: string }[] {
  const r = spawnSync('squeue', ['--noheader', '--states=all', '--format=%i|%j|%T'], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .filter((l) => l.includes(`|lmb-${name}-t`))
    .map((l) => {
      const [id = '', jobName = '', state = ''] = l.split('|');
      return { id, name: jobName, state };
    });
}

async function until(what: string, ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs the CLI to its end without blocking this process (the tests here run side by side). */
function runCli(args: readonly string[]): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return exited(child).then((status) => ({ status, stderr }));
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

describe('lm-bench tune --target slurm on a real cluster', { skip, concurrency: true, timeout: 240_000 }, () => {
  test('killed with -9 after its first job was submitted, the same command reattaches and ends with exactly its budget of jobs', { timeout: 120_000 }, async () => {
    const name = `slurm-kill9-${process.pid}`; // unique: Slurm lists finished jobs for MinJobAge
    const { args, db } = setup(name, 4);
    const first = spawn(process.execPath, args, { stdio: 'ignore' });
    await until('the first job id stored with its trial', () => trials(db, name).some((t) => jobIdOf(t) !== null));
    first.kill('SIGKILL');
    await exited(first);
    const submitted = trials(db, name).filter((t) => jobIdOf(t) !== null);
    assert.ok(submitted.length >= 1);
    const again = await runCli(args);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stderr, /study stopped: budget/);
    // Every job already stored is reattached, and one whose id the kill cut off before it was stored
    // is found by its name and nonce: at least as many as were stored.
    const reattached = Number(/(\d+) job\(s\) still in the cluster reattached/.exec(again.stderr)?.[1] ?? 0);
    assert.ok(reattached >= submitted.length, again.stderr);
    const all = trials(db, name);
    assert.equal(all.filter(countsAgainstBudget).length, 4);
    assert.ok(all.filter(countsAgainstBudget).every((t) => t.state === 'complete'), JSON.stringify(all.map((t) => [t.number, t.state, t.failure_reason])));
    // The jobs the first controller submitted were followed, not submitted again.
    for (const t of submitted) assert.equal(jobIdOf(all.find((a) => a.id === t.id) as Trial), jobIdOf(t));
    const jobs = jobsOf(name);
    assert.equal(jobs.length, 4, `exactly the budget of jobs: ${JSON.stringify(jobs)}`);
    assert.equal(new Set(jobs.map((j) => j.name)).size, 4);
    assert.ok(jobs.every((j) => j.state === 'COMPLETED'), JSON.stringify(jobs));
  });

  test("SIGTERM cancels the study's jobs with scancel; the same command re-runs those trials", { timeout: 120_000 }, async () => {
    const name = `slurm-sigterm-${process.pid}`;
    const { args, db } = setup(name, 10);
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    await until('two jobs submitted', () => trials(db, name).filter((t) => jobIdOf(t) !== null).length === 2);
    child.kill('SIGTERM');
    assert.equal(await exited(child), 130, stderr);
    assert.match(stderr, /cancelling the study's Slurm jobs/);
    const ids = trials(db, name).map(jobIdOf).filter((id): id is string => id !== null);
    await until('both jobs cancelled', () => jobsOf(name).filter((j) => ids.includes(j.id)).every((j) => j.state === 'CANCELLED'), 30_000);
    // Cancelled by lm-bench: nothing was counted, nothing learned as infeasible; both run again on resume.
    const left = trials(db, name);
    assert.equal(left.filter(countsAgainstBudget).length, 0);
    assert.equal(left.filter((t) => t.state === 'running').length, 2);
    const resume = await runCli(args);
    assert.equal(resume.status, 0, resume.stderr);
    assert.match(resume.stderr, /2 orphaned running trial\(s\) re-queued/);
    assert.doesNotMatch(resume.stderr, /reattached/);
    const done = trials(db, name);
    assert.equal(done.filter(countsAgainstBudget).length, 4);
    assert.equal(done.filter((t) => t.started === false).length, 0);
  });
});

describe('lm-bench tune --target slurm refuses a study the cluster cannot run, before storing it', { concurrency: true, timeout: 60_000 }, () => {
  const refusedBefore = async (extraEnv: Record<string, string>, partition: string): Promise<{ status: number | null; stderr: string; db: string; name: string }> => {
    const name = `slurm-refused-${partition}`;
    const { args, db } = setup(name, 0);
    const cfg = args[args.indexOf('--slurm-config') + 1] as string;
    writeFileSync(cfg, ['partition: ' + partition, 'time_limit: "5"', 'engine: sim', `work_dir: ${join(db, '..', 'work')}`].join('\n'));
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...extraEnv } });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    return { status: await exited(child), stderr, db, name };
  };

  test('without Slurm on the PATH: LMB_ERR_SLURM_UNAVAILABLE, and no study', { timeout: 30_000 }, async () => {
    const r = await refusedBefore({ PATH: '/nonexistent' }, 'any');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /LMB_ERR_SLURM_UNAVAILABLE.*sbatch/);
    assert.equal(trials(r.db, r.name).length, 0);
    const store = openStore(r.db, { readonly: true });
    try {
      assert.equal(store.findStudy(r.name), null);
    } finally {
      store.close();
    }
  });

  test('a partition the cluster does not have: sbatch --test-only refuses it, and no study', { skip, timeout: 30_000 }, async () => {
    const r = await refusedBefore({}, 'no-such-partition');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /LMB_ERR_SLURM_SUBMIT_FAILED.*partition/i);
    const store = openStore(r.db, { readonly: true });
    try {
      assert.equal(store.findStudy(r.name), null);
    } finally {
      store.close();
    }
  });
});
