/**
 * The store's records: what goes in (new runs, trials, models, events and trial outcomes), what comes
 * back (runs, models, specs, events) and the filters that select them. Apart from the store class
 * (sqlite-store.ts) so that its row codecs can import them without a cycle; callers import them, with
 * the `Store` type, from store.ts.
 */

import { z } from 'zod';
import {
  BenchmarkResult,
  HardwareRef,
  ModelSpec,
  ServerConfig,
  Workload,
  type Trial,
  type TrialOrigin,
} from '../domain/index.js';

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

/**
 * What a run was measured on, as ingest attaches it to a file's figures: the GPU, how many, the model
 * and the server config. One measurement has one context: the same figures (content hash) under two
 * contexts means one of them is wrong (`SqliteStore.storeRuns`).
 */
export interface RunContext {
  readonly hardware: HardwareRef;
  readonly model: string;
  readonly server_config: ServerConfig;
}

export function contextOf(run: Pick<RunRecord, 'hardware' | 'model' | 'server_config'>): RunContext {
  return { hardware: run.hardware, model: run.model, server_config: run.server_config };
}

export function newRunContext(run: NewRun): RunContext {
  return { hardware: run.hardware, model: run.model, server_config: run.serverConfig };
}

/** A knob's value as text ("unset" when the config lacks it); values are scalars, JSON keeps anything else readable. */
function knobText(c: Readonly<Record<string, unknown>>, k: string): string {
  const x = c[k];
  return x === undefined ? 'unset' : typeof x === 'string' ? x : JSON.stringify(x);
}

/**
 * How `next` differs from `prev`, in words ("GPUs 1× A100-80GB (this ingest: 1× H100-SXM),
 * max_num_seqs=128 (this ingest: max_num_seqs=64)"), `label` naming where `next` comes from; null when
 * they are the same context (knobs compared by value, whatever their order).
 */
export function contextChange(prev: RunContext, next: RunContext, label: string): string | null {
  const diffs: string[] = [];
  const was = `${prev.hardware.count}× ${prev.hardware.gpu}`;
  const now = `${next.hardware.count}× ${next.hardware.gpu}`;
  if (was !== now) diffs.push(`GPUs ${was} (${label}: ${now})`);
  if (prev.model !== next.model) diffs.push(`model ${prev.model} (${label}: ${next.model})`);
  const knobs = [...new Set([...Object.keys(prev.server_config), ...Object.keys(next.server_config)])].sort();
  const changed = knobs.filter((k) => knobText(prev.server_config, k) !== knobText(next.server_config, k));
  if (changed.length > 0) {
    const list = (c: ServerConfig): string => changed.map((k) => `${k}=${knobText(c, k)}`).join(' ');
    diffs.push(`${list(prev.server_config)} (${label}: ${list(next.server_config)})`);
  }
  return diffs.length === 0 ? null : diffs.join(', ');
}

/** A context in words, for the note a run keeps when its context is replaced. */
export function describeContext(c: RunContext): string {
  const knobs = Object.keys(c.server_config).sort();
  return `GPUs ${c.hardware.count}× ${c.hardware.gpu}, model ${c.model}, server config ${knobs.length === 0 ? '(none)' : knobs.map((k) => `${k}=${knobText(c.server_config, k)}`).join(' ')}`;
}

export interface StoreRunsOptions {
  /** A run whose figures are stored under another context takes the new one (else: the batch is refused). */
  readonly replace?: boolean;
  /** How the stored context differs from the given one, in words, or null where they are the same. */
  readonly change?: (stored: RunContext, given: RunContext) => string | null;
}

/**
 * What `storeRuns` did with each run: stored it (`new`), found its figures stored with the same
 * context (`duplicate`: nothing written), or, asked to, gave the stored run this run's context
 * (`replaced`: `was` is the context it had).
 */
export type RunOutcome =
  | { readonly status: 'new'; readonly id: number }
  | { readonly status: 'duplicate'; readonly id: number }
  | { readonly status: 'replaced'; readonly id: number; readonly was: RunContext };

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
 * the store and by reads that must not write, `GET /v1/runs?model=`): `stored` is the row to return,
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
