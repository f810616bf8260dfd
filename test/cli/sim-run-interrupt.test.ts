import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { main } from '../../src/cli/main.js';
import { captureIo, LMB_BIN } from '../helpers/cli.js';

/**
 * A `sim run` stopped with Ctrl-C while it writes `--requests-out` (SIGINT to the real process, which
 * is busy in one synchronous simulation): the file it was writing beside the path (`PATH.<pid>.partial`)
 * is gone, and the path keeps what it held before.
 */

/** `check` true within `limitMs` (polled), else false. */
async function within(limitMs: number, check: () => boolean): Promise<boolean> {
  for (const end = Date.now() + limitMs; Date.now() < end; await sleep(50)) if (check()) return true;
  return check();
}

test('sim run interrupted by SIGINT while writing --requests-out: no partial file left, the destination untouched', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-sim-int-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'requests.jsonl');
  const before = '{"earlier":"run"}\n';
  writeFileSync(out, before);
  const args = ['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--input-len', '64', '--output-len', '16', '--num-prompts', '200000', '--requests-out', out];
  const child = spawn(process.execPath, [LMB_BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HF_HUB_OFFLINE: '1', LMB_DB: join(dir, 'none.db') } });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string | null>((done) => child.on('exit', (code, signal) => done(code ?? signal)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const partial = `${out}.${child.pid}.partial`;
  // Interrupted once it has started writing: its first megabyte of lines is out.
  assert.ok(await within(60_000, () => existsSync(partial) || child.exitCode !== null), `no ${partial} within 60 s`);
  assert.ok(existsSync(partial), `the run ended before writing its partial file: ${stderr}`);
  child.kill('SIGINT');
  const how = await Promise.race([exited, sleep(30_000).then(() => 'still running')]);
  assert.notEqual(how, 'still running', 'sim run did not stop within 30 s of SIGINT');
  assert.notEqual(how, 0, 'the run was interrupted, not finished');
  // Whoever removes it, it is gone within a few seconds of the exit, and nothing else was left beside the path.
  assert.ok(await within(10_000, () => !existsSync(partial)), `${partial} left behind`);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.partial')), []);
  assert.equal(readFileSync(out, 'utf8'), before);
});

test('sim run failing after it wrote --requests-out (every request refused): no partial file left, the destination untouched', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-sim-int-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'requests.jsonl');
  const before = '{"earlier":"run"}\n';
  writeFileSync(out, before);
  // 20,000 refused requests' lines are more than the megabyte written at a time: the partial file exists when the run fails.
  const io = captureIo(dir);
  const args = ['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--input-len', '1000', '--output-len', '16', '--max-model-len', '512', '--num-prompts', '20000', '--requests-out', out];
  assert.equal(await main(args, io), 2, io.err());
  assert.match(io.err(), /every request was refused/);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.partial')), []);
  assert.equal(readFileSync(out, 'utf8'), before);
});
