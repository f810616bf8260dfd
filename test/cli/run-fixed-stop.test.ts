import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { BenchmarkResult, RequestRecord } from '../../src/domain/index.js';
import { main } from '../../src/cli/main.js';
import { captureIo, LMB_BIN } from '../helpers/cli.js';
import { completionsStandIn, tokenStream } from '../helpers/completions-stand-in.js';

// `lm-bench run` (fixed mode) stopped by Ctrl-C: the requests it sent are load the server did, and are
// written (as a stopped slo-hold run's are) before the command fails with LMB_ERR_INTERRUPTED. The real
// process gets the SIGINT, as from a terminal.

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-fixed-stop-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const recordsOf = (file: string): RequestRecord[] => readFileSync(join(dir, file), 'utf8').trim().split('\n').map((l) => RequestRecord.parse(JSON.parse(l)));

test('run (fixed) stopped by SIGINT writes every request sent (those in flight as aborted), says so, and exits 130', { timeout: 120_000 }, async (t) => {
  // 4 streams: the first 10 requests are answered, the next 4 are held open; SIGINT once all 4 are in flight.
  const answered = 10;
  const streams = 4;
  let served = 0;
  let interrupt: () => void = () => undefined;
  const s = await completionsStandIn((res, max) => {
    // The connection check's probe (max_tokens 1) is answered and not counted.
    const k = max > 1 ? ++served : 0;
    if (k <= answered) {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(max, true));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, text: ' tok', finish_reason: null }] })}\n\n`);
    if (k === answered + streams) interrupt();
  });
  t.after(() => s.close());
  const args = ['run', '--endpoint', s.url, '--model', 'stand-in', '--input-len', '8', '--output-len', '3', '--num-prompts', '1000', '--concurrency', String(streams),
    '--warmup', '0', '--workers', '1', '--timeout-s', '60', '--output', 'int.json', '--records', 'int-rec.jsonl', '--requests-out', 'int-lat.jsonl'];
  const child = spawn(process.execPath, [LMB_BIN, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LMB_LOOPBACK_ONLY: '1' } });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  interrupt = () => child.kill('SIGINT');
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  const code = await new Promise<number | string | null>((done) => child.on('exit', (c, sig) => done(c ?? sig)));

  assert.equal(served, answered + streams, 'nothing was sent after the SIGINT');
  assert.equal(code, 130, stderr);
  assert.match(stderr, new RegExp(`lm-bench: the run stopped after ${answered + streams} of 1000 requests; the ${answered + streams} requests measured before are in .*int\\.json, .*int-rec\\.jsonl, .*int-lat\\.jsonl`));
  // The cause is still the command's error, after the note.
  assert.match(stderr, /measured before are in[^\n]*\n(.|\n)*LMB_ERR_INTERRUPTED/);

  const recs = recordsOf('int-rec.jsonl');
  assert.equal(recs.length, answered + streams);
  assert.equal(new Set(recs.map((r) => r.request_id)).size, recs.length);
  assert.equal(recs.filter((r) => r.error_kind === null).length, answered);
  // Cut short by the stop, as slo-hold records them: each got its first token before.
  const cut = recs.filter((r) => r.error_kind !== null);
  assert.deepEqual(cut.map((r) => r.error_kind), Array(streams).fill('aborted'));
  assert.ok(cut.every((r) => r.chunk_times_s.length === 1));
  assert.equal(readFileSync(join(dir, 'int-lat.jsonl'), 'utf8').trim().split('\n').length, recs.length);

  const body = JSON.parse(readFileSync(join(dir, 'int.json'), 'utf8')) as { stopped?: string };
  assert.equal(body.stopped, `the run stopped after ${answered + streams} of 1000 requests: the run was aborted`);
  const result = BenchmarkResult.parse(body);
  // The requests the stop cut short are not failures of the server.
  assert.deepEqual([result.completed, result.failed], [answered, 0]);
});

test('a sweep stopped by Ctrl-C in its second point keeps the first and the part of the second it sent, that one marked stopped', { timeout: 60_000 }, async (t) => {
  // Point 1 (3 requests) is answered; point 2's first request is answered, its second held open, and
  // Ctrl-C (the SIGINT `run` listens for) comes as that one arrives.
  let served = 0;
  const s = await completionsStandIn((res, max) => {
    const k = max > 1 ? ++served : 0;
    if (k === 5) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      setImmediate(() => process.emit('SIGINT'));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(max, true));
  });
  t.after(() => s.close());
  writeFileSync(join(dir, 'sweep.yaml'), [
    `endpoint: ${s.url}`,
    'model: stand-in',
    'dataset: {kind: synthetic, input_len: 8, output_len: 3}',
    'traffic: {concurrency: 1}',
    'num_prompts: 3',
    'scrape_metrics: false',
    'sweep:',
    '  traffic.concurrency: [1, 2]',
    '',
  ].join('\n'));
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const code = await main(['run', '--config', 'sweep.yaml', '--warmup', '0', '--output', 'sw.jsonl', '--records', 'sw-rec.jsonl'], io);
  assert.equal(code, 130, io.err());
  assert.equal(served, 5);
  assert.match(io.err(), /lm-bench: the sweep stopped at point 2 of 2, after 2 of its 3 requests; the 2 points measured before are in .*sw\.jsonl, .*sw-rec\.jsonl\n(.|\n)*LMB_ERR_INTERRUPTED/);
  const lines = readFileSync(join(dir, 'sw.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { stopped?: string; completed: number; failed: number });
  assert.deepEqual(lines.map((l) => [l.completed, l.failed, l.stopped]), [[3, 0, undefined], [1, 0, 'the run stopped after 2 of 3 requests: the run was aborted']]);
  // Point 2's two streams sent r0 and r1 together: whichever came second was held open, and cut short.
  const recs = recordsOf('sw-rec.jsonl');
  assert.deepEqual(recs.map((r) => r.request_id), ['p1-r0', 'p1-r1', 'p1-r2', 'p2-r0', 'p2-r1']);
  assert.deepEqual(recs.map((r) => r.error_kind ?? 'ok').sort(), ['aborted', 'ok', 'ok', 'ok', 'ok']);
  assert.equal(recs.slice(0, 3).every((r) => r.error_kind === null), true);
});
