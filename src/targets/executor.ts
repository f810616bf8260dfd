import { Piscina } from 'piscina';
import { LmBenchError } from '../errors.js';
import { reapStaleServers } from './vllm-target.js';
import type { TargetSpec } from './spec.js';
import type { TrialInput, TrialOutcome } from './types.js';

/**
 * Runs trials on a target in piscina worker threads, at most `parallel` at once, each on a slot of
 * its own (the vllm target's port is base_port + slot). The main thread keeps the store (the one
 * writer); workers get plain data and send plain outcomes back.
 */
export interface Executor {
  readonly parallel: number;
  run(input: TrialInput): Promise<TrialOutcome>;
  /** Trials running right now. */
  readonly running: number;
  close(): Promise<void>;
}

export function createExecutor(spec: TargetSpec, parallel: number): Executor {
  if (spec.kind === 'vllm' && spec.state_dir !== undefined) reapStaleServers(spec.state_dir);
  const pool = new Piscina({
    filename: new URL('./trial-worker.mjs', import.meta.url).href,
    minThreads: 1,
    maxThreads: parallel,
    idleTimeout: 30_000,
  });
  const free: number[] = Array.from({ length: parallel }, (_, i) => i);
  let running = 0;
  return {
    parallel,
    get running() {
      return running;
    },
    async run(input) {
      const slot = free.shift();
      if (slot === undefined) throw new LmBenchError('LMB_ERR_INTERNAL', `more than ${parallel} trials at once`);
      running++;
      try {
        return (await pool.run({ spec, slot, input })) as TrialOutcome;
      } catch (err) {
        throw new LmBenchError('LMB_ERR_WORKER_FAILED', `trial worker failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      } finally {
        running--;
        free.push(slot);
      }
    },
    async close() {
      await pool.destroy();
    },
  };
}
