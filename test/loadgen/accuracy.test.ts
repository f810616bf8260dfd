import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BenchmarkResult, RequestRecord, type Workload } from '../../src/domain/index.js';
import { runBenchmark } from '../../src/loadgen/index.js';
import { ACCURACY_TOKENS, useAccuracyStub } from '../fixtures/loadgen/accuracy-stub.js';

// Against a stub with known timings (first token 50 ms after the request, then one every 10 ms on an
// absolute schedule, N tokens): counts, tokens and throughputs (from the run's own duration) are exact,
// and no latency is below what the stub takes (it never sends early). How close to the stub's timing
// the client comes is real-time accuracy: accuracy.timing.test.ts, in the timing lane.
const N = ACCURACY_TOKENS;
const { stub: stubServer, workload, stubTruth } = useAccuracyStub();

test('counts, tokens and throughputs are exact, and no latency is under what the stub takes', async () => {
  await stubTruth();
  const { result, records: all } = await runBenchmark({ endpoint: stubServer().url, seed: 3, workload: workload(4, 16), workers: 1, warmupRequests: 4 });
  const truth = await stubTruth();
  const records = all.filter((r) => r.phase === 'measure');
  BenchmarkResult.parse(result);
  for (const r of records) RequestRecord.parse(r);
  assert.equal(result.completed, 16);
  assert.equal(result.failed, 0);
  assert.equal(result.total_output_tokens, 16 * N);
  assert.equal(result.total_input_tokens, 16 * 7); // the stub's usage.prompt_tokens
  assert.deepEqual(result.lmb.token_source_counts, { usage: 16 });
  for (const r of records) {
    assert.equal(r.chunk_times_s.length, N);
    // The stub never sends early: no request may show a TTFT under 50 ms or a decode under 19 × 10 ms.
    assert.ok((r.chunk_times_s[0] as number) - r.send_time_s >= 0.05, `${r.request_id} TTFT`);
    const decodeS = (r.chunk_times_s[N - 1] as number) - (r.chunk_times_s[0] as number);
    assert.ok(decodeS >= 0.19 - 0.01, `${r.request_id} decode ${decodeS}`);
  }

  // Lower bounds only: no clock makes the stub early. How close to the stub's own timing the client
  // comes is the timing lane's (accuracy.timing.test.ts).
  assert.ok(result.mean_ttft_ms >= 50, `mean TTFT ${result.mean_ttft_ms}`);
  // Request by request, the client's TTFT holds the stub's (body arrived → first write) inside it. A
  // comparison of means mixed the probe and the warm-up, whose times the stub also counts, and failed
  // by chance on a loaded machine.
  for (const r of records) {
    const stubMs = truth.ttft_ms_by_id[r.request_id];
    assert.ok(stubMs !== undefined, `the stub saw ${r.request_id}`);
    const clientMs = ((r.chunk_times_s[0] as number) - r.send_time_s) * 1000;
    assert.ok(clientMs >= stubMs - 0.01, `${r.request_id}: client ${clientMs} ms vs stub ${stubMs} ms`);
  }
  assert.ok(result.mean_tpot_ms >= 9.9, `mean TPOT ${result.mean_tpot_ms}`);
  assert.ok(result.mean_itl_ms >= 9.9, `mean ITL ${result.mean_itl_ms}`);
  const e2elTrue = 50 + (N - 1) * 10;
  assert.ok(result.mean_e2el_ms >= e2elTrue, `mean E2EL ${result.mean_e2el_ms}`);
  // 16 requests, 4 at a time: at least four waves of one E2EL each.
  assert.ok(result.duration >= (4 * e2elTrue) / 1000, `duration ${result.duration}`);
  assert.equal(result.request_throughput, 16 / result.duration);
  assert.equal(result.output_throughput, (16 * N) / result.duration);
  assert.equal(result.total_token_throughput, (16 * (N + 7)) / result.duration);
  assert.equal(result.max_concurrent_requests, 4);
  assert.equal(result.max_concurrency, 4);
  assert.equal(result.request_rate, 'inf');
  assert.ok(result.server_metrics !== null && result.server_metrics.num_requests_running_peak !== null);
});

test('streams spread over two worker threads merge into exactly one record per request', async () => {
  const { result, records } = await runBenchmark({ endpoint: stubServer().url, seed: 4, workload: workload(6, 12, 'completions', 8), workers: 2, scrapeMetrics: false });
  assert.equal(records.length, 12);
  assert.deepEqual(records.map((r) => r.request_id), Array.from({ length: 12 }, (_, i) => `r${i}`));
  assert.deepEqual([...new Set(records.map((r) => r.worker_id))].sort(), [0, 1]);
  assert.equal(result.completed, 12);
  assert.equal(result.total_output_tokens, 12 * 8);
  assert.ok(result.max_concurrent_requests <= 6);
  assert.ok(result.mean_ttft_ms >= 50, `mean TTFT ${result.mean_ttft_ms}`);
});

test('chat completions: content deltas are the token chunks', async () => {
  const { result } = await runBenchmark({ endpoint: `${stubServer().origin}/v1/chat/completions`, seed: 5, workload: workload(2, 4, 'chat', 5), scrapeMetrics: false });
  assert.equal(result.endpoint_type, 'openai-chat');
  assert.equal(result.completed, 4);
  assert.equal(result.total_output_tokens, 4 * 5);
  assert.ok(result.mean_ttft_ms >= 50);
  // api chat against the completions URL goes to the chat endpoint beside it.
  const beside = await runBenchmark({ endpoint: stubServer().url, seed: 5, workload: workload(1, 1, 'chat', 2), scrapeMetrics: false });
  assert.equal(beside.result.endpoint_type, 'openai-chat');
  assert.equal(beside.result.completed, 1);
});

test('warm-up requests are recorded but left out of the metrics', async () => {
  const { result, records } = await runBenchmark({ endpoint: stubServer().url, seed: 6, workload: workload(2, 4, 'completions', 3), warmupRequests: 3, scrapeMetrics: false });
  assert.equal(records.filter((r) => r.phase === 'warmup').length, 3);
  assert.equal(result.completed, 4);
  assert.equal(result.num_prompts, 4);
});

test('an open loop records its intended send times; a cap makes the queueing visible', async () => {
  const w: Workload = { ...workload(1, 5, 'completions', 8), arrival: { kind: 'constant', rate_rps: 200, max_concurrency: 1 } };
  const { result, records } = await runBenchmark({ endpoint: stubServer().url, seed: 7, workload: w, scrapeMetrics: false });
  assert.equal(result.completed, 5);
  const sched = records.map((r) => r.sched_time_s - (records[0] as RequestRecord).sched_time_s);
  sched.forEach((t, i) => assert.ok(Math.abs(t - i / 200) < 1e-9));
  // 200 req/s offered to one slot serving ~120 ms each: the client queue grows by ~115 ms a request.
  assert.ok(result.lmb.mean_client_queue_ms > 150, `client queue ${result.lmb.mean_client_queue_ms}`);
  assert.equal(result.request_rate, 200);
});
