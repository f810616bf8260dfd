import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Arrival, BenchmarkResult } from '../../src/domain/index.js';
import { headroomRate, type Probe } from '../../src/plan/headroom.js';

// A replica as the simulator draws a large-batch server: a burst of 400 requests drains a batch that
// never fills (its throughput, 30 req/s, well under what the server keeps up with), the p99 ITL grows
// with the rate up to the 80 ms limit at 55 req/s, and a run too short for the batch to fill (fewer than
// 2,000 requests) shows the light batch's ITL whatever the rate.
const FILL_PROMPTS = 2000;

function result(itlMs: number, throughput: number): BenchmarkResult {
  return { completed: 100, failed: 0, request_throughput: throughput, p99_ttft_ms: 100, p99_itl_ms: itlMs, saturation: null } as unknown as BenchmarkResult;
}

const seen: number[] = [];
function replica(arrival: Arrival, prompts: number): Probe {
  if (arrival.kind === 'burst') return { result: result(230, 30), failure: null };
  if (arrival.kind !== 'poisson') throw new Error(`the test sends no ${arrival.kind} arrivals`);
  seen.push(prompts);
  const itl = prompts < FILL_PROMPTS ? 30 : 20 + (60 * arrival.rate_rps) / 55;
  return { result: result(itl, arrival.rate_rps), failure: null };
}

test('headroom by rate: the bracket rises past a burst that never filled the batch, and probes run long enough to fill it', () => {
  const h = headroomRate(replica, { itl_p99_ms: 80 }, FILL_PROMPTS);
  assert.ok(h.ok);
  // Before: the burst's 30 req/s was the bracket's top, so the headroom stopped below it (29.5), and an
  // H100 that serves 40 req/s alone was planned as two.
  assert.ok(h.value <= 55 && h.value >= 55 - 60 / 64, `headroom ${h.value}`);
  assert.ok(seen.slice(1).every((n) => n >= FILL_PROMPTS), `every probe above the light one has ${FILL_PROMPTS} requests or more: ${seen.join(', ')}`);
});

test('headroom by rate: a replica that keeps up at sixteen times its burst rate stops there', () => {
  const h = headroomRate((a) => ({ result: result(10, a.kind === 'poisson' ? a.rate_rps : 5), failure: null }), { itl_p99_ms: 80 });
  assert.ok(h.ok);
  assert.equal(h.value, 5 * 16);
});
