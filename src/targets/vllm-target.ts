import { rmSync } from 'node:fs';
import type { BenchmarkResult } from '../domain/index.js';
import { vllmServeArgs } from '../domain/index.js';
import { assertVllmExecutable } from './executable.js';
import { waitForHealth } from './health.js';
import { reapSlotProcesses, writePidFile } from './pid-files.js';
import { spawnArgv, stopProcess } from './process.js';
import type { Target, TrialInput, TrialOutcome } from './types.js';

/**
 * The vllm target: starts `vllm serve MODEL <flags from the config>` on a loopback port of its own
 * (argv, no shell), waits for /health, drives the load runner at it, then stops it (SIGTERM, then
 * SIGKILL). A server that exits before it is healthy fails the trial at once with the last lines
 * of its output as the reason — an OOM at start-up costs seconds, not a health timeout.
 */
export interface VllmTargetOptions {
  /** The executable to run; `vllm` from PATH by default. */
  readonly executable?: string;
  /** argv that starts vLLM, in place of `executable` (a container wrapper: `apptainer exec --nv vllm.sif vllm`). */
  readonly command?: readonly string[];
  /** Copy the server's output to this process's stderr as it comes (a batch job's log keeps all of it). */
  readonly echoOutput?: boolean;
  readonly port: number;
  /** Model name passed to `vllm serve` (the Hugging Face name). */
  readonly servedModel: string;
  readonly startupTimeoutMs: number;
  readonly stopGraceMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  /** Runs the bundled load runner against the started server. */
  readonly runLoad: (baseUrl: string, input: TrialInput, signal?: AbortSignal) => Promise<BenchmarkResult>;
  readonly now?: () => number;
  /** Written with the server's pid while it runs, so a crashed study's successor can stop it. */
  readonly pidFile?: string;
  /** Where the executable's name came from, for the message when it is missing (default `--vllm-bin`). */
  readonly executableFrom?: string;
}

export function vllmArgv(opts: Pick<VllmTargetOptions, 'executable' | 'command' | 'port' | 'servedModel'>, input: TrialInput): string[] {
  return [...(opts.command ?? [opts.executable ?? 'vllm']), ...vllmServeArgs(opts.servedModel, input.config), '--host', '127.0.0.1', '--port', String(opts.port)];
}

export function createVllmTarget(opts: VllmTargetOptions): Target {
  const now = opts.now ?? Date.now;
  return {
    kind: 'vllm',
    async runTrial(input: TrialInput, signal?: AbortSignal): Promise<TrialOutcome> {
      const t0 = now();
      const baseUrl = `http://127.0.0.1:${opts.port}`;
      const argv = vllmArgv(opts, input);
      const env = opts.env ?? process.env;
      // Checked again at each trial (a study's preflight checked once; a batch job's node has its own
      // PATH): a missing executable says so, rather than spawn's bare exit 127.
      try {
        assertVllmExecutable(argv[0] as string, env, opts.executableFrom);
      } catch (err) {
        return { status: 'failed', started: false, code: 'LMB_ERR_TARGET_LAUNCH_FAILED', reason: err instanceof Error ? err.message : String(err), durationMs: now() - t0 };
      }
      const p = spawnArgv(argv, { env, ...(opts.echoOutput === true ? { echo: process.stderr } : {}) });
      if (opts.pidFile !== undefined && p.child.pid !== undefined) writePidFile(opts.pidFile, p.child.pid);
      try {
        const health = await waitForHealth({ url: `${baseUrl}/health`, exited: p.exited, timeoutMs: opts.startupTimeoutMs, signal });
        if (!health.ok) {
          const tail = p.stderr.text() || p.stdout.text();
          const durationMs = now() - t0;
          switch (health.why) {
            case 'exited':
              return { status: 'failed', started: false, code: 'LMB_ERR_TARGET_LAUNCH_FAILED', reason: `vllm serve exited ${health.exitCode ?? '?'} before it was healthy${tail ? `: ${tail}` : ''}`, durationMs };
            case 'timeout':
              return { status: 'failed', started: false, code: 'LMB_ERR_TARGET_LAUNCH_FAILED', reason: `vllm serve not healthy after ${opts.startupTimeoutMs} ms${tail ? `: ${tail}` : ''}`, durationMs };
            case 'aborted':
              return { status: 'failed', started: false, code: 'LMB_ERR_INTERRUPTED', reason: 'trial interrupted during start-up', durationMs };
          }
        }
        // A server that dies under load (a run-time CUDA OOM) leaves failed requests behind, not a
        // result: the trial is a crash, with the server's last lines as the reason.
        let exitedDuringLoad: number | null = null;
        void p.exited.then((code) => (exitedDuringLoad = code));
        const crashed = (): TrialOutcome => ({
          status: 'failed',
          started: true,
          code: 'LMB_ERR_SERVER_CRASHED',
          reason: `vllm serve exited ${exitedDuringLoad ?? '?'} during the load run${p.stderr.text() ? `: ${p.stderr.text()}` : ''}`,
          durationMs: now() - t0,
        });
        try {
          const result = await opts.runLoad(baseUrl, input, signal);
          // Failed requests may be a dying server whose exit is not seen yet: give it a moment.
          if (result.failed > 0) await Promise.race([p.exited, new Promise((r) => setTimeout(r, 1000))]);
          if (exitedDuringLoad !== null) return crashed();
          return { status: 'ok', result, durationMs: now() - t0 };
        } catch (err) {
          await Promise.race([p.exited, new Promise((r) => setTimeout(r, 1000))]);
          if (exitedDuringLoad !== null) return crashed();
          const why = err instanceof Error ? err.message : String(err);
          const tail = p.stderr.text();
          return { status: 'failed', started: true, code: 'LMB_ERR_TARGET_LAUNCH_FAILED', reason: `load run failed: ${why}${tail ? `\nserver output: ${tail}` : ''}`, durationMs: now() - t0 };
        }
      } finally {
        await stopProcess(p, opts.stopGraceMs ?? 10_000);
        if (opts.pidFile !== undefined) rmSync(opts.pidFile, { force: true });
      }
    },
  };
}

/**
 * Stops servers a crashed study left running: every `vllm-slot-*.pid` in `stateDir` whose process is
 * still the server it names (pid-files.ts; a file of an older lm-bench: a command line containing
 * `serve`) gets its process group killed. Returns the pids stopped.
 */
export function reapStaleServers(stateDir: string): number[] {
  return reapSlotProcesses(stateDir, 'vllm', (argv) => argv.includes('serve'));
}
