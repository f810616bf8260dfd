import { defaultCatalog, registerGpu, registerModel } from '../catalog/index.js';
import { loadPrices } from '../cost/prices.js';
import type { Hardware, ModelSpec } from '../domain/index.js';
import { isLmBenchError, type ErrorCode } from '../errors.js';
import { runPlan } from '../plan/run-plan.js';
import type { PlanAnswer, PlanQuestion } from '../plan/types.js';
import { planReportHtml } from '../report/plan.js';
import { openStore } from '../store/sqlite-store.js';
import type { Store } from '../store/store.js';

/**
 * piscina handler: `POST /v1/plans` off the request thread (a plan is seconds of simulation). The
 * history is read through a read-only connection, for the per-GPU corrections; nothing is written.
 */
export interface PlanTask {
  readonly dbPath: string | null;
  readonly question: PlanQuestion;
  /** The model when a config.json defined it, and GPUs a datasheet defined (this thread's catalog lacks them). */
  readonly modelSpec: ModelSpec;
  readonly hardwareSpecs: readonly Hardware[];
  readonly html: boolean;
}

export type PlanResult =
  | { readonly ok: true; readonly answer: PlanAnswer; readonly html: string | null }
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string; readonly details: Record<string, unknown> };

export async function planTask(store: Store | null, task: PlanTask): Promise<PlanResult> {
  registerModel(task.modelSpec);
  for (const hw of task.hardwareSpecs) registerGpu(hw);
  try {
    const catalog = defaultCatalog();
    const answer = runPlan(task.question, { catalog, prices: loadPrices(catalog), store });
    return { ok: true, answer, html: task.html ? await planReportHtml(answer, { generatedAt: new Date().toISOString() }) : null };
  } catch (err) {
    if (!isLmBenchError(err)) throw err;
    return { ok: false, code: err.code, message: err.message, details: err.details };
  }
}

export default async function handle(task: PlanTask): Promise<PlanResult> {
  const store = task.dbPath === null ? null : openStore(task.dbPath, { readonly: true });
  try {
    return await planTask(store, task);
  } finally {
    store?.close();
  }
}
