import type { JobStatus, SlurmCli } from './slurm-cli.js';

/**
 * One squeue for every job a controller follows, each poll interval, however many trials wait on
 * them: a study of 32 jobs costs the cluster's controller one query per interval, not 32. Each
 * `next(id)` resolves at the next poll with the job's status, or null when Slurm no longer knows it.
 * A failing squeue (a controller restart) is retried at the next interval; after `maxFailures` in a
 * row the waiters get the error.
 */
export interface JobWatcher {
  next(jobId: string, signal?: AbortSignal): Promise<JobStatus | null>;
  close(): void;
}

export function createJobWatcher(cli: SlurmCli, intervalMs: number, maxFailures = 12): JobWatcher {
  type Waiter = { resolve: (s: JobStatus | null) => void; reject: (e: Error) => void };
  const waiters = new Map<string, Waiter[]>();
  let timer: NodeJS.Timeout | null = null;
  let failures = 0;
  let closed = false;

  const schedule = (): void => {
    if (timer !== null || closed || waiters.size === 0) return;
    timer = setTimeout(() => void poll(), intervalMs);
  };
  const poll = async (): Promise<void> => {
    const batch = new Map(waiters);
    waiters.clear();
    try {
      const known = await cli.query([...batch.keys()]);
      failures = 0;
      for (const [id, ws] of batch) for (const w of ws) w.resolve(known.get(id) ?? null);
    } catch (err) {
      failures++;
      for (const [id, ws] of batch) {
        if (failures >= maxFailures) for (const w of ws) w.reject(err instanceof Error ? err : new Error(String(err)));
        else waiters.set(id, [...(waiters.get(id) ?? []), ...ws]);
      }
    } finally {
      timer = null;
      schedule();
    }
  };
  return {
    next(jobId, signal) {
      return new Promise((resolve, reject) => {
        // An abort wakes the waiter at once (a Ctrl-C must not wait out a poll interval).
        const onAbort = (): void => {
          const ws = waiters.get(jobId)?.filter((x) => x !== w) ?? [];
          if (ws.length === 0) waiters.delete(jobId);
          else waiters.set(jobId, ws);
          resolve(null);
        };
        const w: Waiter = {
          resolve: (st) => {
            signal?.removeEventListener('abort', onAbort);
            resolve(st);
          },
          reject: (e) => {
            signal?.removeEventListener('abort', onAbort);
            reject(e);
          },
        };
        waiters.set(jobId, [...(waiters.get(jobId) ?? []), w]);
        signal?.addEventListener('abort', onAbort, { once: true });
        schedule();
      });
    },
    close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
