// lmb-test: timing
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runBenchmark } from '../../src/loadgen/index.js';
import { ACCURACY_TOKENS, useAccuracyStub } from '../fixtures/loadgen/accuracy-stub.js';

// The timing lane (scripts/run-tests.mjs): against a stub with known timings (first token 50 ms after
// the request, then one every 10 ms on an absolute schedule, N tokens), the client's figures must be
// within milliseconds of what the stub did. Upper bounds leave room for a 2-core machine loaded by other
// work (the overhead itself is measured in bench/loadgen-overhead.ts); the behaviour (counts, tokens,
// lower bounds, throughputs from the duration) is in accuracy.test.ts.
const N = ACCURACY_TOKENS;
const { stub: stubServer, workload, stubTruth } = useAccuracyStub();

test('TTFT, TPOT, ITL, E2EL and the duration are the stub\'s, within a few milliseconds', async () => {
  await stubTruth();
  const { result } = await runBenchmark({ endpoint: stubServer().url, seed: 3, workload: workload(4, 16), workers: 1, warmupRequests: 4 });
  const truth = await stubTruth();
  assert.equal(result.completed, 16);
  // What the client must get right is the server's own timing, checked against the stub's record.
  assert.ok(Math.abs(result.mean_ttft_ms - truth.mean_ttft_ms) < 15, `client ${result.mean_ttft_ms} vs stub ${truth.mean_ttft_ms}`);
  // Upper bounds follow what the stub actually did (it shares this machine, so a busy core delays its
  // writes too): the client must report the server's timing, plus at most a little of its own.
  const gapMs = Math.max(10, truth.mean_write_gap_ms);
  assert.ok(result.mean_tpot_ms < gapMs + 2, `mean TPOT ${result.mean_tpot_ms} (stub gap ${truth.mean_write_gap_ms})`);
  assert.ok(result.mean_itl_ms < gapMs + 2, `mean ITL ${result.mean_itl_ms} (stub gap ${truth.mean_write_gap_ms})`);
  const e2elServed = truth.mean_ttft_ms + (N - 1) * gapMs;
  assert.ok(result.mean_e2el_ms < e2elServed + 40, `mean E2EL ${result.mean_e2el_ms} (stub ${e2elServed})`);
  // 16 requests, 4 at a time: four waves of one E2EL each.
  const e2elTrue = 50 + (N - 1) * 10;
  assert.ok(result.duration < (4 * e2elTrue) / 1000 + 0.4, `duration ${result.duration}`);
  // Closed loop: a request is sent as soon as its slot frees, so client queueing stays near zero.
  assert.ok(result.lmb.mean_client_queue_ms < 10, `client queue ${result.lmb.mean_client_queue_ms}`);
});

test('two worker threads add no latency of their own', async () => {
  const { result } = await runBenchmark({ endpoint: stubServer().url, seed: 4, workload: workload(6, 12, 'completions', 8), workers: 2, scrapeMetrics: false });
  assert.ok(result.mean_ttft_ms < 90, `mean TTFT ${result.mean_ttft_ms}`);
});

test('a duration bounds the run: nothing new is sent after it', async () => {
  const { result } = await runBenchmark({ endpoint: stubServer().url, seed: 8, workload: workload(2, 1000, 'completions', 11), durationS: 0.3, scrapeMetrics: false });
  // Each request takes ~150 ms: two streams start two rounds within 0.3 s, and the last ones finish after it.
  assert.ok(result.completed >= 2 && result.completed <= 6, `completed ${result.completed}`);
  assert.equal(result.failed, 0);
});
