import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchmarkResult } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { spawnArgv, splitArgv, stopProcess } from './process.js';
import type { Target, TrialInput, TrialOutcome } from './types.js';

/**
 * The command target: a user's own harness (Slurm, Kubernetes, a remote box) measures the trial.
 * Protocol (README): lm-bench runs the command as argv (split from the string, never a shell) with
 * LMB_TRIAL_FILE (the trial as JSON) and LMB_RESULT_FILE (where to write a benchmark result JSON).
 * Exit 0 = measured; non-zero = the configuration failed, with the last lines of stderr as reason;
 * a command outliving the trial timeout is killed (SIGTERM, then SIGKILL).
 */
export interface CommandTargetOptions {
  readonly command: string;
  readonly timeoutMs: number;
  /** Turns the harness's JSON into a full BenchmarkResult (the ingest normaliser). */
  readonly parseResult: (raw: unknown, input: TrialInput) => BenchmarkResult;
  readonly env?: NodeJS.ProcessEnv;
  readonly now?: () => number;
}

export function createCommandTarget(opts: CommandTargetOptions): Target {
  const argv = splitArgv(opts.command);
  if (argv.length === 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--command is empty', { details: { field: 'command' } });
  const now = opts.now ?? Date.now;
  return {
    kind: 'command',
    async runTrial(input: TrialInput, signal?: AbortSignal): Promise<TrialOutcome> {
      const t0 = now();
      const dir = await mkdtemp(join(tmpdir(), 'lmb-trial-'));
      const trialFile = join(dir, 'trial.json');
      const resultFile = join(dir, 'result.json');
      try {
        await writeFile(trialFile, JSON.stringify(input, null, 2));
        const p = spawnArgv(argv, {
          env: { ...(opts.env ?? process.env), LMB_TRIAL_FILE: trialFile, LMB_RESULT_FILE: resultFile },
        });
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          void stopProcess(p, 2000);
        }, opts.timeoutMs);
        const onAbort = (): void => void stopProcess(p, 2000);
        signal?.addEventListener('abort', onAbort, { once: true });
        const code = await p.exited;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const durationMs = now() - t0;
        const tail = p.stderr.text() || p.stdout.text();
        if (timedOut) {
          return { status: 'failed', started: true, code: 'LMB_ERR_TRIAL_TIMEOUT', reason: `command outlived the ${opts.timeoutMs} ms trial timeout and was killed${tail ? `: ${tail}` : ''}`, durationMs };
        }
        if (signal?.aborted === true) {
          return { status: 'failed', started: false, code: 'LMB_ERR_INTERRUPTED', reason: 'trial interrupted', durationMs };
        }
        if (code !== 0) {
          return { status: 'failed', started: false, code: 'LMB_ERR_COMMAND_FAILED', reason: `command exited ${code}${tail ? `: ${tail}` : ''}`, durationMs };
        }
        let raw: unknown;
        try {
          raw = JSON.parse(await readFile(resultFile, 'utf8'));
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          return { status: 'failed', started: true, code: 'LMB_ERR_COMMAND_FAILED', reason: `command exited 0 but LMB_RESULT_FILE holds no JSON result (${why})`, durationMs };
        }
        try {
          return { status: 'ok', result: opts.parseResult(raw, input), durationMs };
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          return { status: 'failed', started: true, code: 'LMB_ERR_COMMAND_FAILED', reason: `result file rejected: ${why}`, durationMs };
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
