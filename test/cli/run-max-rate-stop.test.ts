import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult, RequestRecord } from '../../src/domain/index.js';
import { captureIo } from '../helpers/cli.js';
import { completionsStandIn, tokenStream } from '../helpers/completions-stand-in.js';

// `lm-bench run --mode max-rate` against a loopback server that dies part-way through the search: the
// probes measured before it died are load runs the server did, and are written (as a stopped sweep's
// points are) before the command fails with the cause.

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-max-rate-stop-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in that answers `lives` measured requests (max_tokens > 1) as vLLM does, then stops listening. */
async function mortal(lives: number): Promise<{ url: string; served: () => number }> {
  let served = 0;
  const { url } = await completionsStandIn((res, max, server) => {
    const last = max > 1 && ++served === lives;
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(max, true), () => {
      // Dead once its last answer is out: nothing listens on the port any more.
      if (last) {
        server.close();
        server.closeAllConnections();
      }
    });
  });
  return { url, served: () => served };
}

test('run --mode max-rate whose server dies after the first probe writes that probe, says so, and fails with the cause', { timeout: 60_000 }, async () => {
  // Probe 1 sends 4 requests at once; no server answers within 1 µs, so a second probe is needed, and
  // the server is gone by then.
  const s = await mortal(4);
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const argv = ['run', '--endpoint', s.url, '--model', 'stand-in', '--input-len', '8', '--output-len', '3', '--num-prompts', '4', '--warmup', '0', '--workers', '1', '--timeout-s', '10',
    '--mode', 'max-rate', '--slo', 'ttft_p95_ms=0.001', '--output', 'stop.json', '--records', 'stop-rec.jsonl', '--requests-out', 'stop-lat.jsonl'];
  const code = await main(argv, io);
  assert.notEqual(code, 0, io.err());
  assert.equal(s.served(), 4, 'the server answered probe 1 and nothing more');
  assert.match(io.err(), /lm-bench: the max-rate search stopped at probe 2; the 1 probe measured before is in .*stop\.json, .*stop-rec\.jsonl, .*stop-lat\.jsonl/);
  // The cause is still the command's error, after the note.
  assert.match(io.err(), /LMB_ERR_ENDPOINT_\w+/);

  const body = JSON.parse(readFileSync(join(dir, 'stop.json'), 'utf8')) as { mode: string; max_rate_rps: number | null; reliable: boolean; unreliable_reasons: string[]; probes: { rate_rps: number | 'inf'; meets_slo: boolean }[]; result: unknown };
  assert.equal(body.mode, 'max-rate');
  assert.equal(body.max_rate_rps, null, 'an unfinished search answers no rate');
  assert.equal(body.reliable, false);
  assert.match(body.unreliable_reasons[0] ?? '', /^the search stopped at probe 2: /);
  assert.deepEqual(body.probes.map((p) => [p.rate_rps, p.meets_slo]), [['inf', false]]);
  const result = BenchmarkResult.parse(body.result);
  assert.deepEqual([result.completed, result.failed], [4, 0]);

  const recs = readFileSync(join(dir, 'stop-rec.jsonl'), 'utf8').trim().split('\n').map((l) => RequestRecord.parse(JSON.parse(l)));
  assert.deepEqual(recs.map((r) => r.request_id).sort(), ['probe1-r0', 'probe1-r1', 'probe1-r2', 'probe1-r3']);
  assert.equal(readFileSync(join(dir, 'stop-lat.jsonl'), 'utf8').trim().split('\n').length, 4);
});

test('run --mode max-rate against a server gone before the first probe writes nothing and names no kept probe', { timeout: 60_000 }, async () => {
  // A port nothing listens on any more: the first probe fails at its start.
  const gone = createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
  const port = (gone.address() as AddressInfo).port;
  await new Promise<void>((r) => gone.close(() => r()));
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const argv = ['run', '--endpoint', `http://127.0.0.1:${port}/v1/completions`, '--model', 'stand-in', '--input-len', '8', '--output-len', '3', '--num-prompts', '1', '--warmup', '0', '--workers', '1', '--timeout-s', '10',
    '--mode', 'max-rate', '--slo', 'ttft_p95_ms=0.001', '--output', 'none.json'];
  assert.notEqual(await main(argv, io), 0);
  assert.match(io.err(), /LMB_ERR_ENDPOINT_\w+/);
  assert.doesNotMatch(io.err(), /stopped at probe/);
  assert.throws(() => readFileSync(join(dir, 'none.json')), /ENOENT/);
});
