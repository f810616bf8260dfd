import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { LmBenchError } from '../../src/errors.js';
import { azureTimeMs, parseTrace, readTraceFile } from '../../src/trace/index.js';

const dir = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));
const fixture = (name: string): Buffer => readFileSync(`${dir}${name}`);
const withLineEnds = (bytes: Buffer, end: string): Buffer => Buffer.from(bytes.toString('utf8').replace(/\r?\n/g, end), 'utf8');
const traceError = (re: RegExp) => (e: unknown): boolean => e instanceof LmBenchError && e.code === 'LMB_ERR_TRACE_INVALID' && re.test(e.message);

test('a trace with classic Mac line ends (a CR alone) reads as the same requests as with LF', () => {
  for (const name of ['burstgpt-1-head400.csv', 'azure-code-2023-head300.csv', 'plain-splitwise-conv-head50.jsonl', 'mooncake-conversation-head300.jsonl']) {
    const lf = parseTrace(fixture(name), name);
    const cr = parseTrace(withLineEnds(fixture(name), '\r'), name);
    assert.ok(lf.requests.length > 40, name);
    assert.deepEqual(cr.requests, lf.requests, name);
    assert.equal(cr.rows, lf.rows, name);
    // CRLF reads as it did.
    assert.deepEqual(parseTrace(withLineEnds(fixture(name), '\r\n'), name).requests, lf.requests, name);
  }
});

test('with CR line ends, an error names the line as an editor numbers it', () => {
  const text = ['Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type', '5,ChatGPT,472,18,490,x', '6,ChatGPT,many,18,490,x'].join('\r');
  assert.throws(() => parseTrace(Buffer.from(text), 'mac.csv'), traceError(/^mac\.csv:3: Request tokens/));
});

test('a compressed download or UTF-16 text is named as such, not as an unknown trace format', () => {
  const csv = fixture('azure-code-2023-head300.csv');
  assert.throws(() => parseTrace(gzipSync(csv), 'AzureLLMInferenceTrace_code.csv.gz'), traceError(/^AzureLLMInferenceTrace_code\.csv\.gz: the file is gzip-compressed: .*\(gunzip -k AzureLLMInferenceTrace_code\.csv\.gz\)/));
  assert.throws(() => parseTrace(Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), csv]), 'BurstGPT.zip'), traceError(/zip archive/));
  assert.throws(() => parseTrace(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(csv.toString('utf8'), 'utf16le')]), 'excel.csv'), traceError(/UTF-16 text: .*UTF-8/));
  // A UTF-8 BOM is text and is read.
  assert.equal(parseTrace(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), csv]), 'bom.csv').requests.length, 300);
});

test('Azure times: a UTC offset of hours alone (PostgreSQL writes "+00") is read; an impossible offset is refused', () => {
  assert.equal(azureTimeMs('2024-05-10 00:00:00.5+02'), azureTimeMs('2024-05-09 22:00:00.5'));
  assert.equal(azureTimeMs('2024-05-10 00:00:00-05'), azureTimeMs('2024-05-10 05:00:00+00:00'));
  assert.equal(azureTimeMs('2024-05-10 00:00:00+0530'), azureTimeMs('2024-05-09 18:30:00Z'));
  assert.ok(Number.isNaN(azureTimeMs('2024-05-10 00:00:00+24:00')));
  assert.ok(Number.isNaN(azureTimeMs('2024-05-10 00:00:00+02:75')));
  assert.ok(Number.isNaN(azureTimeMs('2024-05-10 00:00:00+2')));
});

test('a known header written with semicolons or tabs names its separator, not "not a trace format"', () => {
  const rows = ['TIMESTAMP;ContextTokens;GeneratedTokens', '2023-11-16 18:17:03.9799600;4808;10'];
  assert.throws(() => parseTrace(Buffer.from(rows.join('\n')), 'excel.csv'), traceError(/^excel\.csv:1: the columns are separated by semicolons: .*comma-separated/));
  const tsv = ['Timestamp\tModel\tRequest tokens\tResponse tokens\tTotal tokens\tLog Type', '5\tChatGPT\t472\t18\t490\tx'];
  assert.throws(() => parseTrace(Buffer.from(tsv.join('\n')), 'b.tsv'), traceError(/separated by tabs/));
  // An unknown header in semicolons is still an unknown format.
  assert.throws(() => parseTrace(Buffer.from('a;b;c\n1;2;3\n'), 'x.csv'), traceError(/not a trace format lm-bench reads/));
});

test('a trace over 2 GiB (more than one read holds) is a trace error saying so, not a file that cannot be found', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'lmb-big-trace-'));
  try {
    const path = join(tmp, 'week.csv');
    writeFileSync(path, 'TIMESTAMP,ContextTokens,GeneratedTokens\n');
    truncateSync(path, 2 ** 31 + 1024); // sparse: no disk is written
    assert.throws(() => readTraceFile(path, 'week.csv', 10), traceError(/^week\.csv: the trace is over 2 GiB.*head -n/));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('a JSON array of requests (one line or pretty-printed) is named as such, with how to make JSON Lines of it', () => {
  const records = [{ timestamp_s: 0, input_tokens: 3, output_tokens: 2 }, { timestamp_s: 1, input_tokens: 5, output_tokens: 2 }];
  for (const text of [JSON.stringify(records), JSON.stringify(records, null, 2)]) {
    assert.throws(() => parseTrace(Buffer.from(text), 'reqs.json'), traceError(/^reqs\.json:1: a JSON array, not JSON Lines: .*jq -c/));
  }
  // The same records as JSON Lines are read.
  assert.equal(parseTrace(Buffer.from(records.map((r) => JSON.stringify(r)).join('\n')), 'reqs.jsonl').requests.length, 2);
});
