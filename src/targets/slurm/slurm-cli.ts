import { execFile } from 'node:child_process';
import { LmBenchError } from '../../errors.js';

/**
 * Slurm's own commands, run as argv (never a shell): sbatch to submit, squeue to see every job of
 * ours in one call, scancel to stop them. Accounting may be off (it is on many small clusters), so
 * nothing depends on sacct: squeue sees finished jobs for MinJobAge seconds, and past that the job's
 * own files in the work dir tell what happened. Where accounting is on, sacct is a second opinion on
 * a job squeue no longer lists.
 */
export interface ExecResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}
export type Exec = (argv: readonly string[], timeoutMs: number) => Promise<ExecResult>;

export const execArgv: Exec = (argv, timeoutMs) =>
  new Promise((resolve) => {
    const [file, ...args] = argv;
    execFile(file as string, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, shell: false }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: number | string }) | null;
      const code = e === null ? 0 : typeof e.code === 'number' ? e.code : e.code === 'ENOENT' ? 127 : 1;
      resolve({ code, stdout: String(stdout), stderr: err !== null && String(stderr) === '' ? err.message : String(stderr) });
    });
  });

/** A job as squeue shows it. */
export interface JobStatus {
  readonly id: string;
  readonly name: string;
  /** JobState: PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, … */
  readonly state: string;
  /** Why it is pending or how it ended (Resources, Priority, TimeLimit, NonZeroExitCode, …). */
  readonly reason: string;
  readonly comment: string;
}

const SEP = '\u001f';
const FORMAT = ['%i', '%j', '%T', '%r', '%k'].join(SEP);
const TIMEOUT_MS = 60_000;

export interface SlurmCli {
  /** Submits; returns the job id. Throws LMB_ERR_SLURM_SUBMIT_FAILED with sbatch's message. */
  submit(argv: readonly string[]): Promise<string>;
  /** Validates a request without queueing it (sbatch --test-only): a bad partition fails before any trial. */
  testSubmit(argv: readonly string[]): Promise<void>;
  /** Every listed job Slurm still knows (absent: finished longer than MinJobAge ago, or never existed). */
  query(ids: readonly string[]): Promise<Map<string, JobStatus>>;
  /** Jobs with these names, in any state Slurm still remembers. */
  findByName(names: readonly string[]): Promise<JobStatus[]>;
  /** What accounting (sacct) says of these jobs; null where sacct is missing, accounting is off or it fails. */
  accounted(ids: readonly string[]): Promise<Map<string, JobStatus> | null>;
  cancel(ids: readonly string[]): Promise<void>;
}

function parseLines(stdout: string): JobStatus[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [id = '', name = '', state = '', reason = '', comment = ''] = l.split(SEP);
      // An array job or a requeued one may print a suffixed state ("CANCELLED by 0"); the word is the state.
      return { id: id.trim(), name, state: state.trim().split(/\s+/)[0] ?? '', reason: reason.trim(), comment: comment.trim() };
    });
}

export function createSlurmCli(exec: Exec = execArgv): SlurmCli {
  const unavailable = (what: string, r: ExecResult): LmBenchError =>
    new LmBenchError('LMB_ERR_SLURM_UNAVAILABLE', `${what} failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim() || 'no output'}${r.code === 127 ? ' — is Slurm installed on this machine (sbatch, squeue, scancel on PATH)?' : ''}`, {
      details: { field: 'slurm', exit_code: r.code },
    });
  return {
    async submit(argv) {
      const r = await exec(argv, TIMEOUT_MS);
      if (r.code === 127) throw unavailable('sbatch', r);
      const id = r.stdout.trim().split(';')[0]?.trim() ?? '';
      if (r.code !== 0 || !/^\d+(_\d+)?$/.test(id)) {
        throw new LmBenchError('LMB_ERR_SLURM_SUBMIT_FAILED', `sbatch refused the job: ${r.stderr.trim() || r.stdout.trim() || `exit ${r.code}`}`, { details: { field: 'slurm', exit_code: r.code } });
      }
      return id;
    },
    async testSubmit(argv) {
      const [cmd, ...rest] = argv;
      const r = await exec([cmd as string, '--test-only', ...rest.filter((a) => a !== '--parsable')], TIMEOUT_MS);
      if (r.code === 127) throw unavailable('sbatch', r);
      if (r.code !== 0) {
        throw new LmBenchError('LMB_ERR_SLURM_SUBMIT_FAILED', `sbatch --test-only refused the study's job request: ${r.stderr.trim() || r.stdout.trim()}`, { details: { field: 'slurm', exit_code: r.code } });
      }
    },
    async query(ids) {
      const out = new Map<string, JobStatus>();
      if (ids.length === 0) return out;
      const r = await exec(['squeue', '--noheader', '--states=all', `--jobs=${ids.join(',')}`, `--format=${FORMAT}`], TIMEOUT_MS);
      // squeue exits 1 when none of the ids is known any more: that is an answer, not an outage.
      if (r.code !== 0 && /invalid job id/i.test(r.stderr)) return out;
      if (r.code !== 0) throw unavailable('squeue', r);
      for (const j of parseLines(r.stdout)) out.set(j.id, j);
      return out;
    },
    async findByName(names) {
      if (names.length === 0) return [];
      const r = await exec(['squeue', '--noheader', '--states=all', `--name=${names.join(',')}`, `--format=${FORMAT}`], TIMEOUT_MS);
      if (r.code !== 0) throw unavailable('squeue', r);
      return parseLines(r.stdout);
    },
    async accounted(ids) {
      if (ids.length === 0) return new Map();
      // -X: the job's own line, not its steps'. No comment column: sacct keeps comments only with AccountingStoreFlags=job_comment.
      const r = await exec(['sacct', '--noheader', '--parsable2', `--delimiter=${SEP}`, '--allocations', `--jobs=${ids.join(',')}`, '--format=JobIDRaw,JobName,State'], TIMEOUT_MS);
      if (r.code !== 0) return null;
      const out = new Map<string, JobStatus>();
      for (const l of r.stdout.split('\n').filter((x) => x.trim() !== '')) {
        const [id = '', name = '', state = ''] = l.split(SEP);
        out.set(id.trim(), { id: id.trim(), name, state: state.trim().split(/\s+/)[0] ?? '', reason: '', comment: '' });
      }
      return out;
    },
    async cancel(ids) {
      if (ids.length === 0) return;
      const r = await exec(['scancel', ...ids], TIMEOUT_MS);
      // A job that ended meanwhile is not an error worth failing the stop for.
      if (r.code !== 0 && !/invalid job id|already completing or completed/i.test(r.stderr)) throw unavailable('scancel', r);
    },
  };
}
