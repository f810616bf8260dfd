import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestRecord } from '../../src/domain/index.js';
import { computeMetrics, maxConcurrent } from '../../src/metrics/index.js';
import { percentileSorted, populationStd } from '../../src/metrics/stats.js';

function rec(i: number, send: number, chunks: number[], out: number, err: RequestRecord['error_kind'] = null): RequestRecord {
  return {
    request_id: String(i),
    sched_time_s: send,
    enqueue_time_s: send,
    send_time_s: send,
    first_byte_time_s: chunks[0] ?? null,
    chunk_times_s: chunks,
    done_time_s: chunks[chunks.length - 1] ?? send + 0.5,
    prompt_tokens: 100,
    prompt_tokens_client: 100,
    output_tokens: out,
    token_source: 'usage',
    cached_tokens: null,
    finish_reason: 'length',
    http_status: err === null ? 200 : 500,
    error_kind: err,
    error: err === null ? null : 'boom',
    phase: 'measure',
    worker_id: 0,
    loop_lag_ms: null,
  };
}

test('percentiles interpolate linearly and std is the population one (numpy defaults)', () => {
  assert.equal(percentileSorted([1, 2, 3, 4], 50), 2.5);
  assert.ok(Math.abs(percentileSorted([1, 2, 3, 4], 99) - 3.97) < 1e-12);
  assert.equal(percentileSorted([], 99), 0);
  assert.equal(populationStd([1, 3]), 1);
});

test('TTFT, TPOT, ITL, E2EL and throughputs follow vLLM definitions', () => {
  // Two requests: TTFT 50 ms, then 4 more chunks 10 ms apart (5 tokens).
  const a = rec(0, 0, [0.05, 0.06, 0.07, 0.08, 0.09], 5);
  const b = rec(1, 1, [1.05, 1.06, 1.07, 1.08, 1.09], 5);
  const failed = rec(2, 0.5, [], 0, 'http_status');
  const m = computeMetrics([a, b, failed], { goodput: { ttft_ms: 60 } });
  assert.equal(m.completed, 2);
  assert.equal(m.failed, 1);
  assert.ok(Math.abs(m.duration - 1.09) < 1e-9);
  assert.ok(Math.abs(m.mean_ttft_ms - 50) < 1e-9);
  assert.ok(Math.abs(m.mean_tpot_ms - 10) < 1e-9);
  assert.ok(Math.abs(m.median_itl_ms - 10) < 1e-9);
  assert.ok(Math.abs(m.p99_e2el_ms - 90) < 1e-9);
  assert.equal(m.total_output_tokens, 10);
  assert.equal(m.total_input_tokens, 200);
  assert.ok(Math.abs(m.output_throughput - 10 / 1.09) < 1e-9);
  assert.ok(Math.abs((m.request_goodput ?? 0) - 2 / 1.09) < 1e-9);
  assert.equal(computeMetrics([a]).request_goodput, null);
});

test('single-token requests are left out of TPOT but still good for goodput', () => {
  const one = rec(0, 0, [0.02], 1);
  const m = computeMetrics([one], { goodput: { ttft_ms: 30, tpot_ms: 1 } });
  assert.equal(m.mean_tpot_ms, 0);
  assert.ok((m.request_goodput ?? 0) > 0);
});

test('peak concurrency counts departures before arrivals at ties', () => {
  const a = rec(0, 0, [0.5, 1], 2);
  const b = rec(1, 1, [1.5, 2], 2);
  assert.equal(maxConcurrent([a, b]), 1);
  const c = rec(2, 0.5, [0.9, 1.2], 2);
  assert.equal(maxConcurrent([a, b, c]), 2);
});
