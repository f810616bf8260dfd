import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult, type RequestRecord } from '../../src/domain/index.js';
import { captureIo } from '../helpers/cli.js';
import { completionsStandIn } from '../helpers/completions-stand-in.js';

// `lm-bench run` against loopback servers that misbehave as real ones do. The standard: the figures are
// what the server did (every request sent is counted, completed or failed with its kind), and a run
// that lost requests says so. The 1-token probe is always answered well, so each habit meets the load.

type Habit = (res: ServerResponse, maxTokens: number, n: number) => void;

const event = (obj: unknown): string => `data: ${JSON.stringify(obj)}\n\n`;
const tokenChunk = (text: string, finish: string | null, extra: object = {}): string => event({ object: 'text_completion', choices: [{ index: 0, text, finish_reason: finish }], ...extra });
const usageChunk = (n: number): string => event({ choices: [], usage: { prompt_tokens: 8, completion_tokens: n } });

/** vLLM's answer: one token a chunk, the finish reason on the last, a usage chunk, [DONE]. */
function wellFormed(res: ServerResponse, max: number): void {
  let out = '';
  for (let i = 0; i < max; i++) out += tokenChunk(' tok', i === max - 1 ? 'length' : null);
  res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${out}${usageChunk(max)}data: [DONE]\n\n`);
}

let habit: Habit = wellFormed;
let measured = 0;
let port = 0;
let dir = '';
let server: Server | null = null;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-run-misbehave-'));
  const up = await completionsStandIn((res, max) => {
    if (max === 1) wellFormed(res, 1);
    else habit(res, max, measured++);
  });
  server = up.server;
  port = up.port;
});
after(async () => {
  const s = server;
  if (s !== null) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  readonly code: number;
  readonly result: BenchmarkResult;
  readonly records: RequestRecord[];
  readonly err: string;
}

/** 4 requests, 3 tokens each, 2 in flight, against the stand-in with `h`. */
async function runWith(h: Habit, extra: readonly string[] = [], target = `http://127.0.0.1:${port}/v1/completions`): Promise<Run> {
  habit = h;
  measured = 0;
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const code = await main(['run', '--endpoint', target, '--model', 'stand-in', '--input-len', '8', '--output-len', '3', '--num-prompts', '4', '--concurrency', '2', '--timeout-s', '10', '--output', 'out.json', '--records', 'rec.jsonl', ...extra], io);
  const result = BenchmarkResult.parse(JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')));
  const records = readFileSync(join(dir, 'rec.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
  assert.equal(result.completed + result.failed, 4, 'every request sent is counted');
  assert.equal(records.length, 4);
  return { code, result, records, err: io.err() };
}

test('a connection closed mid-stream fails its request (connection_reset), and the run says requests failed', { timeout: 60_000 }, async () => {
  const r = await runWith((res, max, n) => {
    if (n % 2 === 1) return wellFormed(res, max);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(tokenChunk(' tok', null));
    setTimeout(() => res.socket?.destroy(), 5);
  });
  assert.equal(r.code, 0);
  assert.deepEqual([r.result.completed, r.result.failed], [2, 2]);
  assert.deepEqual(r.result.lmb.errors_by_kind, { connection_reset: 2 });
  assert.equal(r.result.diagnosis?.failures?.count, 2);
  assert.match(r.result.diagnosis?.summary ?? '', /^2 of 4 requests failed \(2× HTTP 200: the server closed the connection mid-response\)/);
  // Only completed answers are tokens: the broken ones' partial chunks count nowhere.
  assert.equal(r.result.total_output_tokens, 6);
});

test('200 with one JSON body for a streamed request, or a stream cut with neither [DONE] nor a finish reason, is failed', { timeout: 60_000 }, async () => {
  const json = await runWith((res, max) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, text: 'x', finish_reason: 'length' }], usage: { completion_tokens: max } })));
  assert.equal(json.code, 1, 'nothing completed');
  assert.deepEqual(json.result.lmb.errors_by_kind, { bad_response: 4 });
  assert.match(json.records[0]?.error ?? '', /the answer held no server-sent event/);
  const cut = await runWith((res, max) => {
    let out = '';
    for (let i = 0; i < max; i++) out += tokenChunk(' tok', null);
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(out);
  });
  assert.equal(cut.code, 1);
  assert.deepEqual(cut.result.lmb.errors_by_kind, { truncated_stream: 4 });
});

test('a stream without [DONE] that finished, and usage on the last token chunk, are complete answers counted from usage', { timeout: 60_000 }, async () => {
  const noDone = await runWith((res, max) => {
    let out = '';
    for (let i = 0; i < max; i++) out += tokenChunk(' tok', i === max - 1 ? 'length' : null);
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${out}${usageChunk(max)}`);
  });
  assert.deepEqual([noDone.code, noDone.result.completed, noDone.result.total_output_tokens], [0, 4, 12]);
  const lastChunk = await runWith((res, max) => {
    let out = '';
    for (let i = 0; i < max; i++) out += tokenChunk(' tok', i === max - 1 ? 'length' : null, i === max - 1 ? { usage: { prompt_tokens: 8, completion_tokens: max } } : {});
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${out}data: [DONE]\n\n`);
  });
  assert.equal(lastChunk.result.completed, 4);
  assert.deepEqual(lastChunk.result.lmb.token_source_counts, { usage: 4 });
  assert.equal(lastChunk.result.total_output_tokens, 12);
  assert.doesNotMatch(lastChunk.err, /carried no usage/);
});

test('answers without usage are flagged, each by its estimate: max_tokens for those that finished for length, chunks (a floor) for the others', { timeout: 60_000 }, async () => {
  // 3 tokens in 2 chunks (2 + 1), no usage: the client can see 2. Half finish for length, half stop there.
  const r = await runWith((res, max, n) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${tokenChunk(' tok tok', null)}${tokenChunk(' tok'.repeat(max - 2), n % 2 === 0 ? 'length' : 'stop')}data: [DONE]\n\n`);
  });
  assert.equal(r.result.completed, 4);
  assert.deepEqual(r.result.lmb.token_source_counts, { max_tokens: 2, fallback: 2 });
  // The records (--records) tell them apart.
  assert.deepEqual(r.records.map((x) => [x.finish_reason, x.output_tokens, x.token_source]).sort(), [['length', 3, 'max_tokens'], ['length', 3, 'max_tokens'], ['stop', 2, 'fallback'], ['stop', 2, 'fallback']]);
  assert.match(r.err, /warning: 4 of 4 completed answers carried no usage \(the server ignores stream_options\.include_usage\): their output tokens are estimated: 2 finished for length, counted as their max_tokens \(token_source max_tokens\); 2 counted as one token a content chunk \(token_source fallback\), which undercounts them/);
});

test('429 and 503 with Retry-After, and a redirect, fail their requests with the status; nothing is retried or followed', { timeout: 60_000 }, async () => {
  const shed = await runWith((res, max, n) => {
    if (n % 2 === 0) return wellFormed(res, max);
    res.writeHead(n === 1 ? 429 : 503, { 'retry-after': '1', 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'slow down' } }));
  });
  assert.equal(shed.code, 0);
  assert.deepEqual([shed.result.completed, shed.result.failed], [2, 2]);
  assert.deepEqual(shed.records.filter((x) => x.error_kind !== null).map((x) => x.http_status).sort(), [429, 503]);
  assert.equal(measured, 4, 'no request was sent again');
  const moved = await runWith((res) => res.writeHead(307, { location: '/v2/completions' }).end());
  assert.equal(moved.code, 1);
  assert.deepEqual(moved.records.map((x) => [x.error_kind, x.http_status]), Array.from({ length: 4 }, () => ['http_status', 307]));
  assert.equal(measured, 4, 'no redirect was followed');
});

test('a server slow to accept (its backlog full, its loop stalled) costs connects, each counted as a failed request', { timeout: 90_000 }, async (t) => {
  // A server in its own process with a backlog of 1, whose event loop stalls for 2 s after the probe:
  // connections beyond the backlog wait for the kernel's SYN retry, past a 0.3 s connect time-out.
  const script = join(dir, 'stall.mjs');
  writeFileSync(script, `
import { createServer } from 'node:http';
let probes = 0;
const s = createServer((req, res) => {
  if (req.url === '/v1/models') { res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"stand-in"}]}'); return; }
  let b = ''; req.on('data', (c) => (b += c)); req.on('end', () => {
    const max = JSON.parse(b).max_tokens;
    let out = '';
    for (let i = 0; i < max; i++) out += 'data: ' + JSON.stringify({ choices: [{ index: 0, text: ' tok', finish_reason: i === max - 1 ? 'length' : null }] }) + '\\n\\n';
    // The stall begins once the probe's answer is handed to the kernel, before the client reads it.
    const stall = max === 1 && probes++ === 0 ? () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000) : undefined;
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(out + 'data: [DONE]\\n\\n', stall);
  });
});
s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => console.log(s.address().port));
`);
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  const stallPort = await new Promise<string>((r) => child.stdout.once('data', (d: Buffer) => r(d.toString().trim())));
  writeFileSync(join(dir, 'stall.yaml'), `model: stand-in\ndataset: {kind: synthetic, input_len: 8, output_len: 3}\ntraffic: {concurrency: 4}\nnum_prompts: 8\nscrape_metrics: false\n`);
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const code = await main(['run', '--config', 'stall.yaml', '--port', stallPort, '--connect-timeout-s', '0.3', '--timeout-s', '20', '--records', 'stall.jsonl', '--json'], io);
  const result = BenchmarkResult.parse(JSON.parse(io.out()));
  const records = readFileSync(join(dir, 'stall.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
  assert.equal(records.length, 8);
  assert.equal(result.completed + result.failed, 8, 'every request sent is counted');
  assert.ok(result.failed > 0, 'connects beyond the backlog timed out during the stall');
  assert.equal(code, result.completed === 0 ? 1 : 0);
  for (const r of records.filter((x) => x.error_kind !== null)) {
    assert.equal(r.error_kind, 'timeout');
    assert.match(r.error ?? '', /^connect to 127\.0\.0\.1:\d+ timed out after 300 ms$/);
  }
  assert.equal(result.lmb.errors_by_kind['timeout'] ?? 0, result.failed);
});
