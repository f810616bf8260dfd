import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitLength, limitTrace, parseTrace, traceWorkload, type ParsedTrace, type TraceRequest } from '../../src/trace/index.js';
import { LmBenchError } from '../../src/errors.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

test('a trace of 200,000 requests is fitted (BurstGPT_1 holds 1.4 million): no argument-spread stack overflow', () => {
  const n = 200_000;
  const xs = Array.from({ length: n }, (_, i) => 1 + (i % 4000));
  const d = fitLength(xs);
  assert.ok(d.dist === 'lognormal' && d.min === 1 && d.max === 4000, JSON.stringify(d));
  const requests: TraceRequest[] = xs.map((x, i) => ({ arrivalMs: i * 10, inputTokens: x, outputTokens: 1 + (i % 700), hashIds: null }));
  const t: ParsedTrace = { file: 'big.csv', format: 'azure', sha256: '0'.repeat(64), blockTokens: null, requests, rows: n, skippedZero: 0 };
  const { workload, summary } = traceWorkload(t, 'big.csv', { name: 'big', embed: false });
  assert.equal(summary.maxInputTokens, 4000);
  assert.equal(summary.maxOutputTokens, 700);
  assert.equal(workload.num_prompts, n);
});

/** Splitwise rows: `arrived_at` in seconds, with a few rows up to half a second out of order. */
function splitwise(rows: readonly (readonly [number, number, number])[], tail = ''): Uint8Array {
  return bytes(['arrived_at,num_prefill_tokens,num_decode_tokens', ...rows.map((r) => r.join(',')), tail].join('\n'));
}

test('--trace-limit N reads the file only until its first N requests by time are certain', () => {
  const rows: [number, number, number][] = [];
  for (let i = 0; i < 300; i++) rows.push([i * 0.1, 100 + i, 10 + i]);
  // Row 52 (time 5.2) comes a little late, after rows of 5.3 and 5.4: the first 53 by time include it.
  const [late] = rows.splice(52, 1);
  rows.splice(54, 0, late as [number, number, number]);
  // A garbled row 25 s after the first 50: never read when only those are asked for.
  const file = splitwise(rows, '30.0,12,oops');
  const first = parseTrace(file, 'sw.csv', 53);
  assert.equal(first.requests.length, 53);
  assert.deepEqual(first.requests.map((r) => r.inputTokens), Array.from({ length: 53 }, (_, i) => 100 + i));
  assert.ok(first.rows < 80, `read ${first.rows} rows`);
  // The same requests as reading everything and keeping the first 53 (of a file without the garbled row).
  const whole = limitTrace(parseTrace(splitwise(rows), 'sw.csv'), 53);
  assert.deepEqual(first.requests, whole.requests);
  // Without a limit the garbled row is still found and named.
  assert.throws(() => parseTrace(file, 'sw.csv'), (e: unknown) => e instanceof LmBenchError && e.code === 'LMB_ERR_TRACE_INVALID' && /sw\.csv:302/.test(e.message));
});

test('--trace-limit counts requests, not rows: 0-token rows before the limit are read past', () => {
  const rows: [number, number, number][] = [];
  for (let i = 0; i < 100; i++) rows.push([i, 100, i % 2 === 0 ? 0 : 10]);
  const t = parseTrace(splitwise(rows), 'sw.csv', 10);
  assert.equal(t.requests.length, 10);
  assert.equal(t.requests[9]?.arrivalMs, 18_000);
  // The failed rows among those read are counted; the file past them is not read.
  assert.ok(t.skippedZero >= 10 && t.rows < 30, `${t.skippedZero} of ${t.rows} rows`);
});

test('lines are read from the bytes: BOM, CRLF, a missing last newline, multi-byte text', () => {
  const text = '\uFEFFarrived_at,num_prefill_tokens,num_decode_tokens\r\n0.0,5,6\r\n\r\n0.5,7,8';
  const t = parseTrace(bytes(text), 'x.csv');
  assert.deepEqual(t.requests.map((r) => [r.arrivalMs, r.inputTokens, r.outputTokens]), [[0, 5, 6], [500, 7, 8]]);
  const j = parseTrace(bytes('{"timestamp_s": 0, "input_tokens": 3, "output_tokens": 4, "note": "héllo ✓"}\n{"timestamp_s": 1, "input_tokens": 5, "output_tokens": 6}'), 'p.jsonl');
  assert.equal(j.requests.length, 2);
  assert.throws(() => parseTrace(bytes('{"timestamp_s": 0, "input_tokens": 3, "output_tokens": 4}\n{"timestamp_s": 1, "input_tok'), 'p.jsonl'), /p\.jsonl:2/);
});

test('a trace of more requests than a workload sends is a user error that names --trace-limit', () => {
  const n = 1_000_001;
  const requests: TraceRequest[] = Array.from({ length: n }, (_, i) => ({ arrivalMs: i, inputTokens: 10, outputTokens: 5, hashIds: null }));
  const t: ParsedTrace = { file: 'BurstGPT_1.csv', format: 'burstgpt', sha256: '0'.repeat(64), blockTokens: null, requests, rows: n, skippedZero: 0 };
  assert.throws(
    () => traceWorkload(t, 'BurstGPT_1.csv', { name: 'b', embed: false }),
    (e: unknown) => e instanceof LmBenchError && e.code === 'LMB_ERR_TRACE_INVALID' && /BurstGPT_1\.csv: more than 1,000,000 requests/.test(e.message) && /--trace-limit/.test(e.message),
  );
});
