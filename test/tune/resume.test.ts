import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/store/sqlite-store.js';
import { countsAgainstBudget } from '../../src/tune/loop.js';

const bin = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));

function workloadFile(dir: string): string {
  const file = join(dir, 'small.yaml');
  writeFileSync(
    file,
    [
      'name: small-chat',
      'api: completions',
      'input_len: { dist: lognormal, mean: 256, std: 128, min: 16, max: 1024 }',
      'output_len: { dist: lognormal, mean: 128, std: 64, min: 8, max: 512 }',
      'arrival: { kind: closed, concurrency: 32 }',
      'num_prompts: 400',
      'slo: { ttft_p99_ms: 2000, itl_p99_ms: 100 }',
    ].join('\n'),
  );
  return file;
}

function completed(db: string): { id: number; number: number; out: number }[] {
  if (!existsSync(db)) return [];
  let store;
  try {
    store = openStore(db, { readonly: true });
  } catch {
    return []; // created but not yet migrated by the child
  }
  try {
    const study = store.findStudy('kill-test');
    if (study === null) return [];
    return store.listTrials(study.id, { states: ['complete'] }).map((t) => ({ id: t.id, number: t.number, out: t.result?.output_throughput ?? -1 }));
  } finally {
    store.close();
  }
}

test('a study killed with SIGKILL mid-way resumes: nothing completed is lost and the budget is finished', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-kill-'));
  const db = join(dir, 'study.db');
  const args = [bin, 'tune', '--study', 'kill-test', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workloadFile(dir), '--budget-trials', '12', '--parallel', '2', '--seed', '4', '--sampler', 'random', '--no-report', '--db', db];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // Kill it once a few trials are in, while others are running.
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && (completed(db).length < 3 || !/trial \d+ started/.test(stderr.split('complete').at(-1) ?? ''))) {
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const before = completed(db);
  assert.ok(before.length >= 3 && before.length < 12, `killed mid-study with ${before.length} complete`);

  const resumed = spawnSync(process.execPath, [...args, '--json'], { encoding: 'utf8', timeout: 90_000 });
  assert.equal(resumed.status, 0, resumed.stderr);
  const out = JSON.parse(resumed.stdout) as { stop_reason: string; trials: { number: number; state: string }[] };
  assert.equal(out.stop_reason, 'budget');

  const after = completed(db);
  for (const t of before) {
    const same = after.find((a) => a.id === t.id);
    assert.ok(same !== undefined, `trial ${t.number} kept`);
    assert.equal(same.out, t.out, `trial ${t.number} unchanged`);
  }
  const store = openStore(db, { readonly: true });
  try {
    const study = store.getStudy('kill-test');
    const trials = store.listTrials(study.id);
    assert.equal(trials.filter(countsAgainstBudget).length, 12, 'the budget was finished');
    assert.equal(trials.filter((t) => t.state === 'running' || t.state === 'waiting').length, 0);
    // Every completed trial also joined the shared history as a run, exactly once.
    assert.equal(store.countRuns({ model: 'llama-3.1-8b' }), trials.filter((t) => t.state === 'complete').length);
  } finally {
    store.close();
  }
});
