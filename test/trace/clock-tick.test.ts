import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTrace, traceWorkload } from '../../src/trace/index.js';
import { fitArrival } from '../../src/trace/fit.js';
import { clockTickMs } from '../../src/util/clock-tick.js';
import { createRng } from '../../src/util/rng.js';

/** Poisson arrivals at `rate` req/s (or gamma of `shape`), their times cut to whole seconds as BurstGPT writes them. */
function wholeSecondTimesMs(rate: number, n: number, seed: number, shape = 1): number[] {
  const rng = createRng(seed);
  const out: number[] = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    t += rng.gamma(shape) / shape / rate;
    out.push(Math.floor(t) * 1000);
  }
  return out.map((ms) => ms - (out[0] as number));
}

test('the clock tick a trace is written in: whole seconds, or finer than 10 ms', () => {
  assert.equal(clockTickMs([0, 1000, 1000, 7000]), 1000);
  assert.equal(clockTickMs([0, 100, 2300]), 100);
  assert.equal(clockTickMs([0, 1, 17, 4000]), null);
  assert.equal(clockTickMs([0, 0.1, 12.3456]), null);
});

test('arrivals cut to whole seconds (BurstGPT) fit the process they came from, not extreme bursts', () => {
  // Poisson at 2 req/s: two thirds of the gaps are 0 or whole seconds. Read as ms-exact times the
  // fit was shape 0.2 (CV 2.2), a far burstier load than the trace's.
  for (const rate of [0.5, 2, 5]) {
    const fit = fitArrival(wholeSecondTimesMs(rate, 20_000, 5), 1, true);
    assert.equal(fit.arrival.kind, 'gamma');
    if (fit.arrival.kind !== 'gamma') continue;
    assert.ok(Math.abs(fit.arrival.burstiness - 1) < 0.1, `${rate} req/s: burstiness ${fit.arrival.burstiness}`);
    assert.ok(fit.cv !== null && Math.abs(fit.cv - 1) < 0.1, `${rate} req/s: CV ${fit.cv}`);
  }
  // A bursty process stays bursty at a rate the seconds still resolve.
  const bursty = fitArrival(wholeSecondTimesMs(0.2, 20_000, 6, 0.3), 1, true).arrival;
  assert.ok(bursty.kind === 'gamma' && bursty.burstiness < 0.5, JSON.stringify(bursty));
  // The spread is seeded: the same trace fits the same every time; a clock is still a clock.
  assert.deepEqual(fitArrival(wholeSecondTimesMs(2, 500, 7), 1, true), fitArrival(wholeSecondTimesMs(2, 500, 7), 1, true));
  assert.deepEqual(fitArrival([0, 1000, 2000, 3000], 1, true).arrival, { kind: 'constant', rate_rps: 1 });
});

test('a BurstGPT file of Poisson arrivals derives a Poisson-like workload', () => {
  const times = wholeSecondTimesMs(2, 3000, 8);
  const rows = times.map((ms, i) => `${(ms / 1000).toFixed(1)},ChatGPT,${100 + (i % 900)},${20 + (i % 300)},${120 + (i % 900) + (i % 300)},Conversation log`);
  const csv = ['Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type', ...rows].join('\n');
  const t = parseTrace(new TextEncoder().encode(csv), 'burst.csv');
  const { workload } = traceWorkload(t, 'burst.csv', { name: 'burst', embed: false });
  assert.equal(workload.arrival.kind, 'gamma');
  if (workload.arrival.kind === 'gamma') assert.ok(Math.abs(workload.arrival.burstiness - 1) < 0.15, String(workload.arrival.burstiness));
});

test("lm-bench's own JSONL in whole seconds is taken as written: its times are not spread", () => {
  const times = wholeSecondTimesMs(2, 2000, 9);
  const lines = times.map((ms) => JSON.stringify({ timestamp_s: ms / 1000, input_tokens: 10, output_tokens: 5 }));
  const t = parseTrace(new TextEncoder().encode(lines.join('\n')), 'own.jsonl');
  const { workload } = traceWorkload(t, 'own.jsonl', { name: 'own', embed: false });
  assert.deepEqual(workload.arrival, fitArrival(times, 1).arrival);
  assert.notDeepEqual(workload.arrival, fitArrival(times, 1, true).arrival);
});
