import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult, RequestRecord } from '../../src/domain/index.js';
import { captureIo } from '../helpers/cli.js';
import { completionsStandIn, tokenStream } from '../helpers/completions-stand-in.js';

// `lm-bench run --mode slo-hold` stopped part-way: the requests it sent are load the server did, and are
// written (as a stopped max-rate search's probes are) before the command fails with the cause. A server
// that dies ends the run once requests in a row find no server (loadgen/server-gone.ts): the rest of the
// duration would only add failures; its requests are kept and the answer says why it stopped.

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-slo-hold-stop-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** `run --mode slo-hold` at 10 req/s to start, for at most `durationS`, writing every output file under `tag`. */
const argv = (url: string, tag: string, durationS: number): string[] => [
  'run', '--endpoint', url, '--model', 'stand-in', '--input-len', '8', '--output-len', '3', '--warmup', '0', '--timeout-s', '10',
  '--mode', 'slo-hold', '--slo', 'ttft_p95_ms=500', '--start-rps', '10', '--duration-s', String(durationS), '--window-s', '1',
  '--output', `${tag}.json`, '--records', `${tag}-rec.jsonl`, '--requests-out', `${tag}-lat.jsonl`,
];

interface HoldBody {
  mode: string;
  max_sustainable_rps: number | null;
  reliable: boolean;
  unreliable_reasons: string[];
  rate_timeline: unknown[];
  result: unknown;
}

const recordsOf = (file: string): RequestRecord[] => readFileSync(join(dir, file), 'utf8').trim().split('\n').map((l) => RequestRecord.parse(JSON.parse(l)));

test('run --mode slo-hold stopped by Ctrl-C part-way writes the requests it sent, says so, and fails with LMB_ERR_INTERRUPTED', { timeout: 60_000 }, async () => {
  // Ctrl-C (the SIGINT `run` listens for) as the 10th measured request arrives, seconds before the run would end.
  let served = 0;
  const s = await completionsStandIn((res, max) => {
    if (max > 1 && ++served === 10) setImmediate(() => process.emit('SIGINT'));
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(max, true));
  });
  try {
    const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
    const code = await main(argv(s.url, 'int', 30), io);
    assert.equal(code, 130, io.err());
    assert.match(io.err(), /lm-bench: the slo-hold run stopped at \d+ s; the \d+ requests measured before are in .*int\.json, .*int-rec\.jsonl, .*int-lat\.jsonl/);
    // The cause is still the command's error, after the note.
    assert.match(io.err(), /measured before are in[^\n]*\n(.|\n)*LMB_ERR_INTERRUPTED/);

    const body = JSON.parse(readFileSync(join(dir, 'int.json'), 'utf8')) as HoldBody;
    assert.equal(body.mode, 'slo-hold');
    assert.equal(body.max_sustainable_rps, null, 'a stopped run answers no rate');
    assert.equal(body.reliable, false);
    assert.match(body.unreliable_reasons[0] ?? '', /^the run stopped at \d+ s: the run was aborted$/);
    BenchmarkResult.parse(body.result);

    const recs = recordsOf('int-rec.jsonl');
    // Every request sent is a record: at least the 10 answered before Ctrl-C, and no more than were sent.
    assert.ok(recs.filter((r) => r.error_kind === null).length >= 10, `${recs.length} records`);
    assert.ok(recs.length <= served + 1, `${recs.length} records for ${served} requests served`);
    assert.equal(new Set(recs.map((r) => r.request_id)).size, recs.length);
    assert.equal(readFileSync(join(dir, 'int-lat.jsonl'), 'utf8').trim().split('\n').length, recs.length);
    const said = /the (\d+) requests measured before/.exec(io.err());
    assert.equal(Number(said?.[1]), recs.length);
  } finally {
    await s.close();
  }
});

test('run --mode slo-hold whose server dies part-way stops once its requests find no server, keeps them, and says why', { timeout: 60_000 }, async () => {
  // The stand-in answers 10 measured requests, then stops listening; the run has 30 s it does not need.
  let served = 0;
  const s = await completionsStandIn((res, max, server) => {
    const last = max > 1 && ++served === 10;
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(max, true), () => {
      if (last) {
        server.close();
        server.closeAllConnections();
      }
    });
  });
  try {
    const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
    const code = await main(argv(s.url, 'dead', 30), io);
    assert.equal(code, 1, io.err());
    assert.equal(served, 10);
    const body = JSON.parse(readFileSync(join(dir, 'dead.json'), 'utf8')) as HoldBody;
    assert.equal(body.reliable, false);
    assert.equal(body.max_sustainable_rps, null);
    const gone = /^the server went away: the (\d+) requests sent since \d+ s found no server \(.*ECONNREFUSED.*\), so the run stopped at \d+ s$/.exec(body.unreliable_reasons[0] ?? '');
    assert.ok(gone !== null, body.unreliable_reasons.join('; '));
    assert.ok(body.unreliable_reasons.some((r) => /the server failed \d+ of \d+ requests/.test(r)), body.unreliable_reasons.join('; '));
    assert.match(io.out(), /no reliable answer: the server went away/);
    const recs = recordsOf('dead-rec.jsonl');
    assert.equal(recs.filter((r) => r.error_kind === null).length, 10);
    const refused = recs.filter((r) => r.error_kind === 'connection_refused');
    // Every failure is a refusal on record; the run stopped at the 20th in a row, give or take those in flight then.
    assert.equal(refused.length, recs.length - 10);
    assert.equal(Number(gone?.[1]), refused.length);
    assert.ok(refused.length >= 20 && refused.length < 30, `${refused.length} refused requests`);
  } finally {
    await s.close();
  }
});
