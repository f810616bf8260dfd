import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { LmBenchError } from '../errors.js';
import { deserializeSurrogate, type Surrogate } from '../model/surrogate.js';
import type { FitFn } from '../model/validate.js';
import type { FitResult, FitTask } from './fit-task.js';

/**
 * The model-fitting pool: piscina over `fit.worker.ts`. Sources run through tsx without a build, so
 * the workers get tsx's loader on their execArgv (the CLI registers tsx in-process, which worker
 * threads do not inherit). Whoever creates a pool closes it (`close()`), or the process lingers.
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
  const threads = options.threads ?? Math.max(1, Math.min(4, availableParallelism()));
  const pool = new Piscina({
    filename: new URL('./fit-worker.mjs', import.meta.url).href,
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: 2_000,
    execArgv: [...process.execArgv.filter((a) => a !== '--import' && !a.includes('tsx')), '--import', import.meta.resolve('tsx')],
  });
  return {
    async fit(task: FitTask): Promise<Surrogate> {
      let result: FitResult;
      try {
        result = (await pool.run(task)) as FitResult;
      } catch (err) {
        throw new LmBenchError('LMB_ERR_WORKER_FAILED', `model fitting worker failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      if (!result.ok) throw new LmBenchError(result.code, result.message, { details: result.details });
      return deserializeSurrogate(result.blob);
    },
    close: () => pool.close(),
  };
}

/** The pool as a `FitFn` for `crossValidate` / `trainFromStore` (fold fits then run in parallel). */
export function poolFit(pool: FitPool): FitFn {
  return (rows, featureNames, spec, rng) => pool.fit({ rows, featureNames, spec, seed: rng.seed });
}
