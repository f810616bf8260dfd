import { Piscina } from 'piscina';
import { LmBenchError } from '../errors.js';
import { PLOT_KINDS } from '../report/study/index.js';
import type { Store } from '../store/store.js';
import type { ReportResult, ReportTask } from './report-worker.js';

/** Study reports and plots for the service, rendered in a worker (in-process for a MemoryStore). */
export interface Reporter {
  report(study: number | string): Promise<string>;
  plot(study: number | string, kind: string): Promise<string>;
  close(): Promise<void>;
}

export function createReporter(opts: { readonly store: Store; readonly dbPath: string | null }): Reporter {
  const pool = opts.dbPath === null ? null : new Piscina({ filename: new URL('./report-worker.mjs', import.meta.url).href, minThreads: 0, maxThreads: 1, idleTimeout: 30_000 });
  const run = async (task: ReportTask): Promise<string> => {
    // The study must exist (404 from the main thread's store, before any worker starts).
    opts.store.getStudy(task.study);
    let res: ReportResult;
    try {
      res = pool === null ? await (await import('./report-worker.js')).renderTask(opts.store, task) : ((await pool.run(task)) as ReportResult);
    } catch (err) {
      throw new LmBenchError('LMB_ERR_WORKER_FAILED', `report worker failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (!res.ok) throw new LmBenchError(res.code, res.message, { details: res.details });
    return res.body;
  };
  return {
    report: (study) => run({ kind: 'report', dbPath: opts.dbPath ?? '', study }),
    plot: (study, kind) => {
      if (!(PLOT_KINDS as readonly string[]).includes(kind)) {
        return Promise.reject(new LmBenchError('LMB_ERR_NOT_FOUND', `no plot "${kind}"; known: ${PLOT_KINDS.join(', ')}`, { details: { field: 'kind' } }));
      }
      return run({ kind: 'plot', dbPath: opts.dbPath ?? '', study, plot: kind });
    },
    close: async () => {
      await pool?.destroy();
    },
  };
}
