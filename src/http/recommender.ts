import { createWorkerPool, workerEntry } from '../workers/pool.js';
import { PROFILE_KIND, profileSlot } from '../calibration/profiles.js';
import { gpuFigures } from '../catalog/gpu-file.js';
import type { Hardware, ModelSpec } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { featureNames } from '../surrogate/features.js';
import { SURROGATE_KIND, selectSurrogate } from '../surrogate/registry.js';
import { spaceEncoder } from '../optimize/space-source.js';
import type { ModelInfo, Store } from '../store/store.js';
import { defaultCatalog } from '../catalog/index.js';
import { evidenceFilter, withHistoryEvidence } from '../advise/measured.js';
import { spaceAt, type Answer, type Question } from './recommend-core.js';
import type { RecommendResult, RecommendTask } from './recommend.worker.js';

/**
 * Recommendations for the service. Each question is answered by the surrogate `selectSurrogate`
 * picks for its GPU and model (a study's or a trained one: the same rule as the CLI), loaded once
 * per model id (in the worker), and answers are computed in a piscina worker, so the request thread
 * never scores candidates. The answer is a deterministic function of the question and the model (the
 * seed is part of the question; the history count is the model's own), so answers are memoized per
 * model id: a newer saved model makes new keys, and identical questions in flight share one computation.
 * A study's fit (a newer model in a study's slot) is the exception: the answer last computed for the
 * question is served until the fit's own is. An answer with no pick is served with the history's
 * measured evidence (advise/measured.ts `withHistoryEvidence`, as `lm-bench recommend` gives it), read
 * from the store on the request thread after the cache, so a run ingested since is named.
 */
/** An answer and its JSON text, serialized once (a repeated question costs no serialization). */
export interface CachedAnswer {
  readonly answer: Answer;
  readonly json: string;
}

/** The question's model as resolved: its spec (a worker thread's catalog lacks a derived one) and config hash. */
export interface QuestionModel {
  readonly spec: ModelSpec;
  /** normalisedConfigHash of its config.json; null for a catalog model. */
  readonly configHash: string | null;
}

export interface Recommender {
  /** `hardware`: the question's GPU when the catalog lacks it (a datasheet), which the answer is priced on. */
  ask(question: Question, model?: QuestionModel, hardware?: Hardware): Promise<CachedAnswer>;
  /** Forget the cached latest-model id (the service just saved a model). */
  invalidate(): void;
  /** Age of the latest surrogate in seconds, or null when none is trained. */
  latestModel(): { id: number; createdAtMs: number } | null;
  ping(): Promise<boolean>;
  readonly threads: number;
  close(): Promise<void>;
}

export interface RecommenderOptions {
  readonly store: Store;
  /** The store's SQLite file: the workers open it read-only (a connection cannot cross threads). */
  readonly dbPath: string;
  readonly spacePath: string;
  readonly threads: number;
  readonly now: () => number;
  /** How long the latest model id is trusted before the store is asked again. */
  readonly modelCheckMs?: number;
  readonly cacheSize?: number;
}

export function createRecommender(opts: RecommenderOptions): Recommender {
  const pool = createWorkerPool<RecommendTask, RecommendResult>({ entry: workerEntry(import.meta.url, 'recommend'), what: 'recommendation', minThreads: opts.threads, maxThreads: opts.threads, idleTimeoutMs: 60_000 });
  const cacheSize = opts.cacheSize ?? 512;
  // A model fitted on another feature schema (the space or lm-bench changed) cannot answer.
  const schema = featureNames(spaceEncoder(spaceAt(opts.spacePath)));
  /** Answers by (model, question): the computation, and its answer once it is in. */
  const answers = new Map<string, { readonly promise: Promise<CachedAnswer>; value: CachedAnswer | null }>();
  /** The latest computed answer to each question, from whichever model. */
  const latest = new Map<string, CachedAnswer>();
  /** No-pick answers with the history's evidence, by question: kept while their answer and the question's runs stay the same. */
  const evidenced = new Map<string, { readonly of: CachedAnswer; readonly stamp: string; readonly value: CachedAnswer }>();
  let infos: ModelInfo[] = [];
  let checkedAt = Number.NEGATIVE_INFINITY;

  /** The saved surrogates, newest first, re-read at most once per modelCheckMs. */
  const models = (): ModelInfo[] => {
    const t = opts.now();
    if (t - checkedAt >= (opts.modelCheckMs ?? 1000)) {
      infos = opts.store.listModels(SURROGATE_KIND);
      checkedAt = t;
    }
    return infos;
  };
  const latestModel = (): { id: number; createdAtMs: number } | null => {
    const info = models()[0];
    return info === undefined ? null : { id: info.id, createdAtMs: info.created_at_ms };
  };

  /** The id of the calibrated simulator profile stored for a GPU, or 'default'. */
  const calibratedProfileId = (gpu: string): string => String(opts.store.listModels(PROFILE_KIND).find((m) => m.slot === profileSlot(gpu))?.id ?? 'default');

  async function compute(modelId: number | null, question: Question, qm: QuestionModel | undefined, hw: Hardware | undefined): Promise<Answer> {
    // A derived model's spec and a datasheet's GPU ride with the task: the worker's catalog knows only data/*.yaml.
    const modelSpec = qm?.configHash === null || qm === undefined ? {} : { modelSpec: qm.spec };
    const carried = { ...modelSpec, ...(hw === undefined ? {} : { hardwareSpec: hw }) };
    if (modelId === null) return runTask({ kind: 'simulate', dbPath: opts.dbPath, spacePath: opts.spacePath, question, ...carried });
    return runTask({ kind: 'recommend', dbPath: opts.dbPath, modelId, spacePath: opts.spacePath, question, ...carried });
  }

  /** The cached answer with the history's measured evidence when it picks nothing (the same answer otherwise). */
  function withEvidence(c: CachedAnswer, question: Question, qm: QuestionModel | undefined, questionKey: string): CachedAnswer {
    if (c.answer.best !== null) return c;
    const filter = evidenceFilter(question);
    // The runs' count and newest id: an ingest or a deletion since changes one of them.
    const stamp = `${opts.store.countRuns(filter)}:${opts.store.listRuns({ ...filter, limit: 1 })[0]?.id ?? 0}`;
    const kept = evidenced.get(questionKey);
    if (kept !== undefined && kept.of === c && kept.stamp === stamp) return kept.value;
    const answer = withHistoryEvidence(c.answer, opts.store, question, qm?.spec ?? defaultCatalog().model(question.model));
    const value = answer === c.answer ? c : { answer, json: JSON.stringify(answer) };
    evidenced.delete(questionKey);
    evidenced.set(questionKey, { of: c, stamp, value });
    while (evidenced.size > cacheSize) evidenced.delete(evidenced.keys().next().value ?? '');
    return value;
  }

  /** Questions the pool is answering now (a ping is not one). */
  let inFlight = 0;

  async function runTask(task: RecommendTask): Promise<Answer> {
    inFlight++;
    try {
      const res = await pool.run(task);
      if (res === null) throw new LmBenchError('LMB_ERR_INTERNAL', 'recommendation worker returned no answer');
      return res;
    } finally {
      inFlight--;
    }
  }

  /** The answer of the model that covers the question (or the simulator's), memoized as described above. */
  function cachedAnswer(question: Question, qm: QuestionModel | undefined, hw: Hardware | undefined, questionKey: string): Promise<CachedAnswer> {
    // No model covers the question: the simulator answers (labelled so), until a study or a training run saves one.
    const model = selectSurrogate(models(), { gpu: question.gpu, model: question.model, schema });
    // A simulated answer depends on the profile that prices it: a `sim calibrate` run makes a new key.
    // The model's id and its config hash: one name may be two checkpoints (or the same id another
    // checkpoint in a history since rebuilt), and an answer belongs to the checkpoint it priced. Likewise
    // a datasheet's figures: two clients may send different datasheets under one id.
    const key = JSON.stringify([model?.id ?? `simulator:${model === null ? calibratedProfileId(question.gpu) : ''}`, questionKey]);
    let entry = answers.get(key);
    if (entry !== undefined) {
      // Refresh its place in the LRU order.
      answers.delete(key);
      answers.set(key, entry);
    } else {
      const promise = compute(model?.id ?? null, question, qm, hw).then((a) => {
        const cached = { answer: a, json: JSON.stringify(a) };
        fresh.value = cached;
        latest.delete(questionKey);
        latest.set(questionKey, cached);
        return cached;
      });
      const fresh: { readonly promise: Promise<CachedAnswer>; value: CachedAnswer | null } = { promise, value: null };
      entry = fresh;
      answers.set(key, fresh);
      // Failures are not memoized: the next identical question tries again.
      promise.catch(() => answers.delete(key));
      while (answers.size > cacheSize) answers.delete(answers.keys().next().value ?? '');
      while (latest.size > cacheSize) latest.delete(latest.keys().next().value ?? '');
    }
    if (entry.value !== null) return entry.promise;
    // A running study refits its surrogate into its slot after every trial. While a study's new fit
    // has its answer computed, the answer last computed for the same question is served (its
    // surrogate_id says which surrogate gave it): waiting would stall every question behind every
    // refit. A surrogate someone trained (no slot), or a question never answered, is waited for.
    const prior = latest.get(questionKey);
    if (prior !== undefined && model !== null && model.slot !== null) return Promise.resolve(prior);
    return entry.promise;
  }

  return {
    threads: opts.threads,
    latestModel,
    invalidate() {
      checkedAt = Number.NEGATIVE_INFINITY;
    },
    async ask(question, qm, hw) {
      const questionKey = JSON.stringify([question, qm?.configHash ?? null, hw === undefined ? null : gpuFigures(hw)]);
      return withEvidence(await cachedAnswer(question, qm, hw, questionKey), question, qm, questionKey);
    },
    async ping() {
      // A ping queues behind every question before it: with the threads busy, /health would answer only
      // when they are done (a liveness probe times out). Threads answering questions are alive; a thread
      // that dies fails its question, and the next ping, with none in flight, asks the pool itself.
      if (inFlight > 0) return true;
      try {
        await pool.run({ kind: 'ping' });
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await pool.destroy();
    },
  };
}
