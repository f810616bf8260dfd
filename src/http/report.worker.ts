import { LmBenchError } from '../errors.js';
import { isPlotKind, renderStudyPlotSvg, renderStudyReport } from '../report/study/index.js';
import { openStore } from '../store/sqlite-store.js';
import type { Store } from '../store/store.js';
import { workerHandler } from '../workers/pool.js';

/**
 * Worker entry: the study report (issue 8's `renderStudyReport`) and single plots, rendered off
 * the request thread — they fit a surrogate and render SVGs, seconds of CPU. A read-only connection.
 */
export type ReportTask =
  | { readonly kind: 'report'; readonly dbPath: string; readonly study: number | string }
  | { readonly kind: 'plot'; readonly dbPath: string; readonly study: number | string; readonly plot: string };

/** The report's HTML or the plot's SVG. */
async function renderTask(store: Store, task: ReportTask): Promise<string> {
  if (task.kind === 'report') return (await renderStudyReport(store, task.study)).html;
  if (!isPlotKind(task.plot)) throw new LmBenchError('LMB_ERR_NOT_FOUND', `no plot "${task.plot}"`, { details: { field: 'kind' } });
  return renderStudyPlotSvg(store, task.study, task.plot);
}

export default workerHandler(async (task: ReportTask): Promise<string> => {
  const store = openStore(task.dbPath, { readonly: true });
  try {
    return await renderTask(store, task);
  } finally {
    store.close();
  }
});
