import { LmBenchError } from '../errors.js';
import { PLOT_KINDS } from '../report/study/index.js';
import type { Store } from '../store/store.js';
import { createWorkerPool, workerEntry } from '../workers/pool.js';
import type { ReportTask } from './report.worker.js';

/** Study reports and plots for the service, rendered in a worker that opens the store's file read-only. */
export interface Reporter {
  report(study: number | string): Promise<string>;
  plot(study: number | string, kind: string): Promise<string>;
  close(): Promise<void>;
}

export function createReporter(opts: { readonly store: Store; readonly dbPath: string }): Reporter {
  const pool = createWorkerPool<ReportTask, string>({ entry: workerEntry(import.meta.url, 'report'), what: 'report', maxThreads: 1, idleTimeoutMs: 30_000 });
  const run = async (task: ReportTask): Promise<string> => {
    // The study must exist (404 from the main thread's store, before any worker starts).
    opts.store.getStudy(task.study);
    return pool.run(task);
  };
  return {
    report: (study) => run({ kind: 'report', dbPath: opts.dbPath, study }),
    plot: (study, kind) => {
      if (!(PLOT_KINDS as readonly string[]).includes(kind)) {
        return Promise.reject(new LmBenchError('LMB_ERR_NOT_FOUND', `no plot "${kind}"; known: ${PLOT_KINDS.join(', ')}`, { details: { field: 'kind' } }));
      }
      return run({ kind: 'plot', dbPath: opts.dbPath, study, plot: kind });
    },
    close: async () => {
      await pool.destroy();
    },
  };
}
