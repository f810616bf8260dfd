import { createWorkerPool, workerEntry } from '../workers/pool.js';
import { assertVllmExecutable } from './executable.js';
import { reapStaleHarnesses } from './command-target.js';
import { reapStaleServers } from './vllm-target.js';
import { createSlurmExecutor } from './slurm/slurm-executor.js';
import type { TargetSpec } from './spec.js';
import type { TrialTask } from './trial.worker.js';
import type { Executor, TrialOutcome } from './types.js';

/**
 * Runs trials on a target (a Slurm cluster's jobs: targets/slurm), or in piscina worker threads, at most `parallel` at once, each on a slot of
 * its own (the vllm target's port is base_port + slot); more wait their turn. The main thread keeps the store (the one
 * writer); workers get plain data and send plain outcomes back.
 */
export function createExecutor(spec: TargetSpec, parallel: number): Executor {
  if (spec.kind === 'slurm') return createSlurmExecutor(spec, { parallel });
  const pool = createWorkerPool<TrialTask, TrialOutcome>({ entry: workerEntry(import.meta.url, 'trial'), what: 'trial', minThreads: 1, maxThreads: parallel, idleTimeoutMs: 30_000 });
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
    // A vLLM that is not there fails before the study is stored, not as every trial's exit 127.
    ...(spec.kind === 'vllm' ? { preflight: () => Promise.resolve().then(() => void assertVllmExecutable(spec.executable, { ...process.env, ...spec.env })) } : {}),
    // What a killed controller left running on this machine (pid files under state_dir).
    reapLeftovers: () => {
      if (spec.kind === 'vllm' && spec.state_dir !== undefined) reapStaleServers(spec.state_dir);
      if (spec.kind === 'command' && spec.state_dir !== undefined) reapStaleHarnesses(spec.state_dir);
    },
    get running() {
      return running;
    },
    async run(input) {
      const slot = await acquire();
      running++;
      try {
        return await pool.run({ spec, slot, input });
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
