import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCatalog } from '../../src/catalog/index.js';
import { classifyFailure } from '../../src/optimize/failure-classes.js';
import { learnRules, matchesRule } from '../../src/optimize/failure-rules.js';
import { resolveConfig } from '../../src/physics/index.js';

const bin = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));
const harness = fileURLToPath(new URL('../../scripts/example-harness.mjs', import.meta.url));
const workload = fileURLToPath(new URL('../../data/workloads/chat.yaml', import.meta.url));

test('tune drives the README example harness through the command-target protocol and writes its report', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-cmd-'));
  const res = spawnSync(
    process.execPath,
    [bin, 'tune', '--study', 'cmd', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--budget-trials', '2', '--target', 'command', '--command', `${process.execPath} ${harness}`, '--sampler', 'random', '--seed', '2', '--db', join(dir, 'db.sqlite'), '--report-dir', join(dir, 'report'), '--json'],
    { encoding: 'utf8', timeout: 55_000 },
  );
  assert.equal(res.status, 0, res.stderr);
  const out = JSON.parse(res.stdout) as { trials: { origin: string; state: string; metrics: { output_throughput: number } | null }[]; recommendation: unknown; report: string };
  // The study ends with its HTML report written where it was asked.
  assert.equal(out.report, join(dir, 'report', 'report.html'));
  assert.match(readFileSync(out.report, 'utf8'), /<html/i);
  assert.equal(out.trials.length, 2);
  assert.equal(out.trials[0]?.origin, 'default');
  for (const t of out.trials) {
    if (t.state === 'complete') assert.ok((t.metrics?.output_throughput ?? 0) > 100);
  }
  assert.ok(out.trials.some((t) => t.state === 'complete'));
});

test('a harness that fails like vLLM teaches the study a rule from its stderr, and no later trial falls under it', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-cmdfail-'));
  // A GPU shared with another process: below 0.86 of its memory vLLM finds no room for KV blocks.
  const failing = join(dir, 'harness.mjs');
  writeFileSync(
    failing,
    [
      "import { readFileSync } from 'node:fs';",
      "import { spawnSync } from 'node:child_process';",
      "const trial = JSON.parse(readFileSync(process.env.LMB_TRIAL_FILE, 'utf8'));",
      'const gmu = trial.config.gpu_memory_utilization ?? 0.9;',
      'if (gmu < 0.86) {',
      "  process.stderr.write('INFO 12-03 10:00:01 [gpu_worker.py:276] Available KV cache memory: -1.20 GiB\\n');",
      "  process.stderr.write('ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\\n');",
      '  process.exit(1);',
      '}',
      `const r = spawnSync(process.execPath, [${JSON.stringify(harness)}], { stdio: 'inherit', env: process.env });`,
      'process.exit(r.status ?? 1);',
    ].join('\n'),
  );
  const res = spawnSync(
    process.execPath,
    [bin, 'tune', '--study', 'cmdfail', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--budget-trials', '8', '--target', 'command', '--command', `${process.execPath} ${failing}`, '--enqueue', 'gpu_memory_utilization=0.8', '--seed', '4', '--db', join(dir, 'db.sqlite'), '--no-report', '--json'],
    { encoding: 'utf8', timeout: 110_000 },
  );
  assert.equal(res.status, 0, res.stderr);
  const out = JSON.parse(res.stdout) as {
    trials: { number: number; state: string; config: Record<string, unknown>; failure_reason: string | null; failure_class: string | null }[];
    failures: { by_class: Record<string, number[]>; rules: { class: string; text: string }[] };
  };
  const kv = out.failures.by_class['kv_cache_too_small'] ?? [];
  assert.ok(kv.length >= 1, JSON.stringify(out.failures));
  assert.ok(out.failures.rules.some((r) => r.class === 'kv_cache_too_small' && /gpu_memory_utilization <= 0\.8/.test(r.text)), JSON.stringify(out.failures.rules));
  // No trial was proposed inside a rule that earlier failures had already taught.
  const catalog = defaultCatalog();
  const hw = catalog.gpu('H100-SXM');
  const model = catalog.model('llama-3.1-8b');
  for (const t of out.trials) {
    const earlier = out.trials
      .filter((e) => e.number < t.number && e.state === 'failed' && e.failure_reason !== null)
      .map((e) => ({ study: 'cmdfail', number: e.number, config: resolveConfig(e.config, hw, model), failure: classifyFailure({ reason: e.failure_reason ?? '', started: false }) }));
    const rules = learnRules(earlier);
    assert.ok(!rules.some((r) => matchesRule(r, resolveConfig(t.config, hw, model))), `trial ${t.number} falls under a rule learned before it: ${JSON.stringify(t.config)}`);
  }
});

test('--command-timeout-s bounds each trial of a command target: a harness that outlives it is killed and its trial fails as timed out', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-cmdtimeout-'));
  const slow = join(dir, 'slow.mjs');
  writeFileSync(slow, 'setTimeout(() => process.exit(0), 30_000);\n');
  const res = spawnSync(
    process.execPath,
    [bin, 'tune', '--study', 'slow', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--budget-trials', '1', '--target', 'command', '--command', `${process.execPath} ${slow}`, '--command-timeout-s', '1', '--db', join(dir, 'db.sqlite'), '--no-report', '--json'],
    { encoding: 'utf8', timeout: 55_000 },
  );
  const out = JSON.parse(res.stdout) as { trials: { state: string; failure: { code?: string; reason?: string } | null }[] };
  assert.equal(out.trials.length, 1, res.stderr);
  assert.equal(out.trials[0]?.state, 'failed');
  assert.match(JSON.stringify(out.trials[0]), /outlived the 1000 ms trial timeout/);
  // Out of range: refused before a study exists.
  const bad = spawnSync(process.execPath, [bin, 'tune', '--study', 'slow2', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--budget-trials', '1', '--target', 'command', '--command', 'true', '--command-timeout-s', '0', '--db', join(dir, 'db.sqlite'), '--no-report'], { encoding: 'utf8', timeout: 30_000 });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--command-timeout-s/);
});
