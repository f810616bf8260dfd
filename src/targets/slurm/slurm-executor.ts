import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from '../../catalog/index.js';
import { LmBenchError } from '../../errors.js';
import { stopModeOf, type Executor, type RunHooks } from '../types.js';
import { splitArgv } from '../argv.js';
import type { TargetSpec } from '../spec.js';
import type { TrialInput, TrialOutcome } from '../types.js';
import type { SlurmConfig } from './config.js';
import { JobResultFile, type JobEngine, type JobTrialFile } from './job-files.js';
import { jobComment, jobFiles, jobName, jobScript, sbatchArgv, trialDir, type JobFiles, type JobRequest } from './job-script.js';
import { jobPhase, queueReasonText, type JobEnd } from './job-states.js';
import { processesExit, sbatchInFlight, sleep, startedJobIds } from './job-finder.js';
import { createJobWatcher } from './job-watcher.js';
import { createSlurmCli, type JobStatus, type SlurmCli } from './slurm-cli.js';

/**
 * The Slurm target: each trial one batch job running `lm-bench trial-run` on a node. It runs on
 * the controller's main thread (it only waits on Slurm's commands and the shared filesystem) and
 * reports the job id through `onHandle` the moment sbatch returns it — and a provisional handle
 * (name and comment, no id) before, so a controller killed between the two still finds its job.
 */
export const SlurmHandle = z.object({
  kind: z.literal('slurm'),
  job_id: z.string().nullable(),
  name: z.string(),
  comment: z.string(),
  dir: z.string(),
  submitted_at_ms: z.number().nullable(),
  /** Every job id this trial had (resubmissions after a preemption or node failure add one each). */
  attempts: z.array(z.string()),
  /** Set before lm-bench cancels the job itself, so the cancellation is not read as someone else's. */
  cancelled_by_lm_bench: z.boolean().optional(),
  state: z.string().optional(),
  queued_ms: z.number().optional(),
  run_ms: z.number().optional(),
  collect_ms: z.number().optional(),
});
export type SlurmHandle = z.infer<typeof SlurmHandle>;

type SlurmSpec = Extract<TargetSpec, { kind: 'slurm' }>;

export interface SlurmExecutorDeps {
  /** The study's --parallel; `max_jobs` in the config overrides it. */
  readonly parallel: number;
  readonly cli?: SlurmCli;
  readonly now?: () => number;
  /** Pause before asking Slurm again about a job it did not list (default: the poll interval, at least 1 s). */
  readonly lookAgainMs?: number;
}

/** Looks after a job Slurm did not list, before the trial is given up on (a transient empty answer, a controller fail-over). */
const LOOKS_AGAIN = 2;
/** How long a resumed controller waits for an sbatch the killed one left running (sbatch retries while slurmctld is busy). */
const SBATCH_IN_FLIGHT_MAX_MS = 120_000;

/** How the node runs lm-bench: the config's `lm_bench`, else this Node.js and this checkout (on the shared filesystem). */
export function lmBenchArgv(config: SlurmConfig): string[] {
  return config.lm_bench === undefined ? [process.execPath, join(PROJECT_ROOT, 'bin', 'lm-bench.js')] : splitArgv(config.lm_bench, 'lm_bench');
}

function engineOf(config: SlurmConfig): JobEngine {
  return config.engine === 'sim' ? { kind: 'sim' } : { kind: 'vllm', command: splitArgv(config.vllm, 'vllm'), startup_timeout_ms: Math.round(config.startup_timeout_s * 1000) };
}

/** GPUs a trial's configuration needs: TP × DP (vLLM's defaults are 1). */
export function gpusOf(input: TrialInput): number {
  return (input.config.tensor_parallel_size ?? 1) * (input.config.data_parallel_size ?? 1);
}

const isAborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

function readText(file: string, maxChars = 4000): string {
  try {
    const t = readFileSync(file, 'utf8');
    return t.length > maxChars ? `…${t.slice(-maxChars)}` : t;
  } catch {
    return '';
  }
}

/** The last lines of this attempt's job log (job-<id>.out), for a failure's reason. */
function logTail(dir: string, jobId: string | null, lines = 30): string {
  const file = jobId === null ? null : join(dir, `job-${jobId}.out`);
  const text = file === null ? '' : readText(file);
  return text.trim().split('\n').slice(-lines).join('\n');
}

function readNumber(file: string): number | null {
  const n = Number(readText(file).trim());
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** What `trial-run` left in a trial's dir: its outcome (null: none yet, or not a whole one) and when the job began. */
interface JobLeft {
  readonly result: JobResultFile | null;
  readonly startedAtMs: number | null;
}

function readJobLeft(dir: string): JobLeft {
  const files = jobFiles(dir);
  return { result: readResult(dir), startedAtMs: readNumber(files.started) };
}

function readResult(dir: string): JobResultFile | null {
  const text = readText(jobFiles(dir).result, 64 * 1024 * 1024);
  if (text === '') return null;
  const parsed = JobResultFile.safeParse(safeJson(text));
  return parsed.success ? parsed.data : null;
}

export function createSlurmExecutor(spec: SlurmSpec, deps: SlurmExecutorDeps): Executor {
  const config: SlurmConfig = spec;
  const cli = deps.cli ?? createSlurmCli();
  const now = deps.now ?? Date.now;
  const watcher = createJobWatcher(cli, Math.round(config.poll_interval_s * 1000));
  const lmBench = lmBenchArgv(config);
  const lookAgainMs = deps.lookAgainMs ?? Math.max(1000, Math.round(config.poll_interval_s * 1000));
  let running = 0;

  const requestFor = (input: TrialInput, comment: string): { req: JobRequest; files: JobFiles } => {
    const number = input.trial_number ?? input.trial_id;
    const files = jobFiles(trialDir(config.work_dir, input.study, number));
    return { files, req: { name: jobName(input.study, number), comment, gpus: gpusOf(input), files, lmBench } };
  };

  const submit = async (input: TrialInput, handle: SlurmHandle, hooks: RunHooks | undefined): Promise<SlurmHandle> => {
    const { req, files } = requestFor(input, handle.comment);
    mkdirSync(files.dir, { recursive: true });
    const job: JobTrialFile = { trial: input, engine: engineOf(config) };
    writeFileSync(files.trial, `${JSON.stringify(job, null, 2)}\n`);
    writeFileSync(files.script, jobScript(config, req));
    chmodSync(files.script, 0o755);
    // A resubmission starts clean: an earlier attempt's result or start stamp is not this one's.
    rmSync(files.result, { force: true });
    rmSync(files.started, { force: true });
    const id = await cli.submit(sbatchArgv(config, req));
    const next: SlurmHandle = { ...handle, job_id: id, submitted_at_ms: now(), attempts: [...handle.attempts, id], state: 'PENDING' };
    hooks?.onHandle?.(next);
    return next;
  };

  /** The trial's outcome from what the job left, given how Slurm says it ended. */
  const outcomeOf = (handle: SlurmHandle, end: JobEnd | 'forgotten', runStartMs: number | null, left: JobLeft = readJobLeft(handle.dir)): TrialOutcome => {
    const readAt = now();
    const result = left.result;
    const began = left.startedAtMs ?? runStartMs;
    const durationMs = result !== null ? result.duration_ms : began === null ? 0 : Math.max(0, readAt - began);
    const tail = logTail(handle.dir, handle.job_id);
    const withTail = (s: string): string => (tail === '' ? s : `${s}\njob log (${join(handle.dir, `job-${handle.job_id ?? '?'}.out`)}):\n${tail}`);
    switch (end) {
      case 'completed':
      case 'failed':
      case 'out_of_memory':
      case 'forgotten': {
        if (result?.status === 'ok' && end !== 'out_of_memory') return { status: 'ok', result: result.result, durationMs, ...(result.attrs === undefined ? {} : { attrs: result.attrs }) };
        if (result?.status === 'failed' && end !== 'out_of_memory') return { status: 'failed', code: result.code, reason: result.reason, started: result.started, durationMs };
        if (end === 'out_of_memory') {
          const said = result?.status === 'failed' ? `; the trial said: ${result.reason}` : '';
          return { status: 'failed', code: 'LMB_ERR_SERVER_CRASHED', reason: withTail(`Slurm killed job ${handle.job_id ?? '?'} for exceeding its host memory allocation (OUT_OF_MEMORY)${said}`), started: result?.status === 'failed' ? result.started : null, durationMs };
        }
        if (end === 'forgotten') return { status: 'failed', code: 'LMB_ERR_SLURM_JOB_LOST', reason: withTail(`Slurm no longer knows job ${handle.job_id ?? '?'} and it left no result in ${handle.dir}`), started: null, durationMs };
        // The job ended before lm-bench wrote anything: the setup lines, the node or lm-bench itself, not the configuration.
        return { status: 'failed', code: 'LMB_ERR_COMMAND_FAILED', reason: withTail(`job ${handle.job_id ?? '?'} ended ${end === 'completed' ? 'COMPLETED' : 'FAILED'} without a result from lm-bench trial-run`), started: null, durationMs };
      }
      case 'timeout':
        return { status: 'failed', code: 'LMB_ERR_TRIAL_TIMEOUT', reason: withTail(`job ${handle.job_id ?? '?'} outlived its time limit (${config.time_limit}) and Slurm stopped it (TIMEOUT)`), started: null, durationMs };
      case 'cancelled':
        return handle.cancelled_by_lm_bench === true
          ? { status: 'failed', code: 'LMB_ERR_INTERRUPTED', reason: `job ${handle.job_id ?? '?'} cancelled by lm-bench`, started: null, durationMs }
          : { status: 'failed', code: 'LMB_ERR_TRIAL_CANCELLED', reason: withTail(`job ${handle.job_id ?? '?'} was cancelled outside lm-bench (scancel)`), started: null, durationMs };
      case 'cluster_fault':
        return { status: 'failed', code: 'LMB_ERR_SLURM_JOB_LOST', reason: withTail(`job ${handle.job_id ?? '?'} ended for the cluster's reasons ${handle.attempts.length} time(s) (${handle.state ?? '?'}); resubmissions used up (max_resubmits ${config.max_resubmits})`), started: null, durationMs };
    }
  };

  /**
   * A job squeue did not list, looked for again: in accounting (sacct, where it is on), then, after a
   * pause, by its name and comment. Null when neither knows it (then the work dir decides).
   */
  const lookAgain = async (handle: SlurmHandle): Promise<JobStatus | null> => {
    const id = handle.job_id;
    for (let i = 0; i < LOOKS_AGAIN; i++) {
      const accounted = id === null ? null : ((await cli.accounted([id]))?.get(id) ?? null);
      if (accounted !== null) return accounted;
      await sleep(lookAgainMs);
      const found = await byComment(handle);
      if (found !== null) return found;
      if (readResult(handle.dir) !== null) return null; // it ended meanwhile: the result decides
    }
    return null;
  };

  /** The job squeue lists under the trial's name with its comment (the nonce makes it this trial's), the newest if several. */
  const byComment = async (handle: SlurmHandle): Promise<JobStatus | null> =>
    (await cli.findByName([handle.name])).filter((j) => j.comment === handle.comment && (handle.job_id === null || j.id === handle.job_id)).at(-1) ?? null;

  /**
   * A stored handle's job, found again by a controller that starts: by its id, or (killed between
   * sbatch and storing the id) by an sbatch still running here, its name and comment, or the output
   * file it left; then in any state Slurm, accounting or the work dir remembers. Null when nothing
   * says the job exists: the trial is re-queued.
   */
  const locate = async (stored: SlurmHandle, hooks: RunHooks | undefined): Promise<SlurmHandle | null> => {
    let handle = stored;
    if (handle.job_id === null) {
      // The killed controller's sbatch outlives it and may submit after this look: wait for it first.
      const inflight = sbatchInFlight(handle.comment);
      if (inflight.length > 0) {
        hooks?.onPhase?.({ phase: 'queued', detail: 'waiting for the sbatch an earlier controller started' });
        await processesExit(inflight, SBATCH_IN_FLIGHT_MAX_MS);
      }
      const id = (await byComment(handle))?.id ?? startedJobIds(handle.dir, handle.comment).at(-1) ?? (await lookAgain(handle))?.id ?? null;
      if (id === null) return null; // never submitted
      handle = { ...handle, job_id: id, attempts: [...handle.attempts, id], submitted_at_ms: null };
      hooks?.onHandle?.(handle);
      return handle; // follow() reads a result the job left if Slurm has forgotten it
    }
    const id = handle.job_id;
    if ((await cli.query([id])).has(id)) return handle;
    if (readResult(handle.dir) !== null) return handle;
    return (await lookAgain(handle)) === null ? null : handle;
  };

  /** Waits for the job to end (resubmitting after a cluster fault), reporting queue and run phases. */
  const follow = async (input: TrialInput, first: SlurmHandle, hooks: RunHooks | undefined): Promise<TrialOutcome> => {
    let handle = first;
    let lastPhase = '';
    let runStartMs: number | null = null;
    const signal = hooks?.signal;
    for (;;) {
      const jobId = handle.job_id as string;
      const aborted = signal?.aborted === true;
      if (aborted && stopModeOf(signal) === 'cancel') {
        handle = { ...handle, cancelled_by_lm_bench: true };
        hooks?.onHandle?.(handle);
        await cli.cancel([jobId]);
        return { status: 'failed', code: 'LMB_ERR_INTERRUPTED', reason: `job ${jobId} cancelled by lm-bench`, started: null, durationMs: 0 };
      }
      if (aborted && stopModeOf(signal) === 'detach') {
        return { status: 'failed', code: 'LMB_ERR_INTERRUPTED', reason: `left job ${jobId} to run; a resumed study reattaches to it`, started: null, durationMs: 0 };
      }
      // A stop that lets jobs finish ('finish') keeps following them without the signal. A measured
      // result is taken as soon as its file appears (checked every 250 ms, no load on Slurm), rather
      // than at the next poll after Slurm marks the job COMPLETED: half a poll interval less per trial.
      const fileWait = new AbortController();
      const status = await Promise.race([watcher.next(jobId, aborted ? undefined : signal), measuredResult(handle.dir, fileWait.signal)]);
      fileWait.abort();
      if (status === 'measured') return finished({ ...handle, state: 'COMPLETED' }, 'completed', runStartMs, hooks);
      let known = status;
      if (known === null) {
        if (!aborted && isAborted(signal)) continue; // woken by the stop: decide above
        // Not listed: a result in the work dir settles it; without one, Slurm is asked again before the job counts as lost.
        known = readResult(handle.dir) === null ? await lookAgain(handle) : null;
        if (known === null) return outcomeOf(handle, 'forgotten', runStartMs);
      }
      const phase = jobPhase(known.state);
      switch (phase.phase) {
        case 'queued': {
          const detail = queueReasonText(known.reason);
          if (lastPhase !== `queued:${detail}`) hooks?.onPhase?.({ phase: 'queued', detail });
          lastPhase = `queued:${detail}`;
          continue;
        }
        case 'running':
          if (lastPhase !== 'running') {
            runStartMs = now();
            hooks?.onPhase?.({ phase: 'running' });
            handle = { ...handle, state: 'RUNNING' };
          }
          lastPhase = 'running';
          continue;
        case 'ended': {
          handle = { ...handle, state: known.state };
          if (phase.end === 'cluster_fault' && handle.attempts.length <= config.max_resubmits) {
            // Not the configuration's doing: the same trial again, as a new job.
            handle = await submit(input, handle, hooks);
            lastPhase = '';
            continue;
          }
          return finished(handle, phase.end, runStartMs, hooks);
        }
      }
    }
  };

  /**
   * A job that ended: its outcome, and the handle stored with its final state, queue time
   * (submission → the job's first line), run time and collection time (trial end → result read).
   * The job's files are read once for both.
   */
  const finished = (handle: SlurmHandle, end: JobEnd, runStartMs: number | null, hooks: RunHooks | undefined): TrialOutcome => {
    const left = readJobLeft(handle.dir);
    const outcome = outcomeOf(handle, end, runStartMs, left);
    const { result, startedAtMs } = left;
    const times: { queued_ms?: number; run_ms?: number; collect_ms?: number } = {};
    if (startedAtMs !== null && handle.submitted_at_ms !== null) times.queued_ms = Math.max(0, startedAtMs - handle.submitted_at_ms);
    if (result !== null) {
      times.run_ms = result.ended_at_ms - (startedAtMs ?? result.began_at_ms);
      times.collect_ms = Math.max(0, now() - result.ended_at_ms);
    }
    hooks?.onHandle?.({ ...handle, ...times });
    return outcome;
  };

  return {
    parallel: config.max_jobs ?? deps.parallel,
    asynchronous: true,
    get running() {
      return running;
    },
    async preflight(input) {
      const { req, files } = requestFor({ ...input, trial_number: 0, trial_id: 0 }, 'lmb-preflight');
      const dir = join(config.work_dir, input.study);
      const probe = { ...req, gpus: input.hardware.count, files: { ...files, dir, script: join(dir, 'preflight.sh'), output: join(dir, 'preflight-%j.out') } };
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(probe.files.script, '#!/bin/bash\ntrue\n');
      } catch (err) {
        throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `slurm work_dir ${config.work_dir} is not writable here: ${err instanceof Error ? err.message : String(err)}`, { cause: err, details: { field: 'work_dir' } });
      }
      await cli.testSubmit(sbatchArgv(config, probe));
    },
    async run(input, hooks) {
      running++;
      try {
        const { req, files } = requestFor(input, jobComment(input.trial_id, randomBytes(4).toString('hex')));
        const provisional: SlurmHandle = { kind: 'slurm', job_id: null, name: req.name, comment: req.comment, dir: files.dir, submitted_at_ms: null, attempts: [] };
        hooks?.onHandle?.(provisional);
        const handle = await submit(input, provisional, hooks);
        hooks?.onPhase?.({ phase: 'queued', detail: 'submitted' });
        return await follow(input, handle, hooks);
      } finally {
        running--;
      }
    },
    async reattach(input, raw, hooks) {
      const parsed = SlurmHandle.safeParse(raw);
      if (!parsed.success) return null;
      if (parsed.data.cancelled_by_lm_bench === true) {
        // lm-bench meant to cancel it (the trial runs again); a controller killed before its scancel left it running.
        if (parsed.data.job_id !== null) await cli.cancel([parsed.data.job_id]);
        return null;
      }
      const handle = await locate(parsed.data, hooks);
      if (handle === null) return null;
      running++;
      const outcome = follow(input, handle, hooks).finally(() => running--);
      return { outcome };
    },
    close() {
      watcher.close();
      return Promise.resolve();
    },
  };
}

/** Resolves 'measured' once the trial's result file holds a measured result; never, once `stop` aborts. */
function measuredResult(dir: string, stop: AbortSignal): Promise<'measured'> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (stop.aborted) return;
      if (readResult(dir)?.status === 'ok') resolve('measured');
      else setTimeout(check, 250);
    };
    check();
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Job dirs of a study in a work dir (for tests and `docs/slurm.md`'s "what the work dir holds"). */
export function studyJobDirs(workDir: string, study: string): string[] {
  const dir = join(workDir, study);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => /^t\d+$/.test(n)).map((n) => join(dir, n));
}
