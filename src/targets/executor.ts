import { Piscina } from 'piscina';
import { LmBenchError } from '../errors.js';
import { reapStaleServers } from './vllm-target.js';
import { createSlurmExecutor } from './slurm/slurm-executor.js';
import type { TargetSpec } from './spec.js';
import type { TrialInput, TrialOutcome } from './types.js';

/**
 * Runs trials on a target in piscina worker threads, at most `parallel` at once, each on a slot of
 * its own (the vllm target's port is base_port + slot); more wait their turn. The main thread keeps the store (the one
 * writer); workers get plain data and send plain outcomes back.
 */
export interface Executor {
  readonly parallel: number;
  /**
   * True when trials wait in a queue outside lm-bench (Slurm): the loop then proposes as soon as a
   * slot frees instead of in rounds, since a round would wait for its slowest queued job.
   */
  readonly asynchronous?: boolean;
  run(input: TrialInput, hooks?: RunHooks): Promise<TrialOutcome>;
  /**
   * Follows a trial a previous controller started (its stored handle), or null when there is
   * nothing to follow (not this executor's handle, never submitted, cancelled by lm-bench).
   */
  reattach?(input: TrialInput, handle: unknown, hooks?: RunHooks): Promise<{ readonly outcome: Promise<TrialOutcome> } | null>;
  /** Checks that the target can take this study's trials at all, before the study starts. */
  preflight?(input: TrialInput): Promise<void>;
  /** Trials running right now. */
  readonly running: number;
  close(): Promise<void>;
}

/**
 * What a trial's run reports back while it runs: a handle to store with the trial before anything
 * waits on it (a Slurm job id), its queue/run phase for progress, and the study's stop signal.
 */
export interface RunHooks {
  readonly onHandle?: (handle: Record<string, unknown>) => void;
  readonly onPhase?: (phase: TrialPhase) => void;
  readonly signal?: AbortSignal;
}
export type TrialPhase = { readonly phase: 'queued'; readonly detail: string } | { readonly phase: 'running' };

/**
 * How a stop treats trials that run outside lm-bench (the abort's reason): `finish` lets them end
 * (POST /v1/studies/:id/stop), `cancel` cancels them (Ctrl-C, SIGTERM, DELETE), `detach` leaves
 * them running for a later controller to reattach (the service shutting down).
 */
export type StopMode = 'finish' | 'cancel' | 'detach';
export function stopModeOf(signal: AbortSignal | undefined): StopMode {
  const r: unknown = signal?.reason;
  return r === 'finish' || r === 'detach' ? r : 'cancel';
}

export function createExecutor(spec: TargetSpec, parallel: number): Executor {
  if (spec.kind === 'slurm') return createSlurmExecutor(spec, { parallel });
  if (spec.kind === 'vllm' && spec.state_dir !== undefined) reapStaleServers(spec.state_dir);
  const pool = new Piscina({
    filename: new URL('./trial-worker.mjs', import.meta.url).href,
    minThreads: 1,
    maxThreads: parallel,
    idleTimeout: 30_000,
  });
  const free: number[] = Array.from({ length: parallel }, (_, i) => i);
  const waiters: ((slot: number) => void)[] = [];
  let running = 0;
  // Trials beyond `parallel` wait for a slot (FIFO) instead of oversubscribing the target.
  const acquire = (): Promise<number> => {
    const slot = free.shift();
    return slot !== undefined ? Promise.resolve(slot) : new Promise((resolve) => waiters.push(resolve));
  };
  const release = (slot: number): void => {
    const next = waiters.shift();
    if (next !== undefined) next(slot);
    else free.push(slot);
  };
  return {
    parallel,
    get running() {
      return running;
    },
    async run(input) {
      const slot = await acquire();
      running++;
      try {
        return (await pool.run({ spec, slot, input })) as TrialOutcome;
      } catch (err) {
        throw new LmBenchError('LMB_ERR_WORKER_FAILED', `trial worker failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      } finally {
        running--;
        release(slot);
      }
    },
    async close() {
      await pool.destroy();
    },
  };
}
