import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));
const harness = fileURLToPath(new URL('../../scripts/example-harness.mjs', import.meta.url));
const workload = fileURLToPath(new URL('../../data/workloads/chat.yaml', import.meta.url));

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(what: string, ok: () => boolean, limitMs: number): Promise<void> {
  const end = Date.now() + limitMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a harness left running by a tune killed with kill -9 is stopped when the study resumes, before its trial runs again', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-orphans-'));
  const marker = join(dir, 'first-harness.pid');
  // The first run of the trial hangs (and says who it is); the rerun measures with the example harness.
  const script = join(dir, 'harness.mjs');
  writeFileSync(
    script,
    [
      "import { existsSync, writeFileSync } from 'node:fs';",
      "import { spawnSync } from 'node:child_process';",
      'const marker = process.env.LMB_TEST_MARKER;',
      'if (!existsSync(marker)) { writeFileSync(marker, String(process.pid)); setTimeout(() => {}, 110_000); }',
      `else process.exit(spawnSync(process.execPath, [${JSON.stringify(harness)}], { stdio: 'inherit', env: process.env }).status ?? 1);`,
    ].join('\n'),
  );
  const argv = [bin, 'tune', '--study', 'orphans', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--budget-trials', '1', '--target', 'command', '--command', `${process.execPath} ${script}`, '--db', join(dir, 'db.sqlite'), '--no-report', '--json'];
  const env = { ...process.env, LMB_TEST_MARKER: marker };
  let first = 0;
  t.after(() => {
    if (first > 0 && alive(first)) process.kill(first, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const tune = spawn(process.execPath, argv, { env, stdio: 'ignore' });
  await until('the first harness', () => existsSync(marker) && readFileSync(marker, 'utf8') !== '', 60_000);
  first = Number(readFileSync(marker, 'utf8'));
  await until('its pid file', () => existsSync(join(dir, 'servers', 'command-slot-0.pid')), 10_000);
  tune.kill('SIGKILL');
  await new Promise((r) => tune.once('exit', r));
  assert.ok(alive(first), 'kill -9 of tune leaves its harness running');

  const resumed = spawnSync(process.execPath, argv, { env, encoding: 'utf8', timeout: 90_000 });
  assert.equal(resumed.status, 0, resumed.stderr);
  await until('the left-over harness to be gone', () => !alive(first), 10_000);
  // The interrupted trial is kept as a stale failure (no budget spent) and its configuration measured again.
  const out = JSON.parse(resumed.stdout) as { trials: { state: string }[] };
  assert.deepEqual(out.trials.map((tr) => tr.state), ['failed', 'complete']);
});
