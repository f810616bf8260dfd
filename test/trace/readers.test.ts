import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { azureTimeMs, parseTrace, readTraceFile, type ParsedTrace } from '../../src/trace/index.js';

const dir = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));
const read = (name: string): ParsedTrace => readTraceFile(`${dir}${name}`, name);

function assertSortedFromZero(t: ParsedTrace): void {
  assert.equal(t.requests[0]?.arrivalMs, 0);
  for (let i = 1; i < t.requests.length; i++) assert.ok((t.requests[i]?.arrivalMs ?? -1) >= (t.requests[i - 1]?.arrivalMs ?? 0), `request ${i} out of order`);
}

test('Azure: the 2023 code trace, times from the datetime column with its seven fractional digits', () => {
  const t = read('azure-code-2023-head300.csv');
  assert.equal(t.format, 'azure');
  assert.equal(t.requests.length, 300);
  assert.equal(t.skippedZero, 0);
  assert.equal(t.blockTokens, null);
  // Rows 1 and 2: 18:17:03.9799600,4808,10 and 18:17:04.0319600,3180,8.
  assert.deepEqual(t.requests[0], { arrivalMs: 0, inputTokens: 4808, outputTokens: 10, hashIds: null });
  assert.equal(t.requests[1]?.inputTokens, 3180);
  assert.ok(Math.abs((t.requests[1]?.arrivalMs ?? 0) - 52) < 1e-3);
  assertSortedFromZero(t);
  assert.match(t.sha256, /^f157af21d015eeb7/);
});

test('Azure times: fractions, offsets and impossible dates', () => {
  assert.ok(Math.abs(azureTimeMs('2023-11-16 18:17:04.0319600') - azureTimeMs('2023-11-16 18:17:03.9799600') - 52) < 1e-3);
  assert.equal(azureTimeMs('2024-05-10 00:00:00+02:00'), azureTimeMs('2024-05-09 22:00:00'));
  assert.ok(Number.isNaN(azureTimeMs('2023-02-30 10:00:00')));
  assert.ok(Number.isNaN(azureTimeMs('yesterday')));
});

test('Splitwise as Vidur ships it is the Azure conversation trace re-timed: the same requests, the same gaps', () => {
  const sw = read('splitwise-conv-head300.csv');
  const az = read('azure-conv-2023-head1500.csv');
  assert.equal(sw.format, 'splitwise');
  assert.equal(az.requests.length, 1500);
  for (let i = 0; i < 300; i++) {
    const a = az.requests[i];
    const s = sw.requests[i];
    assert.equal(s?.inputTokens, a?.inputTokens, `row ${i}`);
    assert.equal(s?.outputTokens, a?.outputTokens, `row ${i}`);
    assert.ok(Math.abs((s?.arrivalMs ?? 0) - (a?.arrivalMs ?? 0)) < 0.01, `row ${i}: ${s?.arrivalMs} vs ${a?.arrivalMs}`);
  }
});

test('BurstGPT: seconds, columns by name, the 17 failed (0-token) rows left out and counted', () => {
  const t = read('burstgpt-1-head400.csv');
  assert.equal(t.format, 'burstgpt');
  assert.equal(t.rows, 400);
  assert.equal(t.skippedZero, 17);
  assert.equal(t.requests.length, 383);
  assert.deepEqual(t.requests[0], { arrivalMs: 0, inputTokens: 472, outputTokens: 18, hashIds: null });
  assert.deepEqual(t.requests[2], { arrivalMs: 113_000, inputTokens: 417, outputTokens: 276, hashIds: null });
  assert.ok(t.requests.every((r) => r.inputTokens > 0 && r.outputTokens > 0));
  assertSortedFromZero(t);
  // v2's Session ID and Elapsed time columns sit between the time and the model: read by name, the same rows.
  const v2 = 'Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,a1,2.5,ChatGPT,472,18,490,Conversation log\n45,,1.0,ChatGPT,1087,230,1317,API log\n';
  const t2 = parseTrace(Buffer.from(v2), 'v2.csv');
  assert.deepEqual(t2.requests.map((r) => [r.arrivalMs, r.inputTokens, r.outputTokens]), [[0, 472, 18], [40_000, 1087, 230]]);
});

test('Mooncake: ms times, hash_ids kept as 512-token blocks, shared leading blocks across requests', () => {
  const t = read('mooncake-conversation-head300.jsonl');
  assert.equal(t.format, 'mooncake');
  assert.equal(t.blockTokens, 512);
  assert.equal(t.requests.length, 300);
  const first = t.requests[0];
  assert.equal(first?.inputTokens, 6758);
  assert.equal(first?.outputTokens, 500);
  assert.deepEqual(first?.hashIds?.slice(0, 3), [0, 1, 2]);
  for (const r of t.requests) assert.equal(r.hashIds?.length, Math.ceil(r.inputTokens / 512));
  // Every request of this trace starts with block 0 (a shared system prompt).
  assert.ok(t.requests.every((r) => r.hashIds?.[0] === 0));
  // The 11th row is the first at 3000 ms.
  assert.equal(t.requests[10]?.arrivalMs, 3000);
  assertSortedFromZero(t);
});

test("lm-bench's plain JSONL of {timestamp_s, input_tokens, output_tokens}", () => {
  const t = read('plain-splitwise-conv-head50.jsonl');
  assert.equal(t.format, 'jsonl');
  assert.equal(t.requests.length, 50);
  assert.deepEqual(t.requests[1], { arrivalMs: 4314.579, inputTokens: 396, outputTokens: 109, hashIds: null });
  const sw = read('splitwise-conv-head300.csv');
  assert.deepEqual(t.requests.map((r) => r.inputTokens), sw.requests.slice(0, 50).map((r) => r.inputTokens));
});

test('the sha256 is of the file as read, so an edited trace is another trace', () => {
  const bytes = readFileSync(`${dir}azure-code-2023-head300.csv`);
  const a = parseTrace(bytes, 'a.csv');
  const b = parseTrace(Buffer.concat([bytes, Buffer.from('2023-11-16 19:00:00.0000000,10,10\n')]), 'b.csv');
  assert.notEqual(a.sha256, b.sha256);
  assert.equal(b.requests.length, 301);
});

test('rows a little out of order are sorted, stably; CRLF and a BOM are read', () => {
  const text = '\uFEFFarrived_at,num_prefill_tokens,num_decode_tokens\r\n1.0,10,1\r\n0.5,20,2\r\n1.0,30,3\r\n';
  const t = parseTrace(Buffer.from(text), 'x.csv');
  assert.deepEqual(t.requests.map((r) => [r.arrivalMs, r.inputTokens]), [[0, 20], [500, 10], [500, 30]]);
});
