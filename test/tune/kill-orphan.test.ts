import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCatalog } from '../../src/catalog/index.js';
import { configKey } from '../../src/optimize/sampler.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { countsAgainstBudget } from '../../src/tune/loop.js';

/**
 * `lm-bench tune` (the model-based sampler, the embedded simulator) killed with SIGKILL while vLLM's
 * defaults are being measured, then run again: the orphan is run again under a new number, and it is
 * the re-run that speaks for the defaults, not a "failure" a crash made up.
 */
const bin = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));

test('a study killed mid-trial resumes: the orphan is run again, nothing runs twice, and the crash counts as no failure of its configuration', { timeout: 240_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-orphan-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'study.db');
  const workload = join(dir, 'w.yaml');
  // Enough prompts that the defaults' trial is still running when the kill lands; SLOs every configuration meets.
  writeFileSync(
    workload,
    [
      'name: orphan-chat',
      'api: completions',
      'input_len: { dist: lognormal, mean: 256, std: 128, min: 16, max: 1024 }',
      'output_len: { dist: lognormal, mean: 128, std: 64, min: 8, max: 512 }',
      'arrival: { kind: closed, concurrency: 32 }',
      'num_prompts: 1500',
      'slo: { ttft_p99_ms: 60000, itl_p99_ms: 5000 }',
    ].join('\n'),
  );
  const args = [bin, 'tune', '--study', 'orphan', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--budget-trials', '3', '--seed', '7', '--no-report', '--db', db];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !/trial 0 started/.test(stderr)) await new Promise((r) => setTimeout(r, 20));
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  assert.match(stderr, /trial 0 started/);
  assert.doesNotMatch(stderr, /trial 0 complete/, 'killed while the defaults ran');

  const resumed = spawnSync(process.execPath, [...args, '--json'], { encoding: 'utf8', timeout: 180_000 });
  assert.equal(resumed.status, 0, resumed.stderr);
  const out = JSON.parse(resumed.stdout) as {
    stop_reason: string;
    counts: { complete: number; failed: number; orphaned: number };
    recommendation: { vs_default: { default_trial: number | null; default_meets_slo: boolean | null; throughput_gain_pct: number | null } } | null;
  };
  assert.equal(out.stop_reason, 'budget');

  const store = openStore(db, { readonly: true });
  t.after(() => store.close());
  const study = store.getStudy('orphan');
  const trials = store.listTrials(study.id);
  const orphan = trials.find((x) => x.number === 0);
  const retry = trials.find((x) => x.attrs['retry_of'] === orphan?.id);
  assert.ok(orphan !== undefined && orphan.state === 'failed' && retry !== undefined && retry.state === 'complete', JSON.stringify(trials.map((x) => [x.number, x.state, x.origin, x.attrs])));
  assert.deepEqual(retry.config, {});
  assert.equal(trials.filter(countsAgainstBudget).length, 3, 'the budget was spent, the orphan not counted in it');
  // Nothing measured twice but on purpose (a re-measurement of a tie).
  const deployment = { hardware: defaultCatalog().gpu('H100-SXM'), model: defaultCatalog().model('llama-3.1-8b') };
  const once = trials.filter((x) => x.state === 'complete' && x.origin !== 'remeasure').map((x) => configKey(x.config, deployment));
  assert.equal(new Set(once).size, once.length, 'no configuration ran twice');
  // The summary: the crash is no failure, and the re-run speaks for vLLM's defaults.
  assert.ok(out.recommendation !== null);
  assert.equal(out.recommendation.vs_default.default_trial, retry.number);
  assert.equal(out.recommendation.vs_default.default_meets_slo, true);
  assert.notEqual(out.recommendation.vs_default.throughput_gain_pct, null);
  assert.equal(out.counts.orphaned, 1);
  assert.equal(out.counts.failed, trials.filter((x) => x.state === 'failed').length - 1);
});
