import { isLmBenchError, type ErrorCode } from '../errors.js';
import { openStore } from '../store/sqlite-store.js';
import { answer, historyOf, loadedModel, type Answer, type LoadedModel, type Question } from './recommend-core.js';

/**
 * piscina handler: answers recommendation questions off the request thread. The surrogate is read
 * from the store (a read-only connection; WAL lets it read beside the service's writer) once per
 * model id and kept, so a request costs candidate scoring only.
 */
export type RecommendTask =
  | { readonly kind: 'ping' }
  | {
      readonly kind: 'recommend';
      readonly dbPath: string;
      readonly modelId: number;
      readonly spacePath: string;
      readonly question: Question;
    };

export type RecommendResult =
  | { readonly ok: true; readonly answer: Answer | null }
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string; readonly details: Record<string, unknown> };

let loaded: (LoadedModel & { key: string }) | undefined;

function surrogateFor(dbPath: string, modelId: number): LoadedModel {
  const key = `${dbPath}#${modelId}`;
  if (loaded?.key === key) return loaded;
  const store = openStore(dbPath, { readonly: true });
  try {
    const record = store.getModel(modelId);
    loaded = { key, ...loadedModel(record) };
    return loaded;
  } finally {
    store.close();
  }
}

export default function handle(task: RecommendTask): RecommendResult {
  if (task.kind === 'ping') return { ok: true, answer: null };
  try {
    const m = surrogateFor(task.dbPath, task.modelId);
    return { ok: true, answer: answer({ surrogate: m.surrogate, modelId: task.modelId, validationMape: m.mape, spacePath: task.spacePath, question: task.question, historyRuns: historyOf(m, task.question) }) };
  } catch (err) {
    if (!isLmBenchError(err)) throw err;
    return { ok: false, code: err.code, message: err.message, details: err.details };
  }
}
