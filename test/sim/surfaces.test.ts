import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixed, run, workloadFile } from './helpers.js';

/** The response surfaces a realistic vLLM stand-in must show (docs/references/vllm-engine.md#response-surfaces). */

test('max_num_seqs ↑ raises throughput until the GPU saturates', () => {
  const w = fixed(256, 128, { kind: 'burst' }, 300);
  const thr = [8, 32, 128, 512].map((mns) => run('H100-SXM', 1, 'llama-3.1-8b', { max_num_seqs: mns }, w).result.output_throughput);
  for (let i = 1; i < thr.length; i++) assert.ok((thr[i] as number) > (thr[i - 1] as number), `${thr.join(' < ')}`);
  assert.ok((thr[3] as number) / (thr[2] as number) < (thr[1] as number) / (thr[0] as number), 'gains diminish');
});

test('preemption thrash: past KV capacity more seqs preempt and stop paying', () => {
  const w = fixed(1500, 1500, { kind: 'burst' }, 150);
  const at = (mns: number) => run('A100-40GB', 1, 'llama-3.1-8b', { max_num_seqs: mns, max_model_len: 8192 }, w).result;
  const fits = at(16);
  const over = at(128);
  const far = at(256);
  assert.equal(fits.server_metrics?.num_preemptions, 0);
  assert.ok((over.server_metrics?.num_preemptions ?? 0) > 10);
  assert.ok((far.server_metrics?.num_preemptions ?? 0) >= (over.server_metrics?.num_preemptions ?? 0));
  assert.ok(far.output_throughput <= over.output_throughput * 1.02, 'throughput plateaus once KV-bound');
});

test('enforce_eager slows single-stream decode 1.4–4.3× (K15)', () => {
  const w = fixed(128, 128, { kind: 'closed', concurrency: 1 }, 4);
  const graphs = run('H100-SXM', 1, 'llama-3.1-8b', {}, w).result.median_tpot_ms;
  const eager = run('H100-SXM', 1, 'llama-3.1-8b', { enforce_eager: true }, w).result.median_tpot_ms;
  assert.ok(eager / graphs > 1.4 && eager / graphs < 4.3, `eager ×${eager / graphs}`);
});

test('prefix caching pays on the code workload and costs ≤ 1% on chat', () => {
  const code = { ...workloadFile('code'), num_prompts: 200 };
  const on = run('H100-SXM', 1, 'llama-3.1-8b', {}, code).result;
  const off = run('H100-SXM', 1, 'llama-3.1-8b', { enable_prefix_caching: false }, code).result;
  assert.ok(on.mean_ttft_ms < off.mean_ttft_ms * 0.7, `TTFT ${on.mean_ttft_ms} vs ${off.mean_ttft_ms}`);
  assert.ok((on.server_metrics?.prefix_cache_hit_rate ?? 0) > 0.5);
  assert.equal(off.server_metrics?.prefix_cache_hit_rate, null);
  const chat = { ...workloadFile('chat'), num_prompts: 150 };
  const chatOn = run('H100-SXM', 1, 'llama-3.1-8b', {}, chat).result.output_throughput;
  const chatOff = run('H100-SXM', 1, 'llama-3.1-8b', { enable_prefix_caching: false }, chat).result.output_throughput;
  assert.ok(chatOn >= chatOff * 0.99);
});

test('chunked prefill off (budget ≥ max_model_len) worsens p99 ITL on summarize vs a 2k chunk budget', () => {
  const w = { ...workloadFile('summarize'), num_prompts: 100 };
  const on = run('H100-SXM', 1, 'llama-3.1-8b', { max_model_len: 8192, max_num_batched_tokens: 2048 }, w).result;
  const off = run('H100-SXM', 1, 'llama-3.1-8b', { max_model_len: 8192, enable_chunked_prefill: false }, w).result;
  assert.ok(off.p99_itl_ms > on.p99_itl_ms * 1.5, `p99 ITL off ${off.p99_itl_ms} vs on ${on.p99_itl_ms}`);
});

test('TP vs DP for a model that fits one GPU: TP2 lowers ITL, DP2 gives more throughput', () => {
  const lo = fixed(256, 128, { kind: 'closed', concurrency: 1 }, 4);
  const hi = fixed(256, 128, { kind: 'burst' }, 600);
  const tp = { tensor_parallel_size: 2 };
  const dp = { data_parallel_size: 2 };
  assert.ok(run('H100-SXM', 2, 'llama-3.1-8b', tp, lo).result.median_tpot_ms < run('H100-SXM', 2, 'llama-3.1-8b', dp, lo).result.median_tpot_ms);
  assert.ok(run('H100-SXM', 2, 'llama-3.1-8b', dp, hi).result.output_throughput > run('H100-SXM', 2, 'llama-3.1-8b', tp, hi).result.output_throughput);
});

test('fp8 KV doubles capacity and never hurts; gpu_memory_utilization ↑ grows KV monotonically', () => {
  const w = fixed(512, 256, { kind: 'burst' }, 200);
  const auto = run('H100-SXM', 1, 'llama-3.1-8b', {}, w);
  const fp8 = run('H100-SXM', 1, 'llama-3.1-8b', { kv_cache_dtype: 'fp8' }, w);
  assert.ok(fp8.memory.kvTokenCapacity > 1.9 * auto.memory.kvTokenCapacity);
  assert.ok(fp8.result.output_throughput >= auto.result.output_throughput * 0.99);
  const caps = [0.7, 0.8, 0.9, 0.95].map((u) => run('H100-SXM', 1, 'llama-3.1-8b', { gpu_memory_utilization: u }, fixed(16, 4, { kind: 'burst' }, 2)).memory.kvTokenCapacity);
  for (let i = 1; i < caps.length; i++) assert.ok((caps[i] as number) > (caps[i - 1] as number));
});
