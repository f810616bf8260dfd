import { registerGpu, registerModel } from '../catalog/index.js';
import type { Hardware, ModelSpec } from '../domain/index.js';
import { openStore } from '../store/sqlite-store.js';
import { answer, answeringModel, simulatedFor, type Answer, type Question } from './recommend-core.js';
import type { AnsweringModel } from '../advise/answer.js';
import { workerHandler } from '../workers/pool.js';

/**
 * Worker entry: answers recommendation questions off the request thread. The surrogate is read
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
      /** The question's model when a config.json defined it (this thread's catalog lacks it). */
      readonly modelSpec?: ModelSpec;
      /** The question's GPU when a datasheet defined it, likewise. */
      readonly hardwareSpec?: Hardware;
    }
  /** No model covers the question: the simulator answers (the store is read for a calibrated profile). */
  | { readonly kind: 'simulate'; readonly dbPath: string; readonly spacePath: string; readonly question: Question; readonly modelSpec?: ModelSpec; readonly hardwareSpec?: Hardware };

/** The answer; null for a ping. */
export type RecommendResult = Answer | null;

let loaded: (AnsweringModel & { key: string }) | undefined;

function modelFor(dbPath: string, modelId: number): AnsweringModel {
  const key = `${dbPath}#${modelId}`;
  if (loaded?.key === key) return loaded;
  const store = openStore(dbPath, { readonly: true });
  try {
    loaded = { key, ...answeringModel(store.getModel(modelId)) };
    return loaded;
  } finally {
    store.close();
  }
}

function handle(task: RecommendTask): RecommendResult {
  if (task.kind === 'ping') return null;
  if (task.modelSpec !== undefined) registerModel(task.modelSpec);
  // Over any datasheet a store opened in this thread registered under the id: the question's own figures price it.
  if (task.hardwareSpec !== undefined) registerGpu(task.hardwareSpec);
  if (task.kind === 'simulate') {
    const store = openStore(task.dbPath, { readonly: true });
    try {
      return simulatedFor(store, task.spacePath, task.question);
    } finally {
      store.close();
    }
  }
  return answer(modelFor(task.dbPath, task.modelId), task.spacePath, task.question);
}

export default workerHandler(handle);
