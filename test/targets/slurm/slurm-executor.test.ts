import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCatalog, PROJECT_ROOT } from '../../../src/catalog/index.js';
import { StudySpec, type ServerConfig, type Trial, type Workload } from '../../../src/domain/index.js';
import { DEFAULT_OBJECTIVES } from '../../../src/optimize/objectives.js';
import { loadSpace } from '../../../src/space/index.js';
import { openStore } from '../../../src/store/sqlite-store.js';
import { createSimTarget } from '../../../src/targets/sim-target.js';
import { JobResultFile } from '../../../src/targets/slurm/job-files.js';
import { createSlurmExecutor, SlurmHandle } from '../../../src/targets/slurm/slurm-executor.js';
import { createSlurmCli, type SlurmCli } from '../../../src/targets/slurm/slurm-cli.js';
import { TargetSpec, type TargetSpecInput } from '../../../src/targets/spec.js';
import type { TuneEvent } from '../../../src/tune/loop.js';
import { runStudy, trialInputOf } from '../../../src/tune/study-runner.js';
import { localSlurm } from '../../helpers/slurm.js';

/**
 * The Slurm target against a real cluster: scripts/slurm-local.sh up (one node, four placeholder
 * GPUs). Each study here is real sbatch jobs running `lm-bench trial-run` on the node; the tests run
 * side by side, as studies sharing a cluster do.
 */
const cluster = localSlurm();
const skip = cluster.skip;
const catalog = defaultCatalog();
const spacePath = join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml');
const space = loadSpace(spacePath);
const fakeVllm = fileURLToPath(new URL('../../fixtures/targets/vllm', import.meta.url));

const workload: Workload = {
  name: 'slurm-small',
  api: 'completions',
  input_len: { dist: 'fixed', value: 128 },
  output_len: { dist: 'fixed', value: 32 },
  arrival: { kind: 'closed', concurrency: 8 },
  num_prompts: 40,
  ignore_eos: true,
  slo: { ttft_p99_ms: 5000, itl_p99_ms: 200 },
};

interface Run {
  readonly trials: Trial[];
  readonly events: TuneEvent[];
  readonly reason: string;
  readonly spec: StudySpec;
}

async function study(name: string, opts: { gpus?: number; budget: number; parallel: number; slurm: Partial<TargetSpecInput>; enqueue?: ServerConfig[]; onEvent?: (e: TuneEvent, trials: () => Trial[]) => void }): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), `lmb-slurm-${name}-`));
  const workDir = join(dir, 'work');
  const store = openStore(join(dir, 'h.db'));
  const target = TargetSpec.parse({ kind: 'slurm', partition: cluster.partition, time_limit: '5', engine: 'sim', work_dir: workDir, poll_interval_s: 0.3, ...opts.slurm });
  const spec = StudySpec.parse({
    name,
    space: spacePath,
    hardware: { gpu: 'H100-SXM', count: opts.gpus ?? 1 },
    model: 'llama-3.1-8b',
    workload,
    slo: workload.slo,
    objectives: [...DEFAULT_OBJECTIVES],
    target: JSON.stringify(target),
    seed: 3,
    budget_trials: opts.budget,
    budget_hours: null,
    parallel: opts.parallel,
  });
  const events: TuneEvent[] = [];
  try {
    const { summary } = await runStudy({
      store,
      catalog,
      space,
      spec,
      target,
      now: Date.now,
      sampler: 'random',
      keepSurrogate: false,
      ...(opts.enqueue === undefined ? {} : { enqueue: opts.enqueue }),
      onEvent: (e) => {
        events.push(e);
        opts.onEvent?.(e, () => store.listTrials(store.getStudy(name).id));
      },
    });
    return { trials: store.listTrials(store.getStudy(name).id), events, reason: summary.reason, spec };
  } finally {
    store.close();
  }
}

function handleOf(t: Trial): SlurmHandle {
  return SlurmHandle.parse(t.attrs['job']);
}

/** When each trial's job ran on the node: its start stamp to trial-run's end. */
function intervals(run: Run): { start: number; end: number; gpus: number }[] {
  return run.trials.map((t) => {
    const h = handleOf(t);
    const result = JobResultFile.parse(JSON.parse(readFileSync(join(h.dir, 'result.json'), 'utf8')));
    return { start: Number(readFileSync(join(h.dir, 'started_at_ms'), 'utf8')), end: result.ended_at_ms, gpus: (t.config.tensor_parallel_size ?? 1) * (t.config.data_parallel_size ?? 1) };
  });
}

function maxOverlap(iv: { start: number; end: number; gpus: number }[], weight: (i: { gpus: number }) => number): number {
  let best = 0;
  for (const a of iv) best = Math.max(best, iv.filter((b) => b.start <= a.start && a.start < b.end).reduce((s, b) => s + weight(b), 0));
  return best;
}

describe('the Slurm target on a real cluster', { skip, concurrency: true, timeout: 300_000 }, () => {
  test('a study of 4 trials with 2 jobs at a time completes, each trial one job, with the sim target’s numbers', { timeout: 120_000 }, async () => {
    const run = await study('four-by-two', { budget: 4, parallel: 2, slurm: {} });
    assert.equal(run.reason, 'budget');
    assert.equal(run.trials.length, 4);
    assert.ok(run.trials.every((t) => t.state === 'complete'), JSON.stringify(run.trials.map((t) => [t.state, t.failure_reason])));
    const handles = run.trials.map(handleOf);
    assert.equal(new Set(handles.map((h) => h.job_id)).size, 4, 'four distinct jobs');
    for (const [i, h] of handles.entries()) {
      assert.equal(h.state, 'COMPLETED');
      assert.equal(h.name, `lmb-four-by-two-t${run.trials[i]?.number}`);
      assert.ok((h.queued_ms ?? -1) >= 0 && (h.collect_ms ?? -1) >= 0);
    }
    assert.ok(maxOverlap(intervals(run), () => 1) <= 2, 'never more than 2 jobs at once');
    assert.ok(run.events.some((e) => e.kind === 'trial_phase' && e.phase.phase === 'running'));
    // Inside the job, the sim engine is the embedded simulator: the same numbers as --target sim.
    const first = run.trials[0] as Trial;
    const local = await createSimTarget({ catalog }).runTrial(trialInputOf(run.spec, first));
    assert.equal(local.status, 'ok');
    if (local.status === 'ok') assert.equal(first.result?.output_throughput, local.result.output_throughput);
  });

  test('jobs that need more GPUs than are free wait in the queue behind each other (queue time is not trial time)', { timeout: 120_000 }, async () => {
    const tp2: ServerConfig[] = [{ tensor_parallel_size: 2 }, { tensor_parallel_size: 2, max_num_seqs: 128 }, { tensor_parallel_size: 2, max_num_seqs: 64 }];
    const run = await study('queued', { gpus: 4, budget: 4, parallel: 4, enqueue: tp2, slurm: { setup: ['sleep 2'] } });
    assert.equal(run.reason, 'budget');
    assert.ok(run.trials.every((t) => t.state === 'complete'), JSON.stringify(run.trials.map((t) => t.failure_reason)));
    const iv = intervals(run);
    assert.ok(maxOverlap(iv, (i) => i.gpus) <= 4, 'Slurm never ran more GPUs than the node has');
    const waited = run.events.filter((e) => e.kind === 'trial_phase' && e.phase.phase === 'queued' && e.phase.detail !== 'submitted');
    assert.ok(waited.length > 0, 'a job was seen waiting for GPUs');
    // 1 + 3×2 GPUs on a 4-GPU node: some job started only after another had ended.
    assert.ok(iv.some((a) => iv.some((b) => a !== b && a.start >= b.end)), JSON.stringify(iv));
    const queued = run.trials.map((t) => handleOf(t).queued_ms ?? 0);
    assert.ok(Math.max(...queued) > 1000, `the longest queue time ${Math.max(...queued)} ms`);
    // Queue time is not trial time: a trial's duration is its run on the node, without the wait.
    for (const e of run.events) {
      if (e.kind !== 'trial_finished') continue;
      const h = handleOf(run.trials.find((t) => t.id === e.trial.id) as Trial);
      assert.ok(e.outcome.durationMs <= (h.run_ms ?? 0), `trial ${e.trial.number}: ${e.outcome.durationMs} ms measured, ${h.run_ms} ms on the node`);
    }
  });

  test('a configuration the engine refuses fails its job, and the trial is a launch failure with vLLM’s reason', { timeout: 120_000 }, async () => {
    const refused: ServerConfig = { enable_chunked_prefill: false, max_num_batched_tokens: 2048, max_model_len: 8192 };
    const run = await study('refused', { budget: 2, parallel: 2, enqueue: [refused], slurm: {} });
    const t = run.trials.find((x) => x.config.max_num_batched_tokens === 2048) as Trial;
    assert.equal(t.state, 'failed');
    assert.equal(t.started, false);
    assert.equal(handleOf(t).state, 'FAILED');
    assert.match(t.failure_reason ?? '', /max_num_batched_tokens \(2048\) is smaller than max_model_len/);
  });

  test('a job that outlives its time limit ends as a trial time-out, not as a configuration that fails to start', { timeout: 180_000 }, async () => {
    const run = await study('timeout', { budget: 1, parallel: 1, slurm: { time_limit: '1', engine: 'vllm', vllm: fakeVllm, env: { LMB_FAKE_VLLM_MODE: 'hang' }, startup_timeout_s: 3600, poll_interval_s: 1 } });
    const t = run.trials[0] as Trial;
    assert.equal(t.state, 'failed');
    assert.equal(handleOf(t).state, 'TIMEOUT');
    assert.match(t.failure_reason ?? '', /outlived its time limit \(1\)/);
    assert.equal(t.started, null, 'a time-out is not a launch failure');
    assert.equal((t.attrs['failure'] as { class?: string } | undefined)?.class, 'timeout');
  });

  test('a controller killed between sbatch and storing the job id finds its job again by name and comment', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lmb-slurm-lost-id-'));
    const target = TargetSpec.parse({ kind: 'slurm', partition: cluster.partition, time_limit: '5', engine: 'sim', work_dir: join(dir, 'work'), poll_interval_s: 0.3, setup: ['sleep 2'] });
    if (target.kind !== 'slurm') throw new Error('unreachable');
    const spec = StudySpec.parse({ name: `lost-id-${process.pid}`, space: spacePath, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, slo: workload.slo, objectives: [...DEFAULT_OBJECTIVES], target: JSON.stringify(target), seed: 1, budget_trials: 1, budget_hours: null, parallel: 1 });
    const input = trialInputOf(spec, { id: 41, number: 0, config: {} });
    // The first controller: only its provisional handle (name and comment, no id) reached the store.
    const first = createSlurmExecutor(target, { parallel: 1 });
    const seen: { provisional: Record<string, unknown> | null } = { provisional: null };
    const abandoned = new AbortController();
    void first.run(input, { onHandle: (h) => (seen.provisional ??= h), signal: abandoned.signal }).catch(() => undefined);
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        const r = spawnSync('squeue', ['--noheader', '--states=all', `--name=lmb-${spec.name}-t0`, '--format=%i'], { encoding: 'utf8' });
        if (r.stdout.trim() !== '') {
          clearInterval(poll);
          resolve();
        }
      }, 100);
    });
    await first.close();
    const provisional = seen.provisional;
    assert.equal(provisional?.['job_id'], null);
    const second = createSlurmExecutor(target, { parallel: 1 });
    try {
      const stored: Record<string, unknown>[] = [];
      const found = await second.reattach?.(input, provisional, { onHandle: (h) => stored.push(h) });
      assert.ok(found !== null && found !== undefined, 'the job was found');
      const outcome = await found.outcome;
      assert.equal(outcome.status, 'ok', outcome.status === 'failed' ? outcome.reason : '');
      assert.match(String(stored[0]?.['job_id']), /^\d+$/, 'the id is stored as soon as it is found');
      // A provisional handle whose job was never submitted (another nonce) is nothing to follow: it is re-queued.
      assert.equal(await second.reattach?.(input, { ...provisional, comment: 'lmb-trial-41-00000000' }), null);
    } finally {
      await second.close();
    }
  });

  test('a job lost to a node failure is resubmitted as a new job, within max_resubmits, and never counted as infeasible', { timeout: 120_000 }, async () => {
    // A real node failure would kill every test's jobs on this one-node cluster, so the fault is
    // injected where Slurm reports it: the first job really is killed (scancel) once it runs, and
    // squeue's answer for it says NODE_FAIL. Everything else is the real cluster.
    const real = createSlurmCli();
    const faultingCli = (): SlurmCli & { faulted: string[] } => {
      const faulted: string[] = [];
      return {
        ...real,
        faulted,
        async query(ids) {
          const known = await real.query(ids);
          for (const [id, st] of known) {
            if (faulted.length === 0 && st.state === 'RUNNING') {
              faulted.push(id);
              await real.cancel([id]);
            }
            if (faulted.includes(id)) known.set(id, { ...st, state: 'NODE_FAIL', reason: 'NodeDown' });
          }
          return known;
        },
      };
    };
    const dir = mkdtempSync(join(tmpdir(), 'lmb-slurm-nodefail-'));
    const base = { kind: 'slurm', partition: cluster.partition, time_limit: '5', engine: 'sim', work_dir: join(dir, 'work'), poll_interval_s: 0.3, setup: ['sleep 1'] };
    const spec = StudySpec.parse({ name: `nodefail-${process.pid}`, space: spacePath, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, slo: workload.slo, objectives: [...DEFAULT_OBJECTIVES], target: JSON.stringify(base), seed: 1, budget_trials: 1, budget_hours: null, parallel: 1 });
    const resubmitting = TargetSpec.parse(base);
    const cli = faultingCli();
    if (resubmitting.kind !== 'slurm') throw new Error('unreachable');
    const handles: SlurmHandle[] = [];
    const ok = await createSlurmExecutor(resubmitting, { parallel: 1, cli }).run(trialInputOf(spec, { id: 51, number: 0, config: {} }), { onHandle: (h) => handles.push(SlurmHandle.parse(h)) });
    assert.equal(ok.status, 'ok', ok.status === 'failed' ? ok.reason : '');
    const last = handles.at(-1) as SlurmHandle;
    assert.equal(last.attempts.length, 2);
    assert.equal(last.attempts[0], cli.faulted[0]);
    assert.notEqual(last.attempts[1], last.attempts[0]);
    assert.equal(last.job_id, last.attempts[1]);
    // With no resubmission left, the trial ends as lost to the cluster: started unknown, so not infeasible.
    const noRetry = TargetSpec.parse({ ...base, max_resubmits: 0 });
    if (noRetry.kind !== 'slurm') throw new Error('unreachable');
    const lost = await createSlurmExecutor(noRetry, { parallel: 1, cli: faultingCli() }).run(trialInputOf(spec, { id: 52, number: 1, config: {} }));
    assert.equal(lost.status, 'failed');
    if (lost.status !== 'failed') return;
    assert.equal(lost.code, 'LMB_ERR_SLURM_JOB_LOST');
    assert.equal(lost.started, null);
    assert.match(lost.reason, /NODE_FAIL/);
  });

  test('a job cancelled by someone else ends its trial as cancelled, not infeasible', { timeout: 120_000 }, async () => {
    let cancelled = false;
    const run = await study('cancelled', {
      budget: 1,
      parallel: 1,
      slurm: { setup: ['sleep 60'] },
      onEvent: (e, trials) => {
        if (cancelled || e.kind !== 'trial_phase' || e.phase.phase !== 'running') return;
        cancelled = true;
        const id = handleOf(trials().find((t) => t.id === e.trial.id) as Trial).job_id as string;
        const r = spawnSync('scancel', [id], { encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
      },
    });
    const t = run.trials[0] as Trial;
    assert.ok(cancelled);
    assert.equal(t.state, 'failed');
    assert.equal(handleOf(t).state, 'CANCELLED');
    assert.match(t.failure_reason ?? '', /cancelled outside lm-bench/);
    assert.equal(t.started, null);
  });
});
