import { fitSurrogate, serializeSurrogate } from '../model/surrogate.js';
import { isLmBenchError } from '../errors.js';
import { createRng } from '../util/rng.js';
import type { FitResult, FitTask } from './fit-task.js';

/**
 * piscina handler: fits one surrogate off the main thread. Boosters are trained, saved and freed
 * inside `fitSurrogate`, so the worker's WebAssembly heap holds nothing between tasks but the
 * runtime itself; the blob goes back as bytes.
 */
export default async function fit(task: FitTask): Promise<FitResult> {
  const t0 = performance.now();
  try {
    const s = await fitSurrogate(task.rows, task.featureNames, task.spec, createRng(task.seed));
    return { ok: true, blob: serializeSurrogate(s), fitMs: performance.now() - t0 };
  } catch (err) {
    if (!isLmBenchError(err)) throw err;
    return { ok: false, code: err.code, message: err.message, details: err.details };
  }
}
