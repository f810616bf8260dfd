import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Arrival, BenchmarkResult, Saturation } from '../../src/domain/index.js';
import { headroomRate, missed, type Probe } from '../../src/plan/headroom.js';

// A replica whose latencies never show its limit: TTFT stays at 100 ms whatever it is offered, but past
// 8 req/s its simulated queue grows without bound (what a short simulated run of a decode-bound server
// near its batch limit looks like). Only the saturation verdict says it cannot take more.
const SUSTAINED_RPS = 8;

function saturation(offered: number): Saturation {
  const saturated = offered > SUSTAINED_RPS;
  return { saturated, offered_rps: offered, sustained_rps: Math.min(offered, SUSTAINED_RPS), backlog_growth_rps: Math.max(0, offered - SUSTAINED_RPS), window_start_s: 10, window_end_s: 20 };
}

function result(ttftMs: number, throughput: number, sat: Saturation | null): BenchmarkResult {
  return { completed: 100, failed: 0, request_throughput: throughput, p99_ttft_ms: ttftMs, p99_itl_ms: 20, saturation: sat } as unknown as BenchmarkResult;
}

function replica(arrival: Arrival): Probe {
  switch (arrival.kind) {
    case 'burst':
      return { result: result(5000, 10, null), failure: null };
    case 'poisson':
      return { result: result(100, Math.min(arrival.rate_rps, SUSTAINED_RPS), saturation(arrival.rate_rps)), failure: null };
    case 'closed':
    case 'gamma':
    case 'constant':
      throw new Error(`the test sends no ${arrival.kind} arrivals`);
  }
}

test('a saturated run misses the SLOs whatever its percentiles, and says what it sustains', () => {
  const m = missed({ ttft_p99_ms: 300 }, result(100, 8, saturation(12)));
  assert.equal(m.length, 1);
  assert.match(m[0] ?? '', /^cannot sustain this load: sustains 8\.00 req\/s of 12\.0 offered, its queue growing by 4\.00 req\/s$/);
  assert.deepEqual(missed({ ttft_p99_ms: 300 }, result(100, 6, saturation(6))), []);
  // A result from before the field (or a closed loop's null) is judged by its percentiles alone.
  assert.deepEqual(missed({ ttft_p99_ms: 300 }, result(100, 6, null)), []);
});

test('the headroom stops where the simulated queue starts to grow, not where the latency does', () => {
  const h = headroomRate(replica, { ttft_p99_ms: 300 });
  assert.ok(h.ok);
  // Without the verdict every rate up to the burst's 10 req/s would pass on TTFT alone.
  assert.ok(h.value <= SUSTAINED_RPS && h.value >= SUSTAINED_RPS - 10 / 64, `headroom ${h.value}`);
});
