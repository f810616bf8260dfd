import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KvCache, newSimRequest, simulate } from '../../src/sim/index.js';
import { catalog, fixed, run, workloadFile } from './helpers.js';

test('sliding-window groups: a request holds its full-attention blocks plus at most a window of blocks per group', () => {
  const kv = new KvCache(1000, 16, false, { groups: 1, maxBlocks: 9 });
  const a = newSimRequest(0, 1000, 100, null, 0);
  assert.equal(kv.admit(a, 1000, (hit) => 1000 - hit), 0);
  assert.equal(kv.usedBlocks, 63 + 9, 'ceil(1000/16) full blocks + the 9-block window');
  assert.equal(kv.growthNeed(a, 1100), 69 - 63, 'growth needs full blocks only once the window is held');
  assert.ok(kv.grow(a, 1100));
  assert.equal(kv.usedBlocks, 69 + 9);
  // A short request holds as many window blocks as it has tokens for.
  const b = newSimRequest(1, 20, 1, null, 0);
  kv.admit(b, 20, (hit) => 20 - hit);
  assert.equal(kv.usedBlocks, 69 + 9 + 2 + 2);
  kv.free(a);
  kv.free(b);
  assert.equal(kv.usedBlocks, 0, 'every block back, window blocks included');
  // Admission counts the window: 63 + 9 blocks do not fit in 70.
  const tight = new KvCache(70, 16, false, { groups: 1, maxBlocks: 9 });
  assert.equal(tight.admit(newSimRequest(2, 1000, 1, null, 0), 1000, (hit) => 1000 - hit), -1);
});

test('gpt-oss-120b serves a chat workload on 8×H100 in every layout: TP 8, DP 2 × TP 4 with EP, DP 8 with EP', () => {
  const chat = { ...workloadFile('chat'), num_prompts: 200 };
  const tputs: Record<string, number> = {};
  for (const [name, config] of [
    ['tp8', { tensor_parallel_size: 8 }],
    ['dp2tp4ep', { tensor_parallel_size: 4, data_parallel_size: 2, enable_expert_parallel: true }],
    ['dp8ep', { data_parallel_size: 8, enable_expert_parallel: true }],
  ] as const) {
    const out = run('H100-SXM', 8, 'gpt-oss-120b', config, chat);
    assert.equal(out.result.completed, 200, name);
    assert.equal(out.result.failed, 0, name);
    tputs[name] = out.result.output_throughput;
  }
  // An MoE model with 5B active parameters outruns a dense 70B on the same GPUs.
  const dense = run('H100-SXM', 8, 'llama-3.1-70b', { tensor_parallel_size: 8 }, chat);
  assert.ok((tputs['tp8'] ?? 0) > 1.5 * dense.result.output_throughput, `${JSON.stringify(tputs)} vs 70B ${dense.result.output_throughput}`);
});

test('Qwen3-30B-A3B-FP8 at TP 4 fails to start without expert parallelism (C18) and starts with it', () => {
  const w = fixed(512, 64, { kind: 'closed', concurrency: 8 }, 16);
  const bad = simulate({ config: { tensor_parallel_size: 4 }, hardware: { gpu: 'H100-SXM', count: 4 }, model: 'qwen3-30b-a3b-fp8', workload: w, seed: 1, catalog });
  assert.ok(!bad.ok);
  assert.equal(bad.failure.rule, 'C18');
  const good = run('H100-SXM', 4, 'qwen3-30b-a3b-fp8', { tensor_parallel_size: 4, enable_expert_parallel: true }, w);
  assert.equal(good.result.completed, 16);
});

test('long contexts on gpt-oss: the sliding layers hold a window, so the KV cache fills half as fast as with full attention everywhere', () => {
  const w = fixed(16_000, 32, { kind: 'closed', concurrency: 32 }, 32);
  const config = { tensor_parallel_size: 2, max_model_len: 32768 };
  const real = run('H100-SXM', 2, 'gpt-oss-120b', config, w);
  const fullModel = { ...catalog.model('gpt-oss-120b'), id: 'gpt-oss-full-attention', sliding_window: null };
  const full = simulate({ config, hardware: { gpu: 'H100-SXM', count: 2 }, model: fullModel, workload: w, seed: 1, catalog });
  assert.ok(full.ok);
  assert.equal(real.result.completed, 32);
  const ratio = (real.result.server_metrics?.kv_cache_peak_gib ?? Number.NaN) / (full.result.server_metrics?.kv_cache_peak_gib ?? Number.NaN);
  assert.ok(ratio > 0.45 && ratio < 0.6, `peak KV ratio ${ratio}`);
});
