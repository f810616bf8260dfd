import { z } from 'zod';
import { BenchmarkResult, HardwareRef, ServerConfig, Workload } from '../domain/index.js';
import { SourceFormat } from '../store/index.js';

/**
 * What `lm-bench export` writes and what it writes it from. The writers (llm-d-br.ts, vllm-bench.ts)
 * are pure: an ExportItem in, a document out. An ExportItem is one stored measurement — a study's
 * trial or a run of the history — with the context it was measured in, flattened so the writers need
 * neither the store nor the catalog.
 */
export const ExportFormat = z.enum(['llm-d-br', 'vllm']);
export type ExportFormat = z.infer<typeof ExportFormat>;

export const ExportSubject = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('run'),
    run_id: z.int().positive(),
    source_format: SourceFormat,
    source_path: z.string().nullable(),
    /** sha256 hex of the run's raw content (the store's dedupe key). */
    content_hash: z.string(),
  }),
  z.strictObject({
    kind: z.literal('trial'),
    study: z.string().min(1),
    study_id: z.int().positive(),
    trial: z.int().nonnegative(),
    trial_id: z.int().positive(),
    /**
     * sha256 hex of the run the trial was recorded as in the history (tune/history.ts), its dedupe key;
     * absent when the history holds no such run.
     */
    content_hash: z.string().optional(),
  }),
]);
export type ExportSubject = z.infer<typeof ExportSubject>;

export const ExportItem = z.strictObject({
  subject: ExportSubject,
  result: BenchmarkResult,
  server_config: ServerConfig,
  hardware: HardwareRef,
  /** lm-bench's model id (a catalog id, or ID@HASH8 for a second checkpoint of one name). */
  model: z.string().min(1),
  /** The name the model is served and published under (Hugging Face), what other tools key on. */
  model_name: z.string().min(1),
  workload: Workload.nullable(),
  /**
   * The workload was reconstructed on ingest (fixed lengths at the measured means): its lengths are
   * means, not a distribution anyone asked for, and are exported as such.
   */
  workload_derived: z.boolean(),
  /** Result keys the run's source did not provide (RunMeta.unavailable): never exported as figures. */
  unavailable: z.array(z.string()),
});
export type ExportItem = z.infer<typeof ExportItem>;

/** One file to write: its name inside the output folder and its text. */
export interface ExportFileText {
  readonly name: string;
  readonly text: string;
}

/** One exported measurement: its document, and for `vllm` the sidecar ingest reads its context from. */
export interface ExportedDocument {
  readonly subject: ExportSubject;
  readonly file: ExportFileText;
  readonly sidecar: ExportFileText | null;
}

/** What the command reports per file (`--json`): the path written and what it holds. */
export const ExportedFile = z.strictObject({
  path: z.string(),
  format: ExportFormat,
  run_id: z.int().positive().optional(),
  study: z.string().optional(),
  trial: z.int().nonnegative().optional(),
  /** `vllm` only: `<file>.config.yaml`, the server config, GPU, model and workload for `lm-bench ingest`. */
  sidecar: z.string().optional(),
});
export type ExportedFile = z.infer<typeof ExportedFile>;

export const SkippedTrial = z.strictObject({
  trial: z.int().nonnegative(),
  state: z.string(),
  reason: z.string(),
});
export type SkippedTrial = z.infer<typeof SkippedTrial>;

/**
 * A stored run the format cannot hold without inventing figures (a `vllm` result always carries
 * duration, counts and token totals; an ML.ENERGY record or a vLLM nightly row has none of some).
 */
export const SkippedRun = z.strictObject({
  run_id: z.int().positive(),
  source_format: SourceFormat,
  reason: z.string(),
});
export type SkippedRun = z.infer<typeof SkippedRun>;

export const Skipped = z.union([SkippedTrial, SkippedRun]);
export type Skipped = z.infer<typeof Skipped>;

export const ExportReport = z.strictObject({
  format: ExportFormat,
  out: z.string(),
  files: z.array(ExportedFile),
  /** `vllm` only: summary.json, the list of every record, where `vllm bench sweep plot` looks. */
  summary: z.string().nullable(),
  /**
   * What was not exported: trials of the study that are not complete (nothing measured to write), and
   * runs the format cannot hold without a figure their source lacked.
   */
  skipped: z.array(Skipped),
  /**
   * Entries of `out` this export did not write, left as they were: only with `--force`, since without it
   * a folder holding any is refused (a reader of the folder would take them for part of this export).
   */
  others: z.array(z.string()),
});
export type ExportReport = z.infer<typeof ExportReport>;
