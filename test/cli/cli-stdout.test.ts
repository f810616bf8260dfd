import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { LMB_BIN } from '../helpers/cli.js';

/** `lm-bench ARGS | (reader that has already gone)`: the child's stdout is closed before it writes a byte. */
function runWithClosedStdout(args: readonly string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LMB_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HF_HUB_OFFLINE: '1', LMB_DB: '/nonexistent/lmb-cli-stdout.db' } });
    // Closed at once: the child needs far longer than this to load before it writes.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    });
  });
}

test('a closed stdout (`lm-bench … | head -1`) ends the command quietly with 141, as SIGPIPE would, not with an EPIPE stack trace', async () => {
  for (const args of [['--help'], ['models', 'show', 'llama-3.1-8b', '--json']]) {
    const { status, stderr } = await runWithClosedStdout(args);
    assert.equal(stderr, '', args.join(' '));
    assert.equal(status, 141, args.join(' '));
  }
});
