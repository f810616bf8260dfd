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

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

/**
 * The non-blank lines of the file's bytes, decoded one at a time: never the whole file as one string,
 * which V8 caps at 2^29 characters (Azure's 2024 week-long traces are 0.7 and 1.1 GB). A line ends at
 * LF, CRLF or a CR alone: a CSV saved with classic Mac line ends (Excel's "CSV (Macintosh)") was one
 * line, its header and nothing else, and read as "the trace is empty".
 */
function* numberedLines(bytes: Uint8Array): Generator<NumberedLine> {
  const decoder = new TextDecoder('utf-8');
  let pos = UTF8_BOM.every((b, i) => bytes[i] === b) ? UTF8_BOM.length : 0;
  // The next CR at or after `pos`, searched again only once passed: a file without CRs is scanned for one once.
  let cr = bytes.indexOf(CARRIAGE_RETURN, pos);
  for (let line = 1; pos < bytes.length; line++) {
    if (cr >= 0 && cr < pos) cr = bytes.indexOf(CARRIAGE_RETURN, pos);
    const nl = bytes.indexOf(NEWLINE, pos);
    let end = nl < 0 ? bytes.length : nl;
    // A CR right before the LF is CRLF's (dropped below); one before that ends the line itself.
    if (cr >= 0 && cr < end && !(nl >= 0 && cr === nl - 1)) end = cr;
    const text = decoder.decode(bytes.subarray(pos, end)).replace(/\r$/, '');
    if (text.trim() !== '') yield { line, text };
    pos = end + 1;
  }
}

/** Leading bytes of files that are not text a reader can split into lines, and what to do about it. */
const NOT_TEXT: readonly { readonly magic: readonly number[]; readonly what: (file: string) => string }[] = [
  { magic: [0x1f, 0x8b], what: (f) => `gzip-compressed: give the trace decompressed (gunzip -k ${f})` },
  { magic: [0x50, 0x4b, 0x03, 0x04], what: (f) => `a zip archive: give the trace extracted from it (unzip ${f})` },
  { magic: [0x28, 0xb5, 0x2f, 0xfd], what: (f) => `zstd-compressed: give the trace decompressed (zstd -d ${f})` },
  { magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], what: (f) => `xz-compressed: give the trace decompressed (xz -dk ${f})` },
  { magic: [0x42, 0x5a, 0x68], what: (f) => `bzip2-compressed: give the trace decompressed (bunzip2 -k ${f})` },
  { magic: [0xff, 0xfe], what: () => 'UTF-16 text: give it as UTF-8 (iconv -f UTF-16 -t UTF-8)' },
  { magic: [0xfe, 0xff], what: () => 'UTF-16 text: give it as UTF-8 (iconv -f UTF-16 -t UTF-8)' },
];

/** Why the bytes are no trace to read as lines (a compressed download, UTF-16 text), or null. */
function notText(bytes: Uint8Array, file: string): string | null {
  return NOT_TEXT.find(({ magic }) => magic.every((b, i) => bytes[i] === b))?.what(file) ?? null;
}

export function detectReader(firstLine: string): TraceReader | null {
  return TRACE_READERS.find((r) => r.detect(firstLine)) ?? null;
}

/**
 * The trace from its rows, in time order. With `limit`, reading stops once the first `limit` requests
 * by time are certain: a later row may come at most MAX_BACKWARD_MS before the latest time read, so
 * when that bound has passed the latest of `limit` kept rows, none of the rest can be among them (a
 * replay of the first thousand requests of a week-long trace reads a thousand rows, not 27 million).
 */
function finish(rows: Iterable<RawRequest>, reader: TraceReader, file: string, sha256: string, limit: number | undefined): ParsedTrace {
  let latest = Number.NEGATIVE_INFINITY;
  let latestLine = 0;
  let read = 0;
  // The latest time among the first `limit` kept rows (in file order): the limit-th earliest is no later.
  let limitBoundMs = Number.NEGATIVE_INFINITY;
  const kept: RawRequest[] = [];
  for (const r of rows) {
    if (limit !== undefined && kept.length >= limit && latest - MAX_BACKWARD_MS > limitBoundMs) break;
    read++;
    if (!Number.isFinite(r.timeMs)) throw traceError(file, r.line, 'time', 'not a finite time');
    if (r.timeMs < latest - MAX_BACKWARD_MS) {
      throw traceError(file, r.line, 'time', `${((latest - r.timeMs) / 1000).toFixed(3)} s before line ${latestLine}: the rows are not in time order (up to ${MAX_BACKWARD_MS} ms back is sorted, more is refused)`);
    }
    if (r.timeMs > latest) {
      latest = r.timeMs;
      latestLine = r.line;
    }
    if (r.inputTokens > 0 && r.outputTokens > 0) {
      if (limit === undefined || kept.length < limit) limitBoundMs = Math.max(limitBoundMs, r.timeMs);
      kept.push(r);
    }
  }
  if (read === 0) throw traceError(file, null, null, 'no requests: the trace is empty');
  if (kept.length === 0) throw traceError(file, null, null, `no requests: all ${read} rows have 0 input or output tokens`);
  // Stable (V8's sort is): rows of one instant keep the file's order.
  kept.sort((a, b) => a.timeMs - b.timeMs);
  const taken = limit === undefined ? kept : kept.slice(0, limit);
  const t0 = (taken[0] as RawRequest).timeMs;
  const requests = taken.map((r): TraceRequest => ({ arrivalMs: r.timeMs - t0, inputTokens: r.inputTokens, outputTokens: r.outputTokens, hashIds: r.hashIds }));
  const anyHashes = reader.blockTokens !== null && requests.some((r) => r.hashIds !== null);
  return {
    file,
    format: reader.format,
    sha256,
    blockTokens: anyHashes ? reader.blockTokens : null,
    requests: anyHashes ? requests : requests.map((r) => (r.hashIds === null ? r : { ...r, hashIds: null })),
    rows: read,
    skippedZero: read - kept.length,
  };
}

/**
 * The most requests a Workload sends (its schema's bound on num_prompts). A trace of more is read
 * only to one past it, so a week-long trace without --trace-limit is refused in seconds, not parsed
 * whole first (Azure's 2024 conversation week: 27 million rows).
 */
export const MAX_TRACE_REQUESTS = 1_000_000;

/**
 * Bytes of a trace file → its requests; with `limit`, the first `limit` by time (reading no further
 * than needed); without, all of them, or the first MAX_TRACE_REQUESTS + 1 of a longer trace.
 */
export function parseTrace(bytes: Uint8Array, file: string, limit?: number): ParsedTrace {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  // Named as what it is: read as lines, a compressed download is "not a trace format lm-bench reads".
  const packed = notText(bytes, file);
  if (packed !== null) throw traceError(file, null, null, `the file is ${packed}`);
  const lines = numberedLines(bytes);
  const first = lines.next();
  if (first.done === true) throw traceError(file, null, null, 'no requests: the file is empty');
  const reader = detectReader(first.value.text);
  if (reader === null) {
    const sep = otherSeparator(first.value.text);
    if (sep !== null) {
      throw traceError(file, first.value.line, null, `the columns are separated by ${sep.name}: lm-bench reads comma-separated CSV (export or save the trace with commas)`);
    }
    if (first.value.text.trimStart().startsWith('[')) {
      throw traceError(file, first.value.line, null, `a JSON array, not JSON Lines: lm-bench reads one request object a line (jq -c '.[]' ${file} > trace.jsonl)`);
    }
    throw traceError(
      file,
      first.value.line,
      null,
      `not a trace format lm-bench reads: expected a CSV header of Azure (TIMESTAMP,ContextTokens,GeneratedTokens), BurstGPT (Timestamp,…,Request tokens,Response tokens,…) or Splitwise (arrived_at,num_prefill_tokens,num_decode_tokens), or JSON Lines of Mooncake ({timestamp, input_length, output_length, hash_ids}) or {timestamp_s, input_tokens, output_tokens}`,
    );
  }
  // The reader sees every line, the first (a CSV header, or the first JSON record) included.
  const all = (function* () {
    yield first.value;
    yield* lines;
  })();
  return finish(reader.read(all, file), reader, file, sha256, limit ?? MAX_TRACE_REQUESTS + 1);
}

/**
 * Separators other than the comma that exports write (a spreadsheet in a locale whose decimal mark is
 * the comma writes semicolons): a known header in one of them is named, not "not a trace format".
 */
const OTHER_SEPARATORS = [
  { char: ';', name: 'semicolons' },
  { char: '\t', name: 'tabs' },
  { char: '|', name: 'vertical bars' },
] as const;

/** The separator a known CSV header is written with when it is not the comma, or null. */
function otherSeparator(header: string): (typeof OTHER_SEPARATORS)[number] | null {
  if (header.includes(',')) return null;
  return OTHER_SEPARATORS.find((s) => header.includes(s.char) && detectReader(header.split(s.char).join(',')) !== null) ?? null;
}

/** The first `n` requests (by time) of a trace. */
export function limitTrace(t: ParsedTrace, n: number | undefined): ParsedTrace {
  return n === undefined || n >= t.requests.length ? t : { ...t, requests: t.requests.slice(0, n) };
}
