import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { retryAfterS } from '../../src/loadgen/endpoint.js';
import { captureIo } from '../helpers/cli.js';
import { completionsStandIn, tokenStream } from '../helpers/completions-stand-in.js';

// A server whose model list answers but whose first completion (the probe) is a 429 or 503 is shedding
// load: the run waits as its Retry-After asks (within a bound) and asks again, or is refused naming the
// status, before any measured request is sent; the run's requests would otherwise all fail the same.

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-probe-shed-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** `run` of 4 requests against a stand-in whose probes (max_tokens 1) get `probe(n)` for the n-th probe. */
async function runAgainst(probe: (res: ServerResponse, n: number) => boolean): Promise<{ code: number; err: string; out: string; probes: number; measured: number }> {
  let probes = 0;
  let measured = 0;
  const s = await completionsStandIn((res, max) => {
    if (max === 1 && probe(res, ++probes)) return;
    if (max > 1) measured++;
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(max, true));
  });
  try {
    const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
    const code = await main(['run', '--endpoint', s.url, '--input-len', '8', '--output-len', '3', '--num-prompts', '4', '--warmup', '0', '--workers', '1', '--concurrency', '2'], io);
    return { code, err: io.err(), out: io.out(), probes, measured };
  } finally {
    await s.close();
  }
}

const shed = (res: ServerResponse, status: number, retryAfter: string | null): true => {
  res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter === null ? {} : { 'retry-after': retryAfter }) }).end(JSON.stringify({ error: { message: 'busy' } }));
  return true;
};

test('a probe answered 503 with a short Retry-After waits as asked, probes again, and runs once the server answers', { timeout: 60_000 }, async () => {
  const r = await runAgainst((res, n) => n === 1 && shed(res, 503, '1'));
  assert.equal(r.code, 0, r.err);
  assert.equal(r.probes, 2);
  assert.match(r.err, /lm-bench: http:\/\/127\.0\.0\.1:\d+\/v1\/completions answered the probe request HTTP 503 \(Retry-After: "1"\): the server is shedding load or not ready yet; asking again in 1 s\n/);
  assert.equal(r.measured, 4);
  assert.match(r.out, /^completed 4, failed 0/);
});

test('a probe answered 429 without Retry-After refuses the run, naming the status, before any request is sent', { timeout: 60_000 }, async () => {
  const r = await runAgainst((res) => shed(res, 429, null));
  assert.notEqual(r.code, 0);
  assert.match(r.err, /LMB_ERR_ENDPOINT_BAD_RESPONSE: http:\/\/127\.0\.0\.1:\d+\/v1\/completions answered the probe request HTTP 429: the server is shedding load or not ready yet; nothing was sent/);
  assert.deepEqual([r.probes, r.measured], [1, 0]);
});

test('a probe answered 503 asking for longer than the bound is refused at once, the Retry-After told', { timeout: 60_000 }, async () => {
  const r = await runAgainst((res) => shed(res, 503, '120'));
  assert.notEqual(r.code, 0);
  assert.match(r.err, /answered the probe request HTTP 503 \(Retry-After: "120"\): the server is shedding load or not ready yet, and asks for more than lm-bench waits before a run \(30 s in all\); nothing was sent/);
  assert.deepEqual([r.probes, r.measured], [1, 0]);
});

test('Retry-After is delta-seconds or an HTTP date; anything else asks for no wait', () => {
  const now = Date.parse('2026-10-21T07:28:00Z');
  assert.equal(retryAfterS('7', now), 7);
  assert.equal(retryAfterS(' 0 ', now), 0);
  assert.equal(retryAfterS('Wed, 21 Oct 2026 07:28:12 GMT', now), 12);
  assert.equal(retryAfterS('Wed, 21 Oct 2026 07:27:00 GMT', now), 0);
  assert.equal(retryAfterS('soon', now), null);
  assert.equal(retryAfterS('-3', now), null);
  assert.equal(retryAfterS(null, now), null);
});
