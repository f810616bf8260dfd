import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { LmBenchError } from '../errors.js';
import { parseTrace } from './parse.js';
import { traceWorkload, workloadNameOf, type TraceFit } from './workload.js';
import type { ParsedTrace } from './request.js';

/**
 * The edge: a trace file's bytes, read and parsed (with `limit`, its first `limit` requests by time,
 * the rest of the file hashed but not parsed). Errors name the path as the user gave it.
 */
export function readTraceFile(path: string, shown: string = path, limit?: number): ParsedTrace {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // Node reads at most 2 GiB into one buffer; said as what it is, not as a file that cannot be found.
    if (code === 'ERR_FS_FILE_TOO_LARGE') {
      throw new LmBenchError('LMB_ERR_TRACE_INVALID', `${shown}: the trace is over 2 GiB, more than lm-bench reads at once: replay a part of it cut with head -n (a workload sends at most 1,000,000 requests)`, {
        cause: err,
        details: { file: shown, line: null, field: 'trace' },
      });
    }
    const why = code === 'EISDIR' ? 'is a directory, not a trace file' : code === 'ENOENT' ? 'no such file' : 'cannot be read';
    throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `${shown}: trace ${why}`, { cause: err, details: { file: shown, field: 'trace' } });
  }
  return parseTrace(bytes, shown, limit);
}

/** The file's name without its folder, for a workload's `trace.source` and its default name. */
export function traceName(t: ParsedTrace): string {
  return basename(t.file);
}

export interface TraceFileOptions {
  /** Arrival times are divided by it (default 1). */
  readonly speed?: number | undefined;
  /** The first N requests only. */
  readonly limit?: number | undefined;
  /** Carry the requests in the workload (replay them) rather than only their fit. */
  readonly embed: boolean;
  /** Default: the file's stem. */
  readonly name?: string | undefined;
  readonly api?: 'completions' | 'chat' | undefined;
}

/** A trace file → its workload (and what was read), for the commands that take `--trace FILE`. */
export function traceWorkloadOfFile(path: string, shown: string, opts: TraceFileOptions): TraceFit & { readonly trace: ParsedTrace } {
  const trace = readTraceFile(path, shown, opts.limit);
  const fit = traceWorkload(trace, traceName(trace), { name: opts.name ?? workloadNameOf(shown), speed: opts.speed, embed: opts.embed, api: opts.api });
  return { ...fit, trace };
}
