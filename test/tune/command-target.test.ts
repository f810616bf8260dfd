import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
