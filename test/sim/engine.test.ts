import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KvCache, newSimRequest, simulate } from '../../src/sim/index.js';
import { BenchmarkResult, RequestRecord } from '../../src/domain/index.js';
import { catalog, fixed, run } from './helpers.js';

test('prefix cache: shared full blocks hit, the last partial block never does, freed blocks are LRU-evicted', () => {
  const kv = new KvCache(10, 16, true);
  const a = newSimRequest(0, 40, 1, 7, 32); // 2 shared blocks + 8 own tokens
  assert.equal(kv.admit(a, 40, (hit) => 40 - hit), 0);
  kv.commit(a, 40);
  assert.equal(kv.usedBlocks, 3);
  const b = newSimRequest(1, 40, 1, 7, 32);
  assert.equal(kv.admit(b, 40, (hit) => 40 - hit), 32, 'both prefix blocks hit');
  assert.equal(kv.usedBlocks, 4, 'hits share blocks; one new block');
  const c = newSimRequest(2, 32, 1, 7, 32);
  assert.equal(kv.admit(c, 32, (hit) => 32 - hit), 16, 'at most num_tokens − 1 tokens are reused');
  kv.free(a);
  kv.free(b);
  kv.free(c);
  assert.equal(kv.usedBlocks, 0);
  // Fill the pool with strangers: the cached prefix blocks get evicted, oldest first.
  const big = newSimRequest(3, 160, 1, null, 0);
  assert.equal(kv.admit(big, 160, (hit) => 160 - hit), 0);
  kv.free(big);
  const d = newSimRequest(4, 40, 1, 7, 32);
  assert.equal(kv.admit(d, 40, (hit) => 40 - hit), 0, 'evicted');
  const full = new KvCache(2, 16, false);
  const e = newSimRequest(5, 48, 1, null, 0);
  assert.equal(full.admit(e, 48, (hit) => 48 - hit), -1, 'does not fit');
  assert.equal(full.usedBlocks, 0);
});

test('simulate is deterministic per seed, differs across seeds, and emits schema-valid output', () => {
  const w = { ...fixed(200, 50, { kind: 'poisson', rate_rps: 20 }, 80), input_len: { dist: 'uniform' as const, min: 50, max: 400 } };
  const a = run('H100-SXM', 1, 'llama-3.1-8b', {}, w, 3);
  const b = run('H100-SXM', 1, 'llama-3.1-8b', {}, w, 3);
  const c = run('H100-SXM', 1, 'llama-3.1-8b', {}, w, 4);
  assert.deepEqual(a.result, b.result);
  assert.notEqual(a.result.mean_ttft_ms, c.result.mean_ttft_ms);
  BenchmarkResult.parse(a.result);
  for (const r of a.records) RequestRecord.parse(r);
  assert.equal(a.records[0]?.token_source, 'sim');
  assert.equal(a.records[0]?.chunk_times_s.length, 50);
  assert.equal(a.result.completed, 80);
  assert.equal(a.result.lmb.source, 'sim');
  assert.ok((a.result.lmb.startup_time_s ?? 0) > 10);
});

test('requests longer than max_model_len fail with HTTP 400 records; the rest complete', () => {
  const w = { ...fixed(100, 100, { kind: 'closed', concurrency: 4 }, 40), input_len: { dist: 'uniform' as const, min: 100, max: 3000 } };
  const out = run('H100-SXM', 1, 'llama-3.1-8b', { max_model_len: 2048 }, w);
  const rejected = out.records.filter((r) => r.http_status === 400);
  assert.ok(rejected.length > 0 && rejected.length < 40);
  for (const r of rejected) assert.ok(r.prompt_tokens + 100 > 2048 && r.error_kind === 'http_status');
  assert.equal(out.result.failed, rejected.length);
  assert.equal(out.result.lmb.rejected, rejected.length);
});

test('a failed start returns the failure, not a result', () => {
  const out = simulate({ config: { tensor_parallel_size: 4 }, hardware: { gpu: 'H100-SXM', count: 2 }, model: 'llama-3.1-8b', workload: fixed(10, 10, { kind: 'burst' }, 2), seed: 0, catalog });
  assert.ok(!out.ok);
  assert.equal(out.failure.rule, 'C1');
});

test('DP replicas share the load through the balancer and scale throughput', () => {
  const w = fixed(256, 128, { kind: 'burst' }, 400);
  const one = run('H100-SXM', 1, 'llama-3.1-8b', { max_num_seqs: 64 }, w).result.output_throughput;
  const two = run('H100-SXM', 2, 'llama-3.1-8b', { max_num_seqs: 64, data_parallel_size: 2 }, w).result.output_throughput;
  assert.ok(two > 1.7 * one, `${two} vs ${one}`);
});
