import { z } from 'zod';
import {
  BenchmarkResult,
  HardwareRef,
  ModelSpec,
  ServerConfig,
  Workload,
  type Study,
  type StudySpec,
  type StudyState,
  type Trial,
  type TrialOrigin,
  type TrialState,
} from '../domain/index.js';

/**
 * The history store: benchmark runs, studies and their trials, trained surrogate models and an event
 * log. After Optuna's `BaseStorage` (aesthetics-anchors §4.6); two implementations share one contract
 * test suite (`test/store/store.contract.ts`): `SqliteStore` (the real one) and `MemoryStore`.
 *
 * Invariants every implementation keeps:
 * - **Finished trials are immutable.** Once a trial is `complete`, `failed` or `pruned`, every write to
 *   it throws LMB_ERR_TRIAL_FINISHED (Optuna's `check_trial_is_updatable`).
 * - **Every state change is one transaction.** A trial's state, values, result, timing and failure
 *   reason change together or not at all; `insertRuns` stores all of its runs or none of them.
 * - **Returned objects never change under later writes.** Every read and every write returns a fresh
 *   copy; callers may mutate what they get without affecting the store, and vice versa.
 * - **Time is passed in.** Timestamps come from `StoreOptions.now()` (epoch milliseconds), never from
 *   the clock directly, so a study can be replayed.
 * - **Numbers are stored faithfully.** ±Infinity and NaN in trial values, results, attributes and
 *   payloads come back as they went in; `null` stays `null` and an absent key stays absent.
 * - **One writer.** The store is synchronous (better-sqlite3); one process writes (design: the service or
 *   the study process), others may read. It is not meant to be shared across worker threads.
 *
 * Missing ids throw LMB_ERR_NOT_FOUND (trials, runs, models) or LMB_ERR_STUDY_NOT_FOUND (studies);
 * driver failures throw LMB_ERR_STORE_FAILED with the driver error as `cause`.
 */
export interface Store {
  /* ---------------------------------------------------------------- studies */

  /**
   * Creates a study, or returns the existing one when a study of that name already exists with an
   * identical spec (so a restarted `lm-bench tune` resumes it). A different spec under the same name
   * throws LMB_ERR_STUDY_EXISTS.
   */
  createStudy(spec: StudySpec): Study;
  /** By numeric id or by name; throws LMB_ERR_STUDY_NOT_FOUND. */
  getStudy(idOrName: number | string): Study;
  /** By numeric id or by name; null when there is none. */
  findStudy(idOrName: number | string): Study | null;
  /** All studies, oldest first. */
  listStudies(): Study[];
  setStudyState(studyId: number, state: StudyState): Study;

  /* ----------------------------------------------------------------- trials */

  /** A new trial numbered after the study's last one (0-based). `state` defaults to `waiting`. */
  createTrial(studyId: number, init: NewTrial): Trial;
  /**
   * Atomically takes the study's oldest waiting trial and marks it running (started_at and heartbeat
   * set to now), so two executors never run the same trial. Null when none is waiting.
   */
  claimWaitingTrial(studyId: number): Trial | null;
  /** waiting → running. Throws LMB_ERR_TRIAL_FINISHED when finished, LMB_ERR_INVALID_ARGUMENT when already running. */
  startTrial(trialId: number): Trial;
  /** Records that a running trial is alive (heartbeat_at = now). */
  heartbeat(trialId: number): void;
  /** Merges attributes into an unfinished trial (a key set to undefined is left as it was). */
  setTrialAttrs(trialId: number, attrs: Record<string, unknown>): Trial;
  /** → complete, with its objective values and the measured result. */
  completeTrial(trialId: number, outcome: CompleteOutcome): Trial;
  /** → failed; `started: false` marks a launch failure the feasibility model learns from. */
  failTrial(trialId: number, outcome: FailOutcome): Trial;
  /** → pruned (stopped early on purpose). */
  pruneTrial(trialId: number, outcome?: PruneOutcome): Trial;
  /**
   * Heartbeat recovery (Optuna `fail_stale_trials` + `RetryFailedTrialCallback`): every running trial
   * of the study whose last heartbeat (or start, if it never beat) is before `staleBeforeMs` is marked
   * failed with reason "stale: no heartbeat since …" and `started: null` (unknown), and a fresh waiting
   * trial with the same config, origin `enqueued` and attrs `{ retry_of: <old id> }` is created for
   * each. One transaction for the lot. Trials in `keep` are left running (a controller that
   * reattached to their Slurm jobs follows them).
   */
  requeueStaleTrials(studyId: number, staleBeforeMs: number, keep?: readonly number[]): RequeueReport;
  getTrial(trialId: number): Trial;
  /** The study's trials in number order, optionally only those in the given states. */
  listTrials(studyId: number, filter?: { states?: readonly TrialState[] }): Trial[];

  /* ------------------------------------------------------------------- runs */

  /** One run; 'duplicate' (and nothing written) when a run with the same content hash exists. */
  insertRun(run: NewRun): number | 'duplicate';
  /**
   * Several runs in one transaction (ingest of one file): all are stored, or — when anything throws —
   * none. Each entry is the new id or 'duplicate' (a hash already stored, or repeated in the batch).
   */
  insertRuns(runs: readonly NewRun[]): (number | 'duplicate')[];
  getRun(runId: number): RunRecord;
  /** Newest first (by id). */
  listRuns(filter?: RunFilter): RunRecord[];
  countRuns(filter?: Omit<RunFilter, 'limit' | 'offset'>): number;

  /* ----------------------------------------------------------------- models */

  /**
   * Saves a model. With a `slot`, the model that held the slot (if any) is deleted in the same
   * transaction: a study keeps one current surrogate, not one per refit.
   */
  saveModel(model: NewModel): ModelRecord;
  getModel(modelId: number): ModelRecord;
  /** The most recently saved model of a kind, or null. */
  latestModel(kind: string): ModelRecord | null;
  /** Newest first, without the blobs. */
  listModels(kind?: string): ModelInfo[];

  /* ------------------------------------------------------------ model specs */

  /**
   * Records the LLM spec a study or run names (`resolveModel`'s answer) and returns the spec to use:
   * a catalog model (`config_hash` null) as it is, with no row; a new id stored as given; an id stored
   * with the same config hash, the stored spec; an id stored with another hash (a second checkpoint
   * of one name), the spec under `ID@HASH8` (stored on first sight), so the two never share a history.
   */
  adoptModelSpec(model: NewModelSpec): ModelSpec;
  /** Every stored spec, oldest first. */
  listModelSpecs(): StoredModelSpec[];

  /* ----------------------------------------------------------------- events */

  appendEvent(event: NewEvent): EventRecord;
  /** Oldest first. */
  listEvents(filter?: EventFilter): EventRecord[];

  /** Releases the database; any later call throws LMB_ERR_STORE_FAILED. Idempotent. */
  close(): void;
}

export interface StoreOptions {
  /** Epoch milliseconds; defaults to Date.now at the edge that builds the store (openStore). */
  readonly now: () => number;
}

export interface NewTrial {
  readonly config: ServerConfig;
  readonly origin: TrialOrigin;
  /** `waiting` (default: queued for an executor) or `running` (the caller runs it at once). */
  readonly state?: 'waiting' | 'running';
  readonly attrs?: Record<string, unknown>;
}

export interface CompleteOutcome {
  /** Objective values by objective name; ±Infinity allowed, null where the trial produced none. */
  readonly values: Record<string, number | null>;
  readonly result: BenchmarkResult | null;
  /** A completed trial did start; kept for symmetry with failTrial. */
  readonly started?: true;
}

export interface FailOutcome {
  readonly reason: string;
  /** false = the configuration never started (launch/memory failure); null = unknown. */
  readonly started: boolean | null;
  readonly values?: Record<string, number | null>;
  readonly result?: BenchmarkResult | null;
}

export interface PruneOutcome {
  readonly reason?: string;
  readonly values?: Record<string, number | null>;
  readonly result?: BenchmarkResult | null;
}

export interface RequeueReport {
  readonly failed: Trial[];
  readonly requeued: Trial[];
}

/** Where a run came from (one parser per format in src/ingest/). */
export const SourceFormat = z.enum([
  'vllm_bench_serve',
  'vllm_bench_sweep',
  'vllm_nightly',
  'guidellm',
  'genai_perf',
  'lm_bench',
  'aiperf',
  'sglang',
  'inference_perf',
  'llm_d_br',
  'mlenergy',
]);
export type SourceFormat = z.infer<typeof SourceFormat>;

/**
 * What a run's numbers mean beyond the BenchmarkResult schema. The schema requires every stat key, but
 * foreign formats do not carry them all (GuideLLM has no pooled ITL, the vLLM nightly table only means and
 * stds): such keys hold 0 in `result` (vLLM's own value for an empty sample) and are listed in
 * `unavailable`, so a dataset builder reads them as missing, never as measured zeros (see `runMetric`).
 */
export const RunMeta = z.strictObject({
  /** Result keys (dotted for nested ones, e.g. `lmb.start_epoch_ms`) the source did not provide. */
  unavailable: z.array(z.string()),
  /** How the source computed percentiles: vLLM/genai-perf interpolate linearly, GuideLLM uses nearest rank. */
  percentile_method: z.enum(['linear', 'nearest_rank']),
  /** Free-text provenance: derivations and metric re-mappings applied on ingest. */
  notes: z.array(z.string()),
});
export type RunMeta = z.infer<typeof RunMeta>;

export const DEFAULT_RUN_META: RunMeta = { unavailable: [], percentile_method: 'linear', notes: [] };

export interface NewRun {
  readonly result: BenchmarkResult;
  readonly serverConfig: ServerConfig;
  readonly hardware: HardwareRef;
  /** Catalog model id (data/models.yaml). */
  readonly model: string;
  readonly workload: Workload | null;
  readonly sourceFormat: SourceFormat;
  readonly sourcePath: string | null;
  /** sha256 hex of the run's raw content; the dedupe key (unique). */
  readonly contentHash: string;
  /** Defaults to DEFAULT_RUN_META (everything measured, linear percentiles). */
  readonly meta?: RunMeta;
}

/** A stored benchmark run (snake_case like the other JSON-facing records). */
export const RunRecord = z.strictObject({
  id: z.int().positive(),
  result: BenchmarkResult,
  server_config: ServerConfig,
  hardware: HardwareRef,
  model: z.string(),
  workload: Workload.nullable(),
  source_format: SourceFormat,
  source_path: z.string().nullable(),
  content_hash: z.string(),
  meta: RunMeta,
  created_at_ms: z.number(),
});
export type RunRecord = z.infer<typeof RunRecord>;

/** A numeric result field of a run, or null when the source did not provide it (RunMeta.unavailable). */
export function runMetric(run: Pick<RunRecord, 'result' | 'meta'>, key: string): number | null {
  if (run.meta.unavailable.includes(key)) return null;
  const v = (run.result as Record<string, unknown>)[key];
  return typeof v === 'number' ? v : null;
}

export interface RunFilter {
  readonly model?: string;
  readonly gpu?: string;
  readonly gpuCount?: number;
  readonly sourceFormat?: SourceFormat;
  /** Exact matches on server-config knobs (a knob absent from a run's config never matches). */
  readonly config?: Partial<Record<keyof ServerConfig, number | boolean | string>>;
  /** Default: all. */
  readonly limit?: number;
  readonly offset?: number;
}

export interface NewModel {
  /** What the model predicts, e.g. `surrogate:llama-3.1-8b:H100-SXM` or `feasibility`. */
  readonly kind: string;
  readonly blob: Uint8Array;
  readonly metadata: Record<string, unknown>;
  /** Validation metrics (k-fold R², MAE, …). */
  readonly metrics: Record<string, number | null>;
  /** A name that holds at most one model at a time, e.g. `study:<name>`. */
  readonly slot?: string;
}

export interface ModelInfo {
  readonly id: number;
  readonly kind: string;
  readonly slot: string | null;
  readonly metadata: Record<string, unknown>;
  readonly metrics: Record<string, number | null>;
  readonly size_bytes: number;
  readonly created_at_ms: number;
}

export interface ModelRecord extends ModelInfo {
  readonly blob: Uint8Array;
}

/** A spec to adopt: what `resolveModel` answers (catalog/resolve-model.ts `ResolvedModel`). */
export interface NewModelSpec {
  readonly spec: ModelSpec;
  /** normalisedConfigHash of its config.json; null for a catalog model (nothing stored). */
  readonly config_hash: string | null;
  /** Where it was resolved from: path, hf-cache, hub (or store). */
  readonly origin: string;
  /** The file read or URL fetched. */
  readonly location: string;
}

export const StoredModelSpec = z.strictObject({
  id: z.string().min(1),
  spec: ModelSpec,
  config_hash: z.string(),
  origin: z.string(),
  location: z.string(),
  created_at_ms: z.number(),
});
export type StoredModelSpec = z.infer<typeof StoredModelSpec>;

/** The first 8 hex digits of a config hash: the suffix that tells two checkpoints of one name apart. */
export const HASH_SUFFIX_CHARS = 8;

/**
 * Which id a spec is adopted under, given what is stored (the pure half of `adoptModelSpec`, shared by
 * both stores and by reads that must not write, `GET /v1/runs?model=`): `stored` is the row to return,
 * or null when `id` is new.
 */
export function adoptedIdentity(find: (id: string) => StoredModelSpec | null, model: NewModelSpec & { config_hash: string }): { id: string; stored: StoredModelSpec | null } {
  const plain = find(model.spec.id);
  if (plain === null || plain.config_hash === model.config_hash) return { id: model.spec.id, stored: plain };
  const id = `${model.spec.id}@${model.config_hash.slice(0, HASH_SUFFIX_CHARS)}`;
  return { id, stored: find(id) };
}

export interface NewEvent {
  readonly studyId: number | null;
  readonly kind: string;
  readonly payload: unknown;
}

export interface EventRecord {
  readonly id: number;
  readonly study_id: number | null;
  readonly kind: string;
  readonly payload: unknown;
  readonly at_ms: number;
}

export interface EventFilter {
  /** Only this study's events; null = only events without a study; undefined = all. */
  readonly studyId?: number | null;
  readonly kind?: string;
  /** Only events with a larger id (for tailing). */
  readonly afterId?: number;
  readonly limit?: number;
}
