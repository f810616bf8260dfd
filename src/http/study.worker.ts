import { parentPort, workerData } from 'node:worker_threads';
import { defaultCatalog } from '../catalog/index.js';
import type { StudySpec } from '../domain/index.js';
import { loadSpace } from '../space/index.js';
import { openStore } from '../store/sqlite-store.js';
import type { TargetSpec } from '../targets/spec.js';
import type { StopMode } from '../targets/types.js';
import { runStudy } from '../tune/study-runner.js';

/**
 * One study's tuning loop in a worker thread of its own, with its own store connection (WAL; the
 * design's "study process" writer), so the surrogate refits and candidate scoring of each round never
 * block the service's request thread. Messages: in, `{ abort: StopMode }`; out, `{ kind: 'trial_finished', state }` per
 * trial, then `{ kind: 'done', reason }` or `{ kind: 'error', message }`.
 */
export interface StudyWorkerData {
  readonly dbPath: string;
  readonly spacePath: string;
  readonly spec: StudySpec;
  readonly target: TargetSpec;
  readonly sampler: 'surrogate' | 'random';
}

export type StudyWorkerMessage =
  | { readonly kind: 'done'; readonly reason: string }
  | { readonly kind: 'error'; readonly message: string }
  /** Each trial the loop finishes, for the service's `lmb_trials_finished_total`. */
  | { readonly kind: 'trial_finished'; readonly state: string };

async function main(): Promise<void> {
  const data = workerData as StudyWorkerData;
  const port = parentPort;
  if (port === null) throw new Error('study.worker must run in a worker thread');
  const controller = new AbortController();
  port.on('message', (m: { abort?: StopMode }) => {
    if (m.abort !== undefined) controller.abort(m.abort);
  });
  const store = openStore(data.dbPath);
  try {
    const { summary } = await runStudy({
      store,
      catalog: defaultCatalog(),
      space: loadSpace(data.spacePath),
      spec: data.spec,
      target: data.target,
      now: Date.now,
      sampler: data.sampler,
      signal: controller.signal,
      onEvent: (e) => {
        if (e.kind === 'trial_finished') port.postMessage({ kind: 'trial_finished', state: e.trial.state } satisfies StudyWorkerMessage);
      },
    });
    port.postMessage({ kind: 'done', reason: summary.reason } satisfies StudyWorkerMessage);
  } catch (err) {
    port.postMessage({ kind: 'error', message: err instanceof Error ? err.message : String(err) } satisfies StudyWorkerMessage);
  } finally {
    store.close();
    port.close();
  }
}

await main();
