import type { Store } from '../store/store.js';
import { createWorkerPool, workerEntry } from '../workers/pool.js';
import type { PlanResult, PlanTask } from './plan.worker.js';

/** Plans for the service, computed in one worker thread (in-process, on the given store, for a MemoryStore). */
export interface Planner {
  plan(task: Omit<PlanTask, 'dbPath'>): Promise<PlanResult>;
  close(): Promise<void>;
}

export function createPlanner(opts: { readonly store: Store; readonly dbPath: string | null }): Planner {
  const pool = opts.dbPath === null ? null : createWorkerPool<PlanTask, PlanResult>({ entry: workerEntry(import.meta.url, 'plan'), what: 'plan', maxThreads: 1, idleTimeoutMs: 30_000 });
  return {
    plan: async (t) => (pool === null ? (await import('./plan.worker.js')).planTask(opts.store, { ...t, dbPath: null }) : pool.run({ ...t, dbPath: opts.dbPath })),
    close: async () => {
      await pool?.destroy();
    },
  };
}
