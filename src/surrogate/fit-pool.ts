import { deserializeSurrogate, type Surrogate } from './surrogate.js';
import type { FitFn } from './validate.js';
import type { FitResult, FitTask } from './fit-task.js';
import { createWorkerPool, threadsUpTo, workerEntry } from '../workers/pool.js';

/**
 * The model-fitting pool over `fit.worker.ts` (pool.ts makes it). Whoever creates a pool closes it
 * (`close()`), or the process lingers.
 */
export interface FitPool {
  fit(task: FitTask): Promise<Surrogate>;
  close(): Promise<void>;
}

export interface FitPoolOptions {
  /** Defaults to the machine's parallelism, at most 4. */
  readonly threads?: number;
}

export function createFitPool(options: FitPoolOptions = {}): FitPool {
  const pool = createWorkerPool<FitTask, FitResult>({ entry: workerEntry(import.meta.url, 'fit'), what: 'model fitting', maxThreads: options.threads ?? threadsUpTo(4), idleTimeoutMs: 2_000 });
  return {
    fit: async (task) => deserializeSurrogate((await pool.run(task)).blob),
    close: () => pool.close(),
  };
}

/** The pool as a `FitFn` for `crossValidate` / `trainFromStore` (fold fits then run in parallel). */
export function poolFit(pool: FitPool): FitFn {
  return (rows, featureNames, spec, rng) => pool.fit({ rows, featureNames, spec, seed: rng.seed });
}
