import type { BenchmarkResult, ServerConfig, Workload } from '../domain/index.js';
import type { RunMeta, SourceFormat } from '../store/index.js';

/** What a file says about the deployment it measured; ingest merges it with sidecars and flags. */
export interface FileHints {
  serverConfig?: ServerConfig;
  /** A GPU name as the file writes it (looked up in the catalog later). */
  gpu?: string;
  gpuCount?: number;
  /** A model name as the file writes it (catalog id, alias or Hugging Face name). */
  model?: string;
  workload?: Workload | null;
}

/** One run parsed from a file, before context is attached. */
export interface ParsedRun {
  /** Where in the file (for messages): "document", "line 3", "benchmarks[2]", "rows[4]". */
  readonly label: string;
  /** The raw record (hashed for dedupe). */
  readonly record: unknown;
  readonly result: BenchmarkResult;
  readonly meta: RunMeta;
  readonly hints: FileHints;
  /**
   * The content hash of the stored run this record is an export of (lm-bench's export writes it), used
   * as the dedupe key instead of the record's own: re-ingesting an export is recognised as the run it
   * came from, not stored a second time.
   */
  readonly contentHash?: string;
}

export interface ParsedFile {
  readonly format: SourceFormat;
  readonly runs: ParsedRun[];
  readonly warnings: string[];
}

/** A file a directory walk passed over, and why (companion, sidecar, tool config, same-run export, other kind). */
export interface PassedOver {
  readonly path: string;
  readonly reason: string;
}
