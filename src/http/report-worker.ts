import { isLmBenchError, type ErrorCode } from '../errors.js';
import { isPlotKind, renderStudyPlotSvg, renderStudyReport } from '../report/study/index.js';
import { openStore } from '../store/sqlite-store.js';
import type { Store } from '../store/store.js';

/**
 * piscina handler: the study report (issue 8's `renderStudyReport`) and single plots, rendered off
 * the request thread — they fit a surrogate and render SVGs, seconds of CPU. A read-only connection.
 */
export type ReportTask =
  | { readonly kind: 'report'; readonly dbPath: string; readonly study: number | string }
  | { readonly kind: 'plot'; readonly dbPath: string; readonly study: number | string; readonly plot: string };

export type ReportResult =
  | { readonly ok: true; readonly body: string }
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string; readonly details: Record<string, unknown> };

export async function renderTask(store: Store, task: ReportTask): Promise<ReportResult> {
  try {
    if (task.kind === 'report') return { ok: true, body: (await renderStudyReport(store, task.study)).html };
    if (!isPlotKind(task.plot)) return { ok: false, code: 'LMB_ERR_NOT_FOUND', message: `no plot "${task.plot}"`, details: { field: 'kind' } };
    return { ok: true, body: await renderStudyPlotSvg(store, task.study, task.plot) };
  } catch (err) {
    if (!isLmBenchError(err)) throw err;
    return { ok: false, code: err.code, message: err.message, details: err.details };
  }
}

export default async function handle(task: ReportTask): Promise<ReportResult> {
  const store = openStore(task.dbPath, { readonly: true });
  try {
    return await renderTask(store, task);
  } finally {
    store.close();
  }
}
