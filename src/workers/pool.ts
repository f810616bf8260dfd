import { availableParallelism } from 'node:os';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { isLmBenchError, LmBenchError, type ErrorCode } from '../errors.js';

/**
 * Every worker-thread pool is made here (piscina): where its entry module is, how many threads, how
 * long an idle one lives, and how a result crosses back. An error thrown in a worker arrives as a
 * plain Error (structured clone drops its class and code), so each entry's handler is wrapped in
 * `workerHandler`, which sends an LmBenchError back as data, and the pool raises it again with its
 * code on this side; anything else is LMB_ERR_WORKER_FAILED naming the pool.
 *
 * Entries are `<name>.worker.ts` modules. Compiled (dist/), the caller's sibling `<name>.worker.js`
 * runs as it is; from the sources (tests, benches, a clone without a build), each thread starts at
 * from-sources.mjs, which registers tsx in it and then loads the `.ts` entry.
 */
export type WorkerOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string; readonly details: Record<string, unknown> };

/** A worker entry's default export: runs `fn`, and returns an LmBenchError as data instead of throwing it. */
export function workerHandler<A, T>(fn: (task: A) => T | Promise<T>): (task: A) => Promise<WorkerOutcome<T>> {
  return async (task) => {
    try {
      return { ok: true, value: await fn(task) };
    } catch (err) {
      if (!isLmBenchError(err)) throw err;
      return { ok: false, code: err.code, message: err.message, details: err.details };
    }
  };
}

export interface WorkerEntry {
  readonly url: string;
  /** Running from the TypeScript sources: the thread starts at from-sources.mjs, which registers tsx first. */
  readonly fromSources: boolean;
}

const FROM_SOURCES = new URL('./from-sources.mjs', import.meta.url);

/** The entry `./<name>.worker.{js,ts}` beside the module at `callerUrl` (its `import.meta.url`). */
export function workerEntry(callerUrl: string, name: string): WorkerEntry {
  const fromSources = callerUrl.endsWith('.ts');
  return { url: new URL(`./${name}.worker.${fromSources ? 'ts' : 'js'}`, callerUrl).href, fromSources };
}

/** A long-lived worker thread on an entry (not a pool's task: messages both ways). */
export function startWorker(entry: WorkerEntry, options: Omit<WorkerOptions, 'argv'> = {}): Worker {
  return entry.fromSources ? new Worker(FROM_SOURCES, { ...options, argv: [entry.url] }) : new Worker(new URL(entry.url), options);
}

export interface PoolOptions {
  readonly entry: WorkerEntry;
  /** What the pool does, for the error a crashed worker gives ("recommendation", "trial"…). */
  readonly what: string;
  readonly maxThreads: number;
  /** Threads kept alive while idle (default 0: a pool costs nothing until used). */
  readonly minThreads?: number;
  /** How long an idle thread above minThreads lives. */
  readonly idleTimeoutMs: number;
}

export interface WorkerPool<A, T> {
  readonly threads: number;
  run(task: A): Promise<T>;
  /** Finishes the tasks already given, then ends the threads. */
  close(): Promise<void>;
  /** Ends the threads now; tasks still running fail (a service shutting down, a study aborted). */
  destroy(): Promise<void>;
}

export function createWorkerPool<A, T>(opts: PoolOptions): WorkerPool<A, T> {
  const pool = new Piscina({
    filename: opts.entry.fromSources ? FROM_SOURCES.href : opts.entry.url,
    ...(opts.entry.fromSources ? { workerData: { lmbEntry: opts.entry.url } } : {}),
    minThreads: opts.minThreads ?? 0,
    maxThreads: opts.maxThreads,
    idleTimeout: opts.idleTimeoutMs,
  });
  return {
    threads: opts.maxThreads,
    async run(task) {
      let out: WorkerOutcome<T>;
      try {
        out = (await pool.run(task)) as WorkerOutcome<T>;
      } catch (err) {
        throw new LmBenchError('LMB_ERR_WORKER_FAILED', `${opts.what} worker failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      if (!out.ok) throw new LmBenchError(out.code, out.message, { details: out.details });
      return out.value;
    },
    close: () => pool.close(),
    destroy: () => pool.destroy(),
  };
}

/** The machine's parallelism, at most `cap` (at least 1). */
export const threadsUpTo = (cap: number): number => Math.max(1, Math.min(cap, availableParallelism()));
