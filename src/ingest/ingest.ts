import { createHash } from 'node:crypto';
import { defaultCatalog, type Catalog } from '../catalog/index.js';
import { isLmBenchError, type ErrorCode } from '../errors.js';
import type { NewRun, SourceFormat, Store } from '../store/index.js';
import { parseSidecar, resolveRun, type IngestContext, type SidecarInfo } from './context.js';
import { rejected } from './json-text.js';
import type { PassedOver } from './parsed.js';
import { parseFile } from './parse-file.js';
import { contextNotes, storedRuns, type StoredRun } from './stored.js';

/** Files larger than this are rejected unread (vLLM's legacy files with per-request arrays reach tens of MB). */
export const DEFAULT_MAX_FILE_BYTES = 256 * 1024 * 1024;

export interface IngestOptions extends IngestContext {
  readonly catalog?: Catalog;
  readonly maxFileBytes?: number;
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
  /** accepted: at least one new run stored; skipped: every run was already stored; rejected: nothing stored. */
  readonly status: 'accepted' | 'skipped' | 'rejected';
  readonly format: SourceFormat | null;
  readonly runs: number;
  readonly accepted: number;
  readonly skipped: number;
  readonly run_ids: number[];
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
 * One file, one transaction: parse (pure), attach context, then `store.insertRuns` stores every run or,
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
  const ids = store.insertRuns(rows);
  const runIds = ids.filter((id): id is number => id !== 'duplicate');
  const skipped = ids.length - runIds.length;
  const stored = storedRuns(store, rows, ids, format);
  warnings.push(...contextNotes(store, rows, ids, stored));
  return {
    path: file.path,
    status: runIds.length > 0 ? 'accepted' : 'skipped',
    format,
    runs: ids.length,
    accepted: runIds.length,
    skipped,
    run_ids: runIds,
    stored,
    warnings,
  };
}

export function summarize(files: FileReport[], ignored: string[], passedOver: PassedOver[]): IngestSummary {
  return {
    accepted: files.reduce((s, f) => s + f.accepted, 0),
    skipped: files.reduce((s, f) => s + f.skipped, 0),
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
  return { path, status: 'rejected', format: null, runs: 0, accepted: 0, skipped: 0, run_ids: [], stored: [], warnings: [], code: e.code, reason: e.message };
}

function tooLarge(size: number, max: number) {
  return rejected(`the file is ${(size / 2 ** 20).toFixed(1)} MiB, over the ${(max / 2 ** 20).toFixed(0)} MiB limit`);
}
