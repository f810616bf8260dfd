import { registerGpu } from '../catalog/index.js';
import type { Hardware, SimProfile } from '../domain/index.js';
import { isLmBenchError } from '../errors.js';
import { simulateSummary, type SimSummary, type SimulateInput } from '../sim/index.js';
import { workerHandler } from '../workers/pool.js';

/**
 * Worker entry: simulates a batch of points under several profiles (summary runs), for fitting the
 * simulator's efficiencies on every core. Inputs are plain data (no catalog object: the worker uses the
 * default one); a point that fails to start comes back as null.
 */
export interface SimBatchTask {
  readonly points: readonly Omit<SimulateInput, 'catalog'>[];
  readonly profiles: readonly SimProfile[];
  /** The points' GPUs the catalog lacks (datasheets), registered before any point is simulated. */
  readonly gpus?: readonly Hardware[];
}

export type SimBatchResult = (SimSummary | null)[][];

function run(task: SimBatchTask): SimBatchResult {
  for (const hw of task.gpus ?? []) registerGpu(hw);
  return task.profiles.map((profile) =>
    task.points.map((p) => {
      try {
        const out = simulateSummary({ ...p, profile });
        return out.ok ? out.summary : null;
      } catch (err) {
        if (isLmBenchError(err)) return null;
        throw err;
      }
    }),
  );
}

export default workerHandler(run);
