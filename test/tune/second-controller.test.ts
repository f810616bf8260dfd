import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/store/sqlite-store.js';
import { countsAgainstBudget } from '../../src/tune/loop.js';

const bin = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));
const harness = fileURLToPath(new URL('../../scripts/example-harness.mjs', import.meta.url));
const workload = fileURLToPath(new URL('../../data/workloads/chat.yaml', import.meta.url));

function trialStates(db: string): string[] {
  if (!existsSync(db)) return [];
  let store;
  try {
    store = openStore(db, { readonly: true });
  } catch {
    return [];
  }
  try {
    const study = store.findStudy('twice');
    return study === null ? [] : store.listTrials(study.id).map((t) => t.state);
  } finally {
    store.close();
  }
}

test('the same study started again while another process runs it is refused, and that process\'s trial is left alone; once it is gone, the study resumes', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-twice-'));
  const pids = join(dir, 'pids');
  const release = join(dir, 'release');
  // A harness that runs until the test lets it: each run notes its pid (to be stopped at the end), waits
  // for the release file, then measures. A fixed wait (3 s) was a race on a loaded machine: the first
  // trial finished and the next one started before the second controller had been refused.
  const slow = join(dir, 'slow.mjs');
  writeFileSync(
    slow,
    [
      "import { appendFileSync, existsSync } from 'node:fs';",
      "import { spawnSync } from 'node:child_process';",
      `appendFileSync(${JSON.stringify(pids)}, process.pid + '\\n');`,
      `while (!existsSync(${JSON.stringify(release)})) await new Promise((r) => setTimeout(r, 50));`,
      `const r = spawnSync(process.execPath, [${JSON.stringify(harness)}], { stdio: 'inherit', env: process.env });`,
      'process.exit(r.status ?? 1);',
    ].join('\n'),
  );
  t.after(() => {
    for (const pid of existsSync(pids) ? readFileSync(pids, 'utf8').split('\n').filter((l) => l !== '') : []) {
      try {
        process.kill(-Number(pid), 'SIGKILL');
      } catch {
        // ended already
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const db = join(dir, 'db.sqlite');
  const args = [bin, 'tune', '--study', 'twice', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--budget-trials', '2', '--target', 'command', '--command', `${process.execPath} ${slow}`, '--sampler', 'random', '--seed', '3', '--no-report', '--db', db];
  const first = spawn(process.execPath, args, { stdio: 'ignore' });
  t.after(() => first.kill('SIGKILL'));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !trialStates(db).includes('running')) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(trialStates(db), ['running']);

  const second = spawnSync(process.execPath, [...args, '--json'], { encoding: 'utf8', timeout: 60_000 });
  assert.notEqual(second.status, 0, JSON.stringify([second.status, second.signal, second.stdout.slice(0, 500)]));
  // With --json the error is the document on stdout.
  const err = (JSON.parse(second.stdout) as { error: { code: string; message: string } }).error;
  assert.equal(err.code, 'LMB_ERR_STUDY_BUSY');
  assert.match(err.message, new RegExp(`^study "twice" is being run by process ${first.pid ?? -1} on this machine`));
  // The first process's trial was not taken for a crash's orphan (failed as stale and queued again).
  assert.deepEqual(trialStates(db), ['running']);

  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  writeFileSync(release, '');
  const resumed = spawnSync(process.execPath, [...args, '--json'], { encoding: 'utf8', timeout: 90_000 });
  assert.equal(resumed.status, 0, resumed.stderr);
  const store = openStore(db, { readonly: true });
  try {
    const trials = store.listTrials(store.getStudy('twice').id);
    assert.equal(trials.filter(countsAgainstBudget).length, 2);
    assert.equal(trials.filter((tr) => tr.state === 'complete').length, 2);
  } finally {
    store.close();
  }
  assert.ok(readdirSync(dir).includes('pids'));
});
