import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult } from '../../src/domain/index.js';
import { captureIo } from '../helpers/cli.js';
import { completionsStandIn, tokenStream } from '../helpers/completions-stand-in.js';

// Where `run` writes its files: exactly where it checked them before the load, and, when a sweep stops
// part-way (its server went away), the points it had measured are written before the error.

/** A loopback stand-in answering every request with `max_tokens` tokens; `onMeasured(n)` after each measured one. */
async function standIn(onMeasured: (n: number, server: Server) => void): Promise<{ server: Server; port: number }> {
  let measured = 0;
  return completionsStandIn((res, max, server) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(tokenStream(max, false));
    if (max > 1) onMeasured(++measured, server);
  });
}

const closeServer = (s: Server): Promise<void> => new Promise((r) => s.close(() => r()));

test('the files go where they were checked, though the process changes folder during the load', { timeout: 60_000 }, async (t) => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'lmb-run-paths-')));
  const home = process.cwd();
  t.after(() => {
    process.chdir(home);
    rmSync(root, { recursive: true, force: true });
  });
  mkdirSync(join(root, 'a'));
  mkdirSync(join(root, 'elsewhere', 'a'), { recursive: true });
  // The run's folder is given relative (a library caller's CliIo may), so it resolves against the
  // process's working folder, which the server's first answer moves.
  process.chdir(root);
  const { server, port } = await standIn((n) => {
    if (n === 1) process.chdir(join(root, 'elsewhere'));
  });
  t.after(() => closeServer(server));
  const io = captureIo('a', { LMB_LOOPBACK_ONLY: '1' });
  const code = await main(['run', '--endpoint', `http://127.0.0.1:${port}/v1/completions`, '--input-len', '8', '--output-len', '3', '--num-prompts', '2', '--concurrency', '1', '--output', 'out.json', '--records', 'rec.jsonl'], io);
  assert.equal(code, 0, io.err());
  assert.equal(BenchmarkResult.parse(JSON.parse(readFileSync(join(root, 'a', 'out.json'), 'utf8'))).completed, 2);
  assert.equal(readFileSync(join(root, 'a', 'rec.jsonl'), 'utf8').trim().split('\n').length, 2);
  assert.ok(!existsSync(join(root, 'elsewhere', 'a', 'out.json')), 'nothing written where the check never looked');
  assert.ok(!existsSync(join(root, 'elsewhere', 'a', 'rec.jsonl')));
});

test('a sweep whose server goes away keeps the points it measured, and says so before the error', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-run-sweep-stop-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // The first point's 3 requests answered, then the server stops listening: the second point's probe is refused.
  const { server, port } = await standIn((n, s) => {
    if (n === 3) {
      s.close();
      s.closeIdleConnections();
    }
  });
  t.after(() => (server.listening ? closeServer(server) : undefined));
  writeFileSync(join(dir, 'sweep.yaml'), [
    `endpoint: http://127.0.0.1:${port}/v1/completions`,
    'model: stand-in',
    'dataset: {kind: synthetic, input_len: 8, output_len: 3}',
    'traffic: {concurrency: 1}',
    'num_prompts: 3',
    'scrape_metrics: false',
    'sweep:',
    '  traffic.concurrency: [1, 2, 3]',
    '',
  ].join('\n'));
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const code = await main(['run', '--config', 'sweep.yaml', '--output', 'out.jsonl', '--records', 'rec.jsonl', '--requests-out', 'lat.jsonl', '--html', 'out.html'], io);
  assert.equal(code, 1, io.err());
  assert.match(io.err(), /LMB_ERR_ENDPOINT_UNREACHABLE/);
  assert.match(io.err(), /the sweep stopped at point 2 of 3; the 1 point measured before is in .*out\.jsonl/);
  // The sweep's format (one JSON object per line) though one point is in.
  const lines = readFileSync(join(dir, 'out.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 1);
  assert.equal(BenchmarkResult.parse(JSON.parse(lines[0] ?? '')).completed, 3);
  assert.deepEqual(readFileSync(join(dir, 'rec.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { request_id: string }).request_id), ['p1-r0', 'p1-r1', 'p1-r2']);
  assert.equal(readFileSync(join(dir, 'lat.jsonl'), 'utf8').trim().split('\n').length, 3);
  assert.match(readFileSync(join(dir, 'out.html'), 'utf8'), /<html/i);
});
