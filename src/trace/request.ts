import type { z } from 'zod';
import type { TraceFormat } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';

/**
 * What every trace reader produces: requests with their arrival time (ms from the trace's first
 * request), prompt and output lengths in tokens, and, where the format gives them, the ids of the
 * prompt's blocks (equal ids = equal prefix content, so a prefix cache can serve them).
 */
export interface TraceRequest {
  readonly arrivalMs: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly hashIds: readonly number[] | null;
}

export interface ParsedTrace {
  /** The file's name as given (error messages and the workload's `trace.source` use it). */
  readonly file: string;
  readonly format: TraceFormat;
  readonly sha256: string;
  /** Tokens each hash id covers, or null for a format without block hashes. */
  readonly blockTokens: number | null;
  /** Sorted by arrival time; the first at 0 ms. */
  readonly requests: readonly TraceRequest[];
  /** Data rows read (header and blank lines aside; with a limit, up to where the first N requests were certain). */
  readonly rows: number;
  /** Rows left out because a length is 0 (BurstGPT's failed requests): nothing to replay. */
  readonly skippedZero: number;
}

/** One data row as a reader read it: the absolute time in ms and the 1-based line it came from. */
export interface RawRequest {
  readonly line: number;
  readonly timeMs: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly hashIds: readonly number[] | null;
}

/** A reader of one format: pure, text lines in, raw rows out, one at a time (a trace may not fit in memory as text). */
export interface TraceReader {
  readonly format: TraceFormat;
  /** Tokens per hash id (null: the format has none). */
  readonly blockTokens: number | null;
  /** Whether the first non-blank line (a CSV header, or the first JSON record) is this format's. */
  detect(firstLine: string): boolean;
  read(lines: Iterable<NumberedLine>, file: string): Iterable<RawRequest>;
}

export interface NumberedLine {
  readonly line: number;
  readonly text: string;
}

export function traceError(file: string, line: number | null, field: string | null, message: string): LmBenchError {
  const where = line === null ? file : `${file}:${line}`;
  return new LmBenchError('LMB_ERR_TRACE_INVALID', `${where}: ${field === null ? '' : `${field}: `}${message}`, { details: { file, line, field } });
}

/** A failed record parse, as an error naming file and line, and every field at fault (details: the first). */
export function recordError(file: string, line: number, error: z.ZodError): LmBenchError {
  const path = error.issues[0]?.path ?? [];
  const field = path.length === 0 ? null : path.map(String).join('.');
  return new LmBenchError('LMB_ERR_TRACE_INVALID', formatZodIssues(error.issues, `${file}:${line}`), { details: { file, line, field } });
}
