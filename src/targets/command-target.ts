import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog } from '../catalog/index.js';
import { ResolvedServerConfig, type BenchmarkResult } from '../domain/index.js';
import { resolveConfig } from '../physics/index.js';
import { parseJsonDocuments } from '../ingest/json-text.js';
import { splitArgv } from './argv.js';
import { reapSlotProcesses, writePidFile } from './pid-files.js';
import { spawnArgv, stopProcess } from './process.js';
import type { Target, TrialInput, TrialOutcome } from './types.js';

/**
 * The command target: a user's own harness (Slurm, Kubernetes, a remote box) measures the trial.
 * Protocol (README): lm-bench runs the command as argv (split from the string, never a shell) with
 * LMB_TRIAL_FILE (the trial as JSON) and LMB_RESULT_FILE (where to write a benchmark result JSON).
 * Exit 0 = measured; non-zero = the configuration failed, with the last lines of stderr as reason;
 * a command outliving the trial timeout is killed (SIGTERM, then SIGKILL).
 *
 * The trial file's `config` holds every knob: the values the trial chose and, for the rest, the values
 * vLLM would resolve them to on this deployment; `explicit` names the knobs the trial chose. A harness
 * for another engine cannot know vLLM's defaults, and the defaults trial chooses none, so without this
 * it would map an empty config to its own engine's defaults while the report compares against vLLM's.
 */
export interface CommandTargetOptions {
  readonly command: string;
  readonly timeoutMs: number;
  /** Turns the harness's JSON into a full BenchmarkResult (the ingest normaliser). */
  readonly parseResult: (raw: unknown, input: TrialInput) => BenchmarkResult;
  readonly env?: NodeJS.ProcessEnv;
  readonly now?: () => number;
  /** vLLM's value for every knob of the trial's config on its GPU and model; default: the bundled catalog's. */
  readonly resolve?: (input: TrialInput) => ResolvedServerConfig;
  /**
   * Where the running command's pid is kept (pid-files.ts), so a study resumed after its controller was
   * killed stops the harness that controller left running before it runs the trial again.
   */
  readonly pidFile?: string;
}

/** What the harness reads from LMB_TRIAL_FILE: the trial, its config complete (see above), and which knobs it chose. */
export type TrialFile = Omit<TrialInput, 'config'> & { readonly config: ResolvedServerConfig; readonly explicit: string[] };

export function trialFileOf(input: TrialInput, resolved: ResolvedServerConfig): TrialFile {
  // The trial's own values win: vLLM resolves some knobs against others (a capture size above the token
  // budget is cut down), and a harness should be handed what the trial asked for.
  const chosen = Object.entries(input.config).filter(([, v]) => v !== undefined);
  return { ...input, config: ResolvedServerConfig.parse({ ...resolved, ...Object.fromEntries(chosen) }), explicit: chosen.map(([k]) => k).sort() };
}

/**
 * The result file's one JSON document. Python's json.dump writes bare NaN and Infinity, which JSON.parse
 * refuses: they are read as the strings ingest reads them as, so the figure they stand for is refused by
 * name (harness-result.ts) rather than the whole file as "no JSON".
 */
function resultJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const parsed = (() => {
      try {
        return parseJsonDocuments(text);
      } catch {
        return null;
      }
    })();
    const doc = parsed?.docs.length === 1 ? parsed.docs[0] : undefined;
    if (doc === undefined) throw err;
    return doc.value;
  }
}

function catalogResolve(input: TrialInput): ResolvedServerConfig {
  const catalog = defaultCatalog();
  return resolveConfig(input.config, catalog.gpu(input.hardware.gpu), catalog.model(input.model));
}

export function createCommandTarget(opts: CommandTargetOptions): Target {
  // The spec's schema already split it (argvCommand); a direct caller gets the same catalog error.
  const argv = splitArgv(opts.command, '--command');
  const now = opts.now ?? Date.now;
  const resolve = opts.resolve ?? catalogResolve;
  return {
    kind: 'command',
    async runTrial(input: TrialInput, signal?: AbortSignal): Promise<TrialOutcome> {
      const t0 = now();
      const dir = await mkdtemp(join(tmpdir(), 'lmb-trial-'));
      const trialFile = join(dir, 'trial.json');
      const resultFile = join(dir, 'result.json');
      try {
        await writeFile(trialFile, JSON.stringify(trialFileOf(input, resolve(input)), null, 2));
        const p = spawnArgv(argv, {
          env: { ...(opts.env ?? process.env), LMB_TRIAL_FILE: trialFile, LMB_RESULT_FILE: resultFile },
        });
        if (opts.pidFile !== undefined && p.child.pid !== undefined) writePidFile(opts.pidFile, p.child.pid);
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
        // The trial ends with the command: whatever it left running in the background (a server it
        // started, a helper holding its pipes) is stopped with it, not left to hold the GPUs the next
        // trial needs (a harness's daemon meant to outlive it detaches into a session of its own).
        await stopProcess(p, 2000);
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
          raw = resultJson(await readFile(resultFile, 'utf8'));
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
        if (opts.pidFile !== undefined) await rm(opts.pidFile, { force: true });
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Stops harnesses a killed controller left running: every `command-slot-*.pid` in `stateDir` whose
 * process is still the one recorded (its start time; a file without one is left alone, since any
 * command line may be a harness). Returns the pids stopped.
 */
export function reapStaleHarnesses(stateDir: string): number[] {
  return reapSlotProcesses(stateDir, 'command', () => false);
}
