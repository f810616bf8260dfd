import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Workload } from '../../src/domain/index.js';
import { runBenchmark } from '../../src/loadgen/index.js';
import { parsePrometheus, summarizeScrapes } from '../../src/loadgen/scrape.js';
import { detectEngine } from '../../src/diagnose/engines.js';
import { serverEvidenceFromScrapes } from '../../src/diagnose/evidence.js';
import { startStubServer } from '../fixtures/loadgen/stub-server.js';

const text = (kvName: string, kv: number[], running: number[], [preempt, hits, queries]: [number, number, number]): string =>
  [
    '# HELP vllm:num_requests_running Number of requests in model execution batches.',
    '# TYPE vllm:num_requests_running gauge',
    ...running.map((r, e) => `vllm:num_requests_running{engine="${e}",model_name="m"} ${r}`),
    ...kv.map((k, e) => `${kvName}{engine="${e}",model_name="m"} ${k}`),
    `vllm:num_preemptions_total{engine="0",model_name="m"} ${preempt}`,
    `vllm:prefix_cache_hits_total{engine="0",model_name="m"} ${hits}`,
    `vllm:prefix_cache_queries_total{engine="0",model_name="m"} ${queries}`,
    'vllm:num_requests_waiting{engine="0",model_name="m"} 3.0',
    'vllm:e2e_request_latency_seconds_bucket{le="+Inf",model_name="m"} 12 1700000000000',
  ].join('\n');

test('Prometheus text: series summed across labels, comments skipped, timestamps tolerated', () => {
  const m = parsePrometheus(text('vllm:kv_cache_usage_perc', [0.5, 0.7], [4, 6], [2, 10, 40]));
  assert.deepEqual(m.get('vllm:num_requests_running'), [4, 6]);
  assert.deepEqual(m.get('vllm:e2e_request_latency_seconds_bucket'), [12]);
  assert.equal(m.has('#'), false);
});

test('old and new vLLM names reduce to the same server_metrics', () => {
  for (const name of ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc']) {
    const s = summarizeScrapes([
      parsePrometheus(text(name, [0.1, 0.2], [0, 0], [5, 100, 400])),
      parsePrometheus(text(name, [0.9, 0.4], [7, 9], [8, 160, 600])),
      parsePrometheus(text(name, [0.3, 0.3], [1, 1], [9, 200, 800])),
    ]);
    assert.deepEqual(s, {
      kv_cache_usage_peak: 0.9,
      kv_cache_peak_gib: null,
      kv_cache_capacity_tokens: null,
      gpu_memory_reserved_gib: null,
      num_preemptions: 4,
      num_requests_running_peak: 16,
      num_requests_waiting_peak: 3,
      prefix_cache_hit_rate: 0.25,
    });
  }
  assert.equal(summarizeScrapes([]), null);
});

const workload: Workload = {
  name: 'scrape', api: 'completions', input_len: { dist: 'fixed', value: 8 }, output_len: { dist: 'fixed', value: 30 },
  arrival: { kind: 'closed', concurrency: 4 }, num_prompts: 8, ignore_eos: true,
};

test('a run scrapes /metrics (old names too); a server without /metrics gives null', async () => {
  const old = await startStubServer({ ttftMs: 5, itlMs: 2, metrics: 'old' });
  try {
    const { result } = await runBenchmark({ endpoint: old.url, seed: 1, workload });
    const sm = result.server_metrics;
    assert.ok(sm !== null);
    assert.equal(sm.prefix_cache_hit_rate, 0.25);
    assert.ok(sm.kv_cache_usage_peak !== null);
  } finally {
    await old.close();
  }
  const none = await startStubServer({ ttftMs: 5, itlMs: 2, metrics: 'none' });
  try {
    const { result } = await runBenchmark({ endpoint: none.url, seed: 1, workload });
    assert.equal(result.server_metrics, null);
    assert.equal(result.completed, 8);
  } finally {
    await none.close();
  }
});

test('the engine is recognised by its names; a scrape of no known engine reduces to no block, never one of nulls', () => {
  const llama = parsePrometheus('llamacpp:requests_processing 4\nllamacpp:requests_deferred 7\nllamacpp:tokens_predicted_total 100\n');
  assert.equal(detectEngine(llama.keys()), 'llamacpp');
  const sm = summarizeScrapes([llama]);
  assert.equal(sm?.num_requests_running_peak, 4);
  assert.equal(sm?.num_requests_waiting_peak, 7);
  assert.equal(detectEngine(parsePrometheus('sglang:num_running_reqs 3\nsglang:num_queue_reqs 0\n').keys()), 'sglang');
  assert.equal(detectEngine(parsePrometheus('tgi_queue_size 2\ntgi_batch_current_size 8\n').keys()), 'tgi');
  const foreign = parsePrometheus('process_cpu_seconds_total 12\nhttp_requests_total 40\n');
  assert.equal(detectEngine(foreign.keys()), null);
  assert.equal(summarizeScrapes([foreign]), null);
  assert.equal(serverEvidenceFromScrapes([foreign], {}), null);
});
