import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Trial } from '../../../src/domain/index.js';
import { openStore } from '../../../src/store/sqlite-store.js';
import { countsAgainstBudget } from '../../../src/tune/loop.js';
import { localSlurm, slurmWrappers } from '../../helpers/slurm.js';

/**
 * `lm-bench tune --target slurm` killed with -9 at each point of a trial's submission, then the same
 * command again, on the suite's own cluster: before its sbatch reached Slurm (the killed controller's
 * sbatch still running, or never run), between sbatch and storing the job id, while the jobs run,
 * and after the job wrote its result. Each time Slurm must have run exactly one job per trial,
 * counted by the study's job names and comments in Slurm itself (the real squeue) and by the
 * sbatch calls the controller made.
 *
 * The faults a shared one-node cluster cannot produce for one study alone go through wrappers on
 * the controller's PATH over the real commands (test/helpers/slurm.ts `slurmWrappers`): an sbatch
 * held before or after it submits, and a squeue that no longer lists a job (Slurm purges finished
 * jobs after MinJobAge, a cluster-wide setting every other test's jobs would feel).
 */
const cluster = localSlurm();
const skip = cluster.skip;
const bin = fileURLToPath(new URL('../../../bin/lm-bench.js', import.meta.url));

interface Study {
  readonly name: string;
  readonly args: string[];
  readonly db: string;
  readonly work: string;
  readonly ctl: string;
  readonly env: NodeJS.ProcessEnv;
}

function studyOf(tag: string, sleepS: number): Study {
  const name = `kill-${tag}-${process.pid}`; // unique: Slurm lists finished jobs for MinJobAge
  const dir = mkdtempSync(join(tmpdir(), `lmb-kill-${tag}-`));
  const { bin: wrappers, ctl } = slurmWrappers(dir);
  const workload = join(dir, 'w.yaml');
  writeFileSync(workload, ['name: slurm-kill', 'api: completions', 'input_len: { dist: fixed, value: 128 }', 'output_len: { dist: fixed, value: 32 }', 'arrival: { kind: closed, concurrency: 8 }', 'num_prompts: 40', 'slo: { ttft_p99_ms: 5000, itl_p99_ms: 200 }'].join('\n'));
  const work = join(dir, 'work');
  const config = join(dir, 'slurm.yaml');
  writeFileSync(config, [`partition: ${cluster.partition}`, 'time_limit: "5"', 'engine: sim', `work_dir: ${work}`, 'max_jobs: 2', 'poll_interval_s: 0.3', 'setup:', `  - sleep ${sleepS}`].join('\n'));
  const db = join(dir, 'h.db');
  const args = [bin, 'tune', '--study', name, '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--budget-trials', '2', '--parallel', '2', '--sampler', 'random', '--target', 'slurm', '--slurm-config', config, '--no-report', '--db', db];
  return { name, args, db, work, ctl, env: { ...process.env, PATH: `${wrappers}:${process.env['PATH'] ?? ''}` } };
}

function trials(s: Study): Trial[] {
  if (!existsSync(s.db)) return [];
  try {
    const store = openStore(s.db, { readonly: true });
    try {
      const found = store.findStudy(s.name);
      return found === null ? [] : store.listTrials(found.id);
    } finally {
      store.close();
    }
  } catch {
    return []; // the controller is creating the database
  }
}

const handleOf = (t: Trial): { job_id?: string | null; comment?: string } => (t.attrs['job'] as { job_id?: string | null; comment?: string } | undefined) ?? {};

/** Every job Slurm itself (the real squeue, not the wrappers) holds under the study's job names. */
function jobsOf(s: Study): { id: string; name: string; state: string; comment: string }[] {
  const r = spawnSync('squeue', ['--noheader', '--states=all', '--format=%i|%j|%T|%k'], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .filter((l) => l.includes(`|lmb-${s.name}-t`))
    .map((l) => {
      const [id = '', name = '', state = '', comment = ''] = l.split('|');
      return { id, name, state, comment };
    });
}

const sbatchCalls = (s: Study): string[] => (existsSync(join(s.ctl, 'sbatch.log')) ? readFileSync(join(s.ctl, 'sbatch.log'), 'utf8').split('\n').filter((l) => l !== '') : []);

async function until(what: string, ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

/** Starts the controller; `seen` is its stderr so far. */
function controller(s: Study): { child: ChildProcess; seen: () => string; done: Promise<number | null> } {
  const child = spawn(process.execPath, s.args, { stdio: ['ignore', 'ignore', 'pipe'], env: s.env });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return { child, seen: () => stderr, done: exited(child) };
}

async function killNine(c: { child: ChildProcess; done: Promise<number | null> }): Promise<void> {
  c.child.kill('SIGKILL');
  await c.done;
}

/** The resumed study's end: exactly its budget measured, and Slurm ran exactly one job for each of its trials. */
function assertOneJobPerTrial(s: Study, stderr: string): void {
  const all = trials(s);
  const counted = all.filter(countsAgainstBudget);
  assert.equal(counted.length, 2, stderr);
  assert.ok(
    counted.every((t) => t.state === 'complete'),
    JSON.stringify(all.map((t) => [t.number, t.state, t.failure_reason])),
  );
  const jobs = jobsOf(s);
  assert.equal(jobs.length, 2, `Slurm ran exactly the budget of jobs: ${JSON.stringify(jobs)}\n${stderr}`);
  for (const t of counted) {
    const mine = jobs.filter((j) => j.comment === handleOf(t).comment);
    assert.equal(mine.length, 1, `trial ${t.number}: one job with its comment ${String(handleOf(t).comment)}: ${JSON.stringify(jobs)}`);
    assert.equal(mine[0]?.id, handleOf(t).job_id, `trial ${t.number} stores the job that ran`);
  }
  assert.equal(sbatchCalls(s).length, 2, `two sbatch calls in all: ${sbatchCalls(s).join(', ')}`);
}

describe('a killed controller resumed with the same command runs each trial exactly once', { skip, concurrency: true, timeout: 180_000 }, () => {
  test('killed before its sbatch reached Slurm: an sbatch that never ran is re-queued, one still running is waited for and followed', { timeout: 120_000 }, async () => {
    const s = studyOf('before', 2);
    // Both sbatch calls held before they submit; the controller dies while they wait.
    writeFileSync(join(s.ctl, `hold-before-lmb-${s.name}-t0`), '');
    writeFileSync(join(s.ctl, `hold-before-lmb-${s.name}-t1`), '');
    const first = controller(s);
    await until('both sbatch calls reached', () => existsSync(join(s.ctl, `hold-before-lmb-${s.name}-t0.reached`)) && existsSync(join(s.ctl, `hold-before-lmb-${s.name}-t1.reached`)));
    await killNine(first);
    const [t0, t1] = trials(s);
    assert.equal(handleOf(t0 as Trial).job_id, null, 'only the provisional handle was stored');
    // Trial 0's sbatch never runs (as if the kill came before it started); trial 1's outlives the
    // controller and submits once the resumed one has had its first look.
    process.kill(Number(readFileSync(join(s.ctl, `hold-before-lmb-${s.name}-t0.reached`), 'utf8')), 'SIGKILL');
    rmSync(join(s.ctl, `hold-before-lmb-${s.name}-t0`));
    const again = controller(s);
    const release = setTimeout(() => rmSync(join(s.ctl, `hold-before-lmb-${s.name}-t1`), { force: true }), 20_000);
    await until('the resumed controller looked for its jobs', () => /resuming|waiting for the sbatch an earlier controller started/.test(again.seen()), 60_000);
    rmSync(join(s.ctl, `hold-before-lmb-${s.name}-t1`), { force: true });
    clearTimeout(release);
    assert.equal(await again.done, 0, again.seen());
    assert.match(again.seen(), /1 job\(s\) still in the cluster reattached/);
    assertOneJobPerTrial(s, again.seen());
    const after = trials(s);
    assert.equal(handleOf(after.find((t) => t.id === t1?.id) as Trial).comment, handleOf(t1 as Trial).comment, 'trial 1 kept its job');
    assert.equal(after.find((t) => t.id === t0?.id)?.state, 'failed', 'trial 0, never submitted, was re-queued as a new trial');
  });

  test('killed between sbatch and storing the job id, and after a job wrote its result: both collected from the work dir once Slurm has forgotten them', { timeout: 120_000 }, async () => {
    const s = studyOf('after', 1);
    writeFileSync(join(s.ctl, `hold-after-lmb-${s.name}-t1`), '');
    const first = controller(s);
    await until('trial 1 submitted, its id not yet handed back', () => existsSync(join(s.ctl, `hold-after-lmb-${s.name}-t1.reached`)));
    await killNine(first);
    rmSync(join(s.ctl, `hold-after-lmb-${s.name}-t1`));
    const [t0, t1] = trials(s);
    assert.equal(t0?.state, 'running', 'trial 0 was still running when the controller died');
    assert.equal(handleOf(t1 as Trial).job_id, null, 'trial 1: only the provisional handle was stored');
    await until('trial 0 measured on its node', () => existsSync(join(s.work, s.name, 't0', 'result.json')));
    await until('both jobs done', () => jobsOf(s).length === 2 && jobsOf(s).every((j) => j.state === 'COMPLETED'));
    // Both records purged from the controller's view, as after MinJobAge.
    writeFileSync(join(s.ctl, 'forget'), jobsOf(s).map((j) => j.id).join('\n'));
    const again = controller(s);
    assert.equal(await again.done, 0, again.seen());
    assertOneJobPerTrial(s, again.seen());
  });

  test("killed while its jobs run: a resumed controller whose first answer from Slurm misses them looks again and follows them", { timeout: 120_000 }, async () => {
    const s = studyOf('running', 8);
    const first = controller(s);
    await until('both jobs running with their ids stored', () => {
      const ids = trials(s).map((t) => handleOf(t).job_id);
      return ids.length === 2 && ids.every((id) => typeof id === 'string') && jobsOf(s).filter((j) => j.state === 'RUNNING').length === 2;
    });
    await killNine(first);
    appendFileSync(join(s.ctl, 'hide-once'), jobsOf(s).map((j) => j.id).join('\n'));
    const again = controller(s);
    assert.equal(await again.done, 0, again.seen());
    assert.match(again.seen(), /2 job\(s\) still in the cluster reattached/);
    assertOneJobPerTrial(s, again.seen());
  });
});
