// lmb-test: timing
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { captureIo } from '../helpers/cli.js';

// How soon an unreachable endpoint fails, in real time: a refusal at once, a silent host shortly after
// its 1 s time-out. What the run says and that it never gives up early is in remote.test.ts.
const dir = mkdtempSync(join(tmpdir(), 'lmb-remote-timing-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const env = { LMB_LOOPBACK_ONLY: '1' };
const load = ['--input-len', '16', '--output-len', '4', '--concurrency', '2', '--num-prompts', '4'];

test('a refused connection fails within seconds, a silent host within seconds of its time-out', async () => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const closedPort = (closed.address() as { port: number }).port;
  await new Promise<void>((r) => closed.close(() => r()));
  let t0 = performance.now();
  assert.equal(await main(['run', '--endpoint', `http://127.0.0.1:${closedPort}/v1/completions`, '--model', 'm', ...load], captureIo(dir, env)), 1);
  assert.ok(performance.now() - t0 < 5000, `refused after ${performance.now() - t0} ms`);

  const sockets: Socket[] = [];
  const silent = createServer((s) => sockets.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as { port: number }).port;
  try {
    t0 = performance.now();
    assert.equal(await main(['run', '--endpoint', `http://127.0.0.1:${port}/v1/completions`, '--model', 'm', '--timeout-s', '1', ...load], captureIo(dir, env)), 1);
    const tookMs = performance.now() - t0;
    assert.ok(tookMs < 6000, `${tookMs} ms`);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  }
});
