import { createWorkerPool, workerEntry } from '../workers/pool.js';
import type { PlanResult, PlanTask } from './plan.worker.js';

/** Plans for the service, computed in one worker thread that opens the store's file read-only. */
export interface Planner {
  plan(task: Omit<PlanTask, 'dbPath'>): Promise<PlanResult>;
  close(): Promise<void>;
}

export function createPlanner(opts: { readonly dbPath: string }): Planner {
  const pool = createWorkerPool<PlanTask, PlanResult>({ entry: workerEntry(import.meta.url, 'plan'), what: 'plan', maxThreads: 1, idleTimeoutMs: 30_000 });
  return {
    plan: (t) => pool.run({ ...t, dbPath: opts.dbPath }),
    close: async () => {
      await pool.destroy();
    },
  };
}
