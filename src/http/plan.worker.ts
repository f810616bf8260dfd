import { defaultCatalog, registerGpu, registerModel } from '../catalog/index.js';
import { loadPrices } from '../cost/prices.js';
import type { Hardware, ModelSpec } from '../domain/index.js';
import { runPlan } from '../plan/run-plan.js';
import type { PlanAnswer, PlanQuestion } from '../plan/types.js';
import { planReportHtml } from '../report/plan.js';
import { openStore } from '../store/sqlite-store.js';
import type { Store } from '../store/store.js';
import { workerHandler } from '../workers/pool.js';

/**
 * Worker entry: `POST /v1/plans` off the request thread (a plan is seconds of simulation). The
 * history is read through a read-only connection, for the per-GPU corrections; nothing is written.
 */
export interface PlanTask {
  readonly dbPath: string;
  readonly question: PlanQuestion;
  /** The model when a config.json defined it, and GPUs a datasheet defined (this thread's catalog lacks them). */
  readonly modelSpec: ModelSpec;
  readonly hardwareSpecs: readonly Hardware[];
  readonly html: boolean;
}

export interface PlanResult {
  readonly answer: PlanAnswer;
  readonly html: string | null;
}

async function planTask(store: Store, task: PlanTask): Promise<PlanResult> {
  registerModel(task.modelSpec);
  for (const hw of task.hardwareSpecs) registerGpu(hw);
  const catalog = defaultCatalog();
  const answer = runPlan(task.question, { catalog, prices: loadPrices(catalog), store });
  return { answer, html: task.html ? await planReportHtml(answer, { generatedAt: new Date().toISOString() }) : null };
}

export default workerHandler(async (task: PlanTask): Promise<PlanResult> => {
  const store = openStore(task.dbPath, { readonly: true });
  try {
    return await planTask(store, task);
  } finally {
    store.close();
  }
});
