import { defaultCatalog } from '../catalog/index.js';
import type { Objective, Slo, Workload } from '../domain/index.js';
import { deserializeSurrogate, type Surrogate } from '../model/surrogate.js';
import type { ModelRecord } from '../store/store.js';
import { recommend, type Recommendation } from '../optimize/recommend.js';
import { spaceEncoder, spaceSource } from '../optimize/space-source.js';
import { loadSpace, type SearchSpace } from '../space/index.js';
import { shellQuote } from '../tune/summary.js';
import { createRng } from '../util/rng.js';

/**
 * One recommendation as plain data, the same core as `lm-bench recommend`. Runs in the
 * recommendation worker (or in-process for a store without a file); the question was validated on
 * the request thread (names resolved against the catalog, workload loaded).
 */
export interface Question {
  readonly gpu: string;
  readonly gpus: number;
  readonly model: string;
  readonly workload: Workload;
  readonly slo: Slo;
  readonly objectives?: readonly Objective[] | undefined;
  readonly candidates: number;
  readonly seed: number;
}

export interface Answer extends Recommendation {
  readonly model_id: number;
  readonly slo: Slo;
  readonly vllm_command: string | null;
  readonly history_runs: number;
}

/** A saved surrogate, deserialized once, with what `recommend`'s trust rule needs from its record. */
export interface LoadedModel {
  readonly surrogate: Surrogate;
  readonly mape: number | null;
  /** Measured runs the model was trained on, per `gpu|count|model` (train.ts `historyCounts`). */
  readonly history: Readonly<Record<string, number>>;
}

export function loadedModel(record: ModelRecord): LoadedModel {
  const history = record.metadata['history'];
  return {
    surrogate: deserializeSurrogate(record.blob),
    mape: record.metrics['output_throughput_per_gpu.mape'] ?? null,
    history: typeof history === 'object' && history !== null ? (history as Record<string, number>) : {},
  };
}

/**
 * The history behind the answer: the runs for this deployment the model saw when it was trained
 * (not the store's count now), so an answer depends on the question and the model alone and a
 * study adding runs in the background does not invalidate every cached answer.
 */
export function historyOf(m: LoadedModel, q: Pick<Question, 'gpu' | 'gpus' | 'model'>): number {
  return m.history[`${q.gpu}|${q.gpus}|${q.model}`] ?? 0;
}

const spaces = new Map<string, SearchSpace>();

export function spaceAt(path: string): SearchSpace {
  let s = spaces.get(path);
  if (s === undefined) {
    s = loadSpace(path);
    spaces.set(path, s);
  }
  return s;
}

export function answer(opts: {
  readonly surrogate: Surrogate;
  readonly modelId: number;
  readonly validationMape: number | null;
  readonly spacePath: string;
  readonly question: Question;
  readonly historyRuns: number;
}): Answer {
  const q = opts.question;
  const catalog = defaultCatalog();
  const space = spaceAt(opts.spacePath);
  const context = { hardware: catalog.gpu(q.gpu), gpuCount: q.gpus, model: catalog.model(q.model), workload: q.workload };
  const rec = recommend({
    surrogate: opts.surrogate,
    context,
    encoder: spaceEncoder(space),
    source: spaceSource(space, context),
    slo: q.slo,
    ...(q.objectives === undefined ? {} : { objectives: q.objectives }),
    historyRuns: opts.historyRuns,
    validationMape: opts.validationMape,
    rng: createRng(q.seed),
    candidates: q.candidates,
  });
  return {
    model_id: opts.modelId,
    slo: q.slo,
    history_runs: opts.historyRuns,
    ...rec,
    vllm_command: rec.vllmArgs === null ? null : shellQuote(['vllm', ...rec.vllmArgs]),
  };
}
