import { fitSurrogate, serializeSurrogate } from './surrogate.js';
import { createRng } from '../util/rng.js';
import type { FitResult, FitTask } from './fit-task.js';
import { workerHandler } from '../workers/pool.js';

/**
 * Worker entry: fits one surrogate off the main thread. Boosters are trained, saved and freed
 * inside `fitSurrogate`, so the worker's WebAssembly heap holds nothing between tasks but the
 * runtime itself; the blob goes back as bytes.
 */
export default workerHandler(async (task: FitTask): Promise<FitResult> => {
  const t0 = performance.now();
  const s = await fitSurrogate(task.rows, task.featureNames, task.spec, createRng(task.seed));
  return { blob: serializeSurrogate(s), fitMs: performance.now() - t0 };
});
