import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { test } from 'node:test';
import type { Workload } from '../../src/domain/index.js';
import { statusMessage } from '../../src/loadgen/client.js';
import { runBenchmark } from '../../src/loadgen/index.js';
import { completionsStandIn, tokenStream } from '../helpers/completions-stand-in.js';

// Answers other than 200 to measured requests, from a loopback server that answers the 1-token probe
// well: each is failed with its status (nothing is followed or retried), and its message says what the
// headers said that the body does not.

type Refusal = (res: ServerResponse, n: number) => void;

async function standIn(refuse: Refusal): Promise<{ origin: string; close: () => Promise<void>; measured: () => number }> {
  let measured = 0;
  const s = await completionsStandIn((res, max) => {
    if (max > 1) return refuse(res, measured++);
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(1, false));
  });
  return { origin: s.origin, close: s.close, measured: () => measured };
}

const workload: Workload = {
  name: 'refused',
  api: 'completions',
  input_len: { dist: 'fixed', value: 8 },
  output_len: { dist: 'fixed', value: 3 },
  arrival: { kind: 'closed', concurrency: 1 },
  num_prompts: 4,
  ignore_eos: true,
};

const run = (origin: string): ReturnType<typeof runBenchmark> =>
  runBenchmark({ endpoint: `${origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false, timeoutMs: 10_000, workers: 1 });

test('a redirect of a measured request names its Location, and is not followed', { timeout: 30_000 }, async (t) => {
  const s = await standIn((res, n) => {
    if (n % 2 === 0) res.writeHead(307, { location: '/v2/completions' }).end();
    else res.writeHead(301, { location: 'https://other.example/v1/completions', 'content-type': 'text/html' }).end('<html>Moved Permanently</html>');
  });
  t.after(s.close);
  const { result, records } = await run(s.origin);
  assert.equal(s.measured(), 4, 'each request was sent once, and no redirect followed');
  assert.deepEqual(result.lmb.errors_by_kind, { http_status: 4 });
  assert.deepEqual(records.map((r) => r.http_status), [307, 301, 307, 301]);
  assert.equal(records[0]?.error, 'a redirect to "/v2/completions", not followed (the load follows no redirect: name the URL it points to with --endpoint)');
  assert.equal(records[1]?.error, 'a redirect to "https://other.example/v1/completions", not followed (the load follows no redirect: name the URL it points to with --endpoint): <html>Moved Permanently</html>');
  assert.doesNotMatch(records[0]?.error ?? '', /empty body/);
});

test('429 and 503 keep their Retry-After beside the body; another status does not', { timeout: 30_000 }, async (t) => {
  const s = await standIn((res, n) => {
    const answers: [number, string | null][] = [[429, '7'], [503, 'Wed, 21 Oct 2026 07:28:00 GMT'], [429, null], [500, '3']];
    const [status, after] = answers[n] as [number, string | null];
    res.writeHead(status, { 'content-type': 'application/json', ...(after === null ? {} : { 'retry-after': after }) }).end(n === 1 ? '' : JSON.stringify({ error: { message: 'busy' } }));
  });
  t.after(s.close);
  const { records, result } = await run(s.origin);
  assert.deepEqual(records.map((r) => [r.http_status, r.error]), [
    [429, '{"error":{"message":"busy"}} (Retry-After: "7")'],
    [503, 'an empty body (Retry-After: "Wed, 21 Oct 2026 07:28:00 GMT")'],
    [429, '{"error":{"message":"busy"}}'],
    [500, '{"error":{"message":"busy"}}'],
  ]);
  assert.equal(result.failed, 4);
});

test('statusMessage: the body alone unless a header says more', () => {
  const none = { location: null, retryAfter: null };
  assert.equal(statusMessage(500, '', none), 'an empty body');
  assert.equal(statusMessage(500, 'boom', { location: '/x', retryAfter: '1' }), 'boom');
  assert.equal(statusMessage(302, '', none), 'a redirect without a Location, not followed (the load follows no redirect: name the URL it points to with --endpoint)');
  assert.equal(statusMessage(308, '', { location: '/a', retryAfter: null }).startsWith('a redirect to "/a", not followed'), true);
  assert.equal(statusMessage(503, 'x', { location: null, retryAfter: '120' }), 'x (Retry-After: "120")');
  assert.equal(statusMessage(429, 'x', null), 'x');
});
