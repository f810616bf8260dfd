import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Arrival, BenchmarkResult } from '../../src/domain/index.js';
import { headroomRate, headroomUsers, missed, type Probe } from '../../src/plan/headroom.js';

// A replica with a known capacity: latency grows as the offered load nears it (an M/M/1-like curve),
// so the headroom under a TTFT limit is known in closed form and the bisection can be checked against it.
const CAPACITY_RPS = 10;
const BASE_TTFT_MS = 100;

function result(ttftMs: number, throughput: number, failed = 0): BenchmarkResult {
  return { completed: 100, failed, request_throughput: throughput, p99_ttft_ms: ttftMs, p99_itl_ms: 20 } as unknown as BenchmarkResult;
}

function replica(arrival: Arrival): Probe {
  switch (arrival.kind) {
    case 'burst':
      return { result: result(5000, CAPACITY_RPS), failure: null };
    case 'poisson': {
      const rho = arrival.rate_rps / CAPACITY_RPS;
      return { result: result(rho >= 1 ? Infinity : BASE_TTFT_MS / (1 - rho), Math.min(arrival.rate_rps, CAPACITY_RPS)), failure: null };
    }
    case 'closed':
      // Each user adds 20 ms of TTFT.
      return { result: result(BASE_TTFT_MS + 20 * arrival.concurrency, arrival.concurrency), failure: null };
    case 'gamma':
    case 'constant':
      throw new Error(`the planner never sends ${arrival.kind} arrivals`);
  }
}

test('headroom by rate: the bisection lands within 1/64 of the saturated rate below the exact limit', () => {
  // TTFT ≤ 400 ms ⇔ 100 / (1 − ρ) ≤ 400 ⇔ ρ ≤ 0.75: 7.5 req/s.
  const h = headroomRate(replica, { ttft_p99_ms: 400 });
  assert.ok(h.ok);
  assert.ok(h.value <= 7.5 && h.value >= 7.5 - CAPACITY_RPS / 64, `headroom ${h.value}`);
  assert.ok(h.probes <= 9, "a burst, a light probe, the bracket's top and six bisection steps at most");
});

test('headroom by rate: a limit no load meets is infeasible with the reason; a configuration that does not start says why', () => {
  const h = headroomRate(replica, { ttft_p99_ms: 50 });
  assert.ok(!h.ok);
  assert.match(h.reason, /misses the SLOs even at 0\.63 req\/s.*ttft_p99 107 ms > 50 ms/);
  const dead = headroomRate(() => ({ result: null, failure: 'C4: model weights do not fit' }), { ttft_p99_ms: 500 });
  assert.deepEqual(dead.ok ? null : dead.reason, 'C4: model weights do not fit');
});

test('headroom by users: doubling then bisection finds the most users within the limit', () => {
  // 100 + 20·u ≤ 1000 ⇔ u ≤ 45.
  const h = headroomUsers(replica, { ttft_p99_ms: 1000 }, 2048);
  assert.deepEqual(h.ok ? h.value : null, 45);
  assert.equal(h.ok && h.atCap, false, 'a limit was found');
  assert.equal(headroomUsers(replica, { ttft_p99_ms: 100 }, 2048).ok, false);
});

test('headroom: a search that passes every probe up to its cap says its value is a lower bound', () => {
  // 100 + 20·u ≤ 10^6 holds far past 2,048 users; no rate saturates a replica that always keeps up.
  const users = headroomUsers(replica, { ttft_p99_ms: 1e6 }, 2048);
  assert.deepEqual(users.ok ? [users.value, users.atCap] : null, [2048, true]);
  const fast = (a: Arrival): Probe => ({ result: result(10, a.kind === 'poisson' ? a.rate_rps : CAPACITY_RPS), failure: null });
  const rate = headroomRate(fast, { ttft_p99_ms: 100 });
  assert.ok(rate.ok && rate.atCap, 'every doubling passed');
  const bisected = headroomRate(replica, { ttft_p99_ms: 400 });
  assert.equal(bisected.ok && bisected.atCap, false);
});

test('missed names each SLO missed and failed requests', () => {
  assert.deepEqual(missed({ ttft_p99_ms: 300, itl_p99_ms: 50 }, result(350, 1, 2)), ['2 of 102 requests failed', 'ttft_p99 350 ms > 300 ms']);
});
