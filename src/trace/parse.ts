import { createHash } from 'node:crypto';
import { azureReader } from './azure.js';
import { burstGptReader } from './burstgpt.js';
import { mooncakeReader, plainJsonlReader } from './jsonl.js';
import { traceError, type NumberedLine, type ParsedTrace, type RawRequest, type TraceReader, type TraceRequest } from './request.js';
import { splitwiseReader } from './splitwise.js';

/**
 * Bytes of a trace file → its requests, validated and sorted by time, the first at 0 ms. The format
 * is told by the header or the first record. Pure: the caller reads the file (trace/file.ts).
 */
export const TRACE_READERS: readonly TraceReader[] = [azureReader, burstGptReader, splitwiseReader, mooncakeReader, plainJsonlReader];

/**
 * How far a row may come before the one above it (ms). Logs written by several workers are a little
 * out of order and are sorted; a time further back means the column is not a clock (shuffled rows,
 * another column read as the time) and is refused rather than replayed as something it is not.
 */
export const MAX_BACKWARD_MS = 1000;

function numberedLines(text: string): NumberedLine[] {
  const out: NumberedLine[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() !== '') out.push({ line: i + 1, text: line });
  });
  return out;
}

export function detectReader(firstLine: string): TraceReader | null {
  return TRACE_READERS.find((r) => r.detect(firstLine)) ?? null;
}

function finish(rows: readonly RawRequest[], reader: TraceReader, file: string, sha256: string): ParsedTrace {
  if (rows.length === 0) throw traceError(file, null, null, 'no requests: the trace is empty');
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as RawRequest;
    if (!Number.isFinite(r.timeMs)) throw traceError(file, r.line, 'time', 'not a finite time');
  }
  let latest = Number.NEGATIVE_INFINITY;
  let latestLine = 0;
  for (const r of rows) {
    if (r.timeMs < latest - MAX_BACKWARD_MS) {
      throw traceError(file, r.line, 'time', `${((latest - r.timeMs) / 1000).toFixed(3)} s before line ${latestLine}: the rows are not in time order (up to ${MAX_BACKWARD_MS} ms back is sorted, more is refused)`);
    }
    if (r.timeMs > latest) {
      latest = r.timeMs;
      latestLine = r.line;
    }
  }
  const kept = rows.filter((r) => r.inputTokens > 0 && r.outputTokens > 0);
  if (kept.length === 0) throw traceError(file, null, null, `no requests: all ${rows.length} rows have 0 input or output tokens`);
  // Stable: rows of one instant keep the file's order.
  const sorted = kept.map((r, i) => ({ r, i })).sort((a, b) => a.r.timeMs - b.r.timeMs || a.i - b.i).map((x) => x.r);
  const t0 = (sorted[0] as RawRequest).timeMs;
  const requests = sorted.map((r): TraceRequest => ({ arrivalMs: r.timeMs - t0, inputTokens: r.inputTokens, outputTokens: r.outputTokens, hashIds: r.hashIds }));
  const anyHashes = reader.blockTokens !== null && requests.some((r) => r.hashIds !== null);
  return {
    file,
    format: reader.format,
    sha256,
    blockTokens: anyHashes ? reader.blockTokens : null,
    requests: anyHashes ? requests : requests.map((r) => (r.hashIds === null ? r : { ...r, hashIds: null })),
    rows: rows.length,
    skippedZero: rows.length - kept.length,
  };
}

export function parseTrace(bytes: Uint8Array, file: string): ParsedTrace {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const text = new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
  const lines = numberedLines(text);
  const first = lines[0];
  if (first === undefined) throw traceError(file, null, null, 'no requests: the file is empty');
  const reader = detectReader(first.text);
  if (reader === null) {
    throw traceError(
      file,
      first.line,
      null,
      `not a trace format lm-bench reads: expected a CSV header of Azure (TIMESTAMP,ContextTokens,GeneratedTokens), BurstGPT (Timestamp,…,Request tokens,Response tokens,…) or Splitwise (arrived_at,num_prefill_tokens,num_decode_tokens), or JSON Lines of Mooncake ({timestamp, input_length, output_length, hash_ids}) or {timestamp_s, input_tokens, output_tokens}`,
    );
  }
  return finish(reader.read(lines, file), reader, file, sha256);
}

/** The first `n` requests (by time) of a trace. */
export function limitTrace(t: ParsedTrace, n: number | undefined): ParsedTrace {
  return n === undefined || n >= t.requests.length ? t : { ...t, requests: t.requests.slice(0, n) };
}
