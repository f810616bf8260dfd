import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { BenchmarkResult, Workload } from '../../src/domain/index.js';
import { correctionFromStore, simRun } from '../../src/plan/run-plan.js';
import { openStore } from '../../src/store/index.js';
import { CHAT } from './chat-workload.js';

// The history's correction read from a real SQLite file: which stored runs count as measurements.

const catalog = defaultCatalog();
const chat: Workload = { ...CHAT, arrival: { kind: 'poisson', rate_rps: 4 }, num_prompts: 150 };

test('correctionFromStore: measured runs still correct the plan when a sim study stored more than fifty trials after them', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-plan-history-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'lm-bench.db'));
  t.after(() => store.close());
  const s = simRun(catalog)({ config: { tensor_parallel_size: 1 }, gpu: 'H100-SXM', gpus: 1, model: catalog.model('llama-3.1-8b'), workload: chat, seed: 1 }).result as BenchmarkResult;
  // Two runs of a real server that decodes 25% slower than the simulator (stored as load-runner runs)…
  for (const i of [1, 2]) {
    const slower: BenchmarkResult = { ...s, mean_tpot_ms: s.mean_tpot_ms * 1.25, lmb: { ...s.lmb, source: 'loadgen' } };
    store.storeRuns([{ result: slower, serverConfig: { tensor_parallel_size: 1 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: chat, sourceFormat: 'lm_bench', sourcePath: null, contentHash: `measured-${i}` }]);
  }
  // …then a 60-trial `tune --target sim`, whose trials the history keeps as runs of source "sim".
  for (let i = 0; i < 60; i++) {
    store.storeRuns([{ result: s, serverConfig: { tensor_parallel_size: 1 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: chat, sourceFormat: 'lm_bench', sourcePath: `study:sim#${i}`, contentHash: `sim-${i}` }]);
  }
  const c = correctionFromStore(store, catalog, 'llama-3.1-8b', 'H100-SXM');
  assert.ok(c !== null, 'the two measured runs make a correction');
  assert.equal(c.runs, 2);
  assert.ok(Math.abs(c.speedFactor - 0.8) < 1e-9, `speed ×${c.speedFactor}`);
});
