import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SteadyState, type RequestRecord } from '../../src/domain/index.js';
import { ksTwoSample, steadyState, warmupEndBin } from '../../src/metrics/steady-state.js';
import { createRng } from '../../src/util/rng.js';

function record(i: number, sendS: number, ttftS: number, itlS: number, tokens: number): RequestRecord {
  const chunks = Array.from({ length: tokens }, (_, k) => sendS + ttftS + k * itlS);
  return {
    request_id: `r${i}`, sched_time_s: sendS, enqueue_time_s: sendS, send_time_s: sendS, first_byte_time_s: sendS + ttftS,
    chunk_times_s: chunks, done_time_s: chunks[chunks.length - 1] as number, prompt_tokens: 100, prompt_tokens_client: 100,
    output_tokens: tokens, token_source: 'sim', cached_tokens: null, finish_reason: 'length', http_status: 200,
    error_kind: null, error: null, phase: 'measure', worker_id: 0, loop_lag_ms: null,
  };
}

/** Closed loop, C streams: each stream sends its next request when the last finishes. */
function closedLoop(c: number, n: number, itl: (t: number) => number, tokens = 20): RequestRecord[] {
  const rng = createRng(7);
  const out: RequestRecord[] = [];
  const free = new Array<number>(c).fill(0);
  for (let i = 0; i < n; i++) {
    const s = i % c;
    const send = free[s] as number;
    const r = record(i, send, 0.05, itl(send) * (0.95 + 0.1 * rng.next()), tokens); // ±5% jitter
    out.push(r);
    free[s] = r.chunk_times_s[tokens - 1] as number;
  }
  return out;
}

test('KS: identical samples give p = 1; shifted ones a small p', () => {
  const rng = createRng(1);
  const a = Array.from({ length: 200 }, () => rng.normal());
  const same = ksTwoSample(a, [...a]);
  assert.equal(same.statistic, 0);
  assert.equal(same.pValue, 1);
  const b = Array.from({ length: 200 }, () => rng.normal() + 1);
  const diff = ksTwoSample(a, b);
  assert.ok(diff.statistic > 0.3 && diff.pValue < 1e-6, JSON.stringify(diff));
  const c = Array.from({ length: 200 }, () => rng.normal());
  assert.ok(ksTwoSample(a, c).pValue > 0.01);
  // Known value: disjoint samples of 10 each, D = 1; p ≈ 1.1e-4 by the asymptotic formula.
  const dj = ksTwoSample([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
  assert.equal(dj.statistic, 1);
  assert.ok(dj.pValue < 1e-3);
});

test('the warm-up ends where the windowed variance of the rate decays', () => {
  const rate = [0, 2, 5, 9, 14, 18, ...new Array<number>(34).fill(20)].map((x, i) => x + (i % 2));
  const b = warmupEndBin(rate);
  assert.ok(b >= 4 && b <= 7, `bin ${b}`);
  assert.equal(warmupEndBin(new Array(40).fill(10)), 0);
});

test('a slow start is cut off and the drain starts at the last dispatch', () => {
  // Tokens take 30 ms at first (cold), 10 ms after t = 2 s.
  const recs = closedLoop(8, 400, (t) => (t < 2 ? 0.03 : 0.01));
  const ss = steadyState(recs);
  assert.ok(ss !== null);
  SteadyState.parse(ss);
  const lastSend = Math.max(...recs.map((r) => r.send_time_s));
  assert.equal(ss.end_s, lastSend);
  assert.ok(ss.start_s >= 1.8 && ss.start_s < 3.5, `start ${ss.start_s}`);
  // Steady: 8 streams of (50 + 19·10) ms requests of 20 tokens → 8·20/0.24 tok/s.
  const expected = (8 * 20) / 0.24;
  assert.ok(Math.abs(ss.output_throughput - expected) / expected < 0.05, `${ss.output_throughput} vs ${expected}`);
  assert.ok(Math.abs(ss.mean_ttft_ms - 50) < 1e-6);
  assert.ok(Math.abs(ss.mean_itl_ms - 10) < 0.2);
  assert.ok(ss.ks_p_value !== null && ss.ks_p_value > 0.05);
});

test('a window whose halves differ is flagged by the KS test', () => {
  // ITL keeps growing through the run: never stationary.
  const recs = closedLoop(8, 400, (t) => 0.01 + 0.004 * t);
  const ss = steadyState(recs);
  assert.ok(ss !== null && ss.ks_p_value !== null);
  assert.ok(ss.ks_p_value < 0.01);
  assert.match(ss.warning ?? '', /not be stationary/);
});

test('too few requests, or no dispatch after the first instant, gives no window', () => {
  assert.equal(steadyState(closedLoop(2, 4, () => 0.01)), null);
  const burst = Array.from({ length: 20 }, (_, i) => record(i, 0, 0.05, 0.01, 10));
  assert.equal(steadyState(burst), null);
});
