import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KvCache, newSimRequest } from '../../src/sim/index.js';
import { fixed, run } from './helpers.js';

test('a preempted request re-finding its own blocks is not a prefix-cache hit (vLLM counts it apart)', () => {
  const kv = new KvCache(10, 16, true);
  const a = newSimRequest(0, 64, 8, null, 0);
  assert.equal(kv.admit(a, 64, (hit) => 64 - hit), 0);
  kv.commit(a, 64);
  kv.free(a); // preempted: its 4 full blocks stay cached
  assert.equal(kv.admit(a, 64, (hit) => 64 - hit, true), 48, 'the victim reuses its own blocks');
  assert.equal(kv.queriedTokens, 64, 'only the first lookup is queried');
  assert.equal(kv.hitTokens, 0);
});

test('random prompts under preemption: the hit rate stays 0, as vllm:prefix_cache_hits reports it', () => {
  // A small KV pool (32k tokens) and 2k + 2k-token requests: many preemptions by recompute.
  const w = fixed(2000, 2000, { kind: 'burst' }, 60);
  const out = run('H100-SXM', 1, 'llama-3.1-8b', { gpu_memory_utilization: 0.3, max_model_len: 8192 }, w);
  const sm = out.result.server_metrics;
  assert.ok((sm?.num_preemptions ?? 0) > 10, `preemptions ${String(sm?.num_preemptions)}`);
  assert.equal(sm?.prefix_cache_hit_rate, 0);
  for (const r of out.records) assert.equal(r.cached_tokens, 0, 'no request found another prompt’s blocks');
});

test('blocks are cached when scheduled, as vLLM does: requests admitted in the same step hit the prompt an earlier one computes', () => {
  // 4 prompts re-sent 16 times each, all at once: the first step runs request 0 alone (it reaches an idle
  // engine first); the next admits the waiting ones together, and 5–7 re-send prompts 1–3 that this step computes.
  const w = { ...fixed(1000, 50, { kind: 'burst' }, 64), prompt_pool: { size: 4 } };
  const out = run('H100-SXM', 1, 'llama-3.1-8b', {}, w);
  const cached = out.records.map((r) => r.cached_tokens);
  assert.deepEqual(cached.slice(0, 4), [0, 0, 0, 0]);
  for (let i = 4; i < 64; i++) assert.equal(cached[i], 992, `request ${i}: 62 of its 62 full blocks hit`);
  assert.equal(out.result.server_metrics?.prefix_cache_hit_rate, (60 * 992) / 64_000);
});
