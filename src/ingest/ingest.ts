import { createHash } from 'node:crypto';
import { defaultCatalog, type Catalog } from '../catalog/index.js';
import { isLmBenchError, LmBenchError, type ErrorCode } from '../errors.js';
import type { NewRun, RunOutcome, SourceFormat, Store } from '../store/index.js';
import { parseSidecar, resolveRun, type IngestContext, type SidecarInfo } from './context.js';
import { rejected } from './json-text.js';
import type { PassedOver } from './parsed.js';
import { parseFile } from './parse-file.js';
import { contextJudge, replacedNotes, storedRun, type StoredRun } from './stored.js';

/** Files larger than this are rejected unread (vLLM's legacy files with per-request arrays reach tens of MB). */
export const DEFAULT_MAX_FILE_BYTES = 256 * 1024 * 1024;

export interface IngestOptions extends IngestContext {
  readonly catalog?: Catalog;
  readonly maxFileBytes?: number;
  /**
   * A run whose figures are already stored under another context (GPU, GPU count, model, server
   * config) takes this ingest's context; without it the file is rejected, nothing stored.
   */
  readonly replace?: boolean;
  /** Called after each file (progress on a TTY). */
  readonly onFile?: ((report: FileReport, index: number) => void) | undefined;
}

export interface Rejection {
  readonly path: string;
  readonly code: ErrorCode;
  readonly reason: string;
}

export interface FileReport {
  readonly path: string;
  /**
   * accepted: at least one run stored or given this ingest's context (`--replace`); skipped: every run
   * was already stored as it is; rejected: nothing stored.
   */
  readonly status: 'accepted' | 'skipped' | 'rejected';
  readonly format: SourceFormat | null;
  readonly runs: number;
  readonly accepted: number;
  readonly skipped: number;
  /** Runs already stored under another context that took this ingest's (`--replace`); counted in `skipped` too, not in `accepted`. */
  readonly replaced: number;
  readonly run_ids: number[];
  /** The runs counted in `replaced`. */
  readonly replaced_ids: number[];
  /** One entry per run stored or skipped as already stored: its id and headline figures (null: not in the file). */
  readonly stored: StoredRun[];
  readonly warnings: string[];
  readonly code?: ErrorCode;
  readonly reason?: string;
}

export interface IngestSummary {
  /** Runs stored. */
  readonly accepted: number;
  /** Runs already in the store (same content hash), not stored again. */
  readonly skipped: number;
  /** Of those, runs that took this ingest's context (`--replace`). */
  readonly replaced: number;
  readonly rejected: Rejection[];
  readonly files: FileReport[];
  /** JSON files a directory walk passed over as companions (summary.json, inputs.json, warmup.json, …). */
  readonly ignored: string[];
  /** Every file a directory walk passed over, with the reason (other file kinds included). */
  readonly passed_over: PassedOver[];
}

export interface IngestInput {
  /** The name shown in reports and stored as the source path. */
  readonly name: string;
  readonly bytes: Uint8Array;
  /** A sidecar's YAML text, if the caller has one (the HTTP service receives it alongside). */
  readonly sidecarYaml?: string;
  readonly sidecarName?: string;
}

/** Ingests one in-memory file (the HTTP service's entry point). */
export function ingestBuffer(store: Store, input: IngestInput, options: IngestOptions = {}): IngestSummary {
  let sidecar: SidecarInfo | null = null;
  let report: FileReport;
  try {
    if (input.sidecarYaml !== undefined) sidecar = parseSidecar(input.sidecarYaml, input.sidecarName ?? `${input.name}.config.yaml`);
    report = ingestOne(store, { path: input.name, bytes: input.bytes, sidecar }, options);
  } catch (err) {
    report = rejectedReport(input.name, err);
  }
  options.onFile?.(report, 0);
  return summarize([report], [], []);
}

export interface LoadedFile {
  readonly path: string;
  readonly bytes: Uint8Array;
  readonly sidecar: SidecarInfo | null;
}

/**
 * One file, one transaction: parse (pure), attach context, then `store.storeRuns` stores every run or,
 * if anything fails, none. A file-level problem becomes a rejected report; a store failure propagates.
 */
export function ingestOne(store: Store, file: LoadedFile, options: IngestOptions): FileReport {
  const max = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  let rows: NewRun[];
  let format: SourceFormat;
  const warnings: string[] = [];
  try {
    if (file.bytes.byteLength > max) throw tooLarge(file.bytes.byteLength, max);
    const parsed = parseFile(file.path, file.bytes);
    format = parsed.format;
    warnings.push(...parsed.warnings);
    const catalog = options.catalog ?? defaultCatalog();
    rows = parsed.runs.map((run) =>
      resolveRun({ run, format, sourcePath: file.path, contentHash: run.contentHash ?? contentHash(run.record), sidecar: file.sidecar, context: options, catalog, warnings }),
    );
  } catch (err) {
    return rejectedReport(file.path, err);
  }
  let outcomes: RunOutcome[];
  try {
    outcomes = store.storeRuns(rows, { replace: options.replace === true, change: contextJudge(options.catalog ?? defaultCatalog()) });
  } catch (err) {
    if (isLmBenchError(err, 'LMB_ERR_INGEST_REJECTED')) return rejectedReport(file.path, replaceHint(err));
    throw err;
  }
  const runIds = outcomes.flatMap((o) => (o.status === 'new' ? [o.id] : []));
  const replaced = outcomes.filter((o) => o.status === 'replaced');
  warnings.push(...replacedNotes(replaced));
  return {
    path: file.path,
    status: runIds.length > 0 || replaced.length > 0 ? 'accepted' : 'skipped',
    format,
    runs: outcomes.length,
    accepted: runIds.length,
    skipped: outcomes.length - runIds.length,
    replaced: replaced.length,
    run_ids: runIds,
    replaced_ids: replaced.map((o) => o.id),
    stored: rows.map((row, i) => storedRun(row, outcomes[i]?.id ?? null)),
    warnings,
  };
}

/** The store's refusal of figures stored under another context, with the way to replace that context. */
function replaceHint(err: LmBenchError): LmBenchError {
  const runs = Array.isArray(err.details['runs']) ? (err.details['runs'] as unknown[]).filter((x): x is number => typeof x === 'number') : [];
  const hint =
    runs.length === 1
      ? `run #${String(runs[0])} keeps its id and figures and takes this context; its old one is kept in its notes`
      : 'those runs keep their ids and figures and take this context; their old ones are kept in their notes';
  return new LmBenchError(
    'LMB_ERR_INGEST_REJECTED',
    `${err.message}. The same figures cannot have been measured under both: if this ingest's context is the right one, ingest the file again with --replace (${hint})`,
    { details: err.details, cause: err },
  );
}

export function summarize(files: FileReport[], ignored: string[], passedOver: PassedOver[]): IngestSummary {
  return {
    accepted: files.reduce((s, f) => s + f.accepted, 0),
    skipped: files.reduce((s, f) => s + f.skipped, 0),
    replaced: files.reduce((s, f) => s + f.replaced, 0),
    rejected: files.flatMap((f) => (f.status === 'rejected' && f.code !== undefined ? [{ path: f.path, code: f.code, reason: f.reason ?? '' }] : [])),
    files,
    ignored,
    passed_over: passedOver,
  };
}

/**
 * The dedupe key: sha256 of the record as parsed (JSON.stringify keeps the file's key order), so the
 * same run pretty-printed in `run=0.json` and inline in `summary.json` or a JSON Lines file is one run.
 */
export function contentHash(record: unknown): string {
  return createHash('sha256').update(JSON.stringify(record) ?? 'null').digest('hex');
}

/** Codes that mean "this file cannot be used"; anything else (store failures, bugs) propagates. */
const FILE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'LMB_ERR_INGEST_REJECTED',
  'LMB_ERR_INGEST_UNKNOWN_FORMAT',
  'LMB_ERR_INGEST_CONTEXT_MISSING',
  'LMB_ERR_CONFIG_INVALID',
  'LMB_ERR_UNKNOWN_KNOB',
  'LMB_ERR_KNOB_OUT_OF_DOMAIN',
  'LMB_ERR_FILE_NOT_FOUND',
  'LMB_ERR_WORKLOAD_INVALID',
]);

export function rejectedReport(path: string, err: unknown): FileReport {
  if (isLmBenchError(err) && !FILE_CODES.has(err.code)) throw err;
  // A non-catalog error while parsing (e.g. a RangeError on a pathological file) still only concerns this file.
  const e = isLmBenchError(err) ? err : rejected(err instanceof Error ? err.message : String(err), err);
  return { path, status: 'rejected', format: null, runs: 0, accepted: 0, skipped: 0, replaced: 0, run_ids: [], replaced_ids: [], stored: [], warnings: [], code: e.code, reason: e.message };
}

function tooLarge(size: number, max: number) {
  return rejected(`the file is ${(size / 2 ** 20).toFixed(1)} MiB, over the ${(max / 2 ** 20).toFixed(0)} MiB limit`);
}
