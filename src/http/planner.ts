import { Piscina } from 'piscina';
import { LmBenchError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { PlanResult, PlanTask } from './plan-worker.js';

/** Plans for the service, computed in one worker thread (in-process, on the given store, for a MemoryStore). */
export interface Planner {
  plan(task: Omit<PlanTask, 'dbPath'>): Promise<Extract<PlanResult, { ok: true }>>;
  close(): Promise<void>;
}

export function createPlanner(opts: { readonly store: Store; readonly dbPath: string | null }): Planner {
  const pool = opts.dbPath === null ? null : new Piscina({ filename: new URL('./plan-worker.mjs', import.meta.url).href, minThreads: 0, maxThreads: 1, idleTimeout: 30_000 });
  return {
    plan: async (t) => {
      let res: PlanResult;
      try {
        res = pool === null ? await (await import('./plan-worker.js')).planTask(opts.store, { ...t, dbPath: null }) : ((await pool.run({ ...t, dbPath: opts.dbPath })) as PlanResult);
      } catch (err) {
        throw new LmBenchError('LMB_ERR_WORKER_FAILED', `plan worker failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      if (!res.ok) throw new LmBenchError(res.code, res.message, { details: res.details });
      return res;
    },
    close: async () => {
      await pool?.destroy();
    },
  };
}
