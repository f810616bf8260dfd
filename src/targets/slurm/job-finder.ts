import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * What a restarted controller can learn about a trial's job besides asking Slurm: an sbatch the
 * killed controller left running on this machine (its child outlives it and may submit after the
 * new controller has looked), and the traces the job left in the trial's dir (one `job-<id>.out`
 * per attempt that started). Slurm forgets a finished job after MinJobAge; these do not.
 */

/**
 * Pids of sbatch processes on this machine submitting the job with this comment. sbatch's argv
 * carries `--comment=<comment>` (job-script.ts `sbatchArgv`), and the comment holds the trial's
 * nonce, so no other study's or user's sbatch matches. Empty where /proc cannot be read.
 */
export function sbatchInFlight(comment: string, procDir = '/proc'): number[] {
  let entries: string[];
  try {
    entries = readdirSync(procDir);
  } catch {
    return [];
  }
  const want = `--comment=${comment}`;
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let argv: string[];
    try {
      argv = readFileSync(join(procDir, entry, 'cmdline'), 'utf8').split('\0');
    } catch {
      continue; // ended while we looked, or not ours to read
    }
    // argv[0] is sbatch itself, or the interpreter of a wrapper script named sbatch.
    if (argv.includes(want) && argv.slice(0, 2).some((a) => basename(a) === 'sbatch')) pids.push(Number(entry));
  }
  return pids;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Resolves once none of the pids is alive, or after `maxWaitMs` (an sbatch retrying against a controller that is down). */
export async function processesExit(pids: readonly number[], maxWaitMs: number, stepMs = 100): Promise<void> {
  const deadline = Date.now() + maxWaitMs;
  while (pids.some(alive) && Date.now() < deadline) await sleep(stepMs);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Job ids of the attempts that started in this trial's dir with this comment, oldest first: Slurm
 * opens `job-<id>.out` when the job starts on its node, and the job script's second line prints
 * `lm-bench job <id>: <comment>` there (job-script.ts), so a job of another study or database that
 * shares the work dir, or an earlier attempt under another nonce, is never taken for this one.
 */
export function startedJobIds(dir: string, comment: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((n) => /^job-(\d+)(?:_(\d+))?\.out$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .filter((m) => headOf(join(dir, m[0])).includes(`lm-bench job ${m[2] === undefined ? (m[1] as string) : `${m[1]}_${m[2]}`}: ${comment}\n`))
    .sort((a, b) => Number(a[1]) - Number(b[1]) || Number(a[2] ?? 0) - Number(b[2] ?? 0))
    .map((m) => (m[2] === undefined ? (m[1] as string) : `${m[1]}_${m[2]}`));
}

/** The first bytes of a file (a job log may be vLLM's whole output; the line sought is near its start). */
function headOf(file: string, bytes = 8192): string {
  try {
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(bytes);
      return buf.toString('utf8', 0, readSync(fd, buf, 0, bytes, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}
