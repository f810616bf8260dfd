import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controlStep, DEFAULT_CONTROLLER, initialState, type ControlState, type ControllerSettings } from '../../src/loadgen/rate-controller.js';

const cfg: ControllerSettings = { ...DEFAULT_CONTROLLER, limitMs: 400 };

/**
 * A server whose latency grows with load like a queue: M/M/1-like p95 = base / (1 − ρ), capacity
 * 40 req/s. The law must settle near the rate where p95 meets the aim (0.9 × limit), from far below
 * and far above, without oscillating.
 */
const capacity = 40;
const base = 80;
const p95At = (rate: number): number => (rate >= capacity ? 1e6 : base / (1 - rate / capacity));
// The rate at which p95 equals the aim: base / (1 − ρ) = 360 → ρ = 1 − 80/360.
const aimRate = capacity * (1 - base / (cfg.limitMs * (1 - cfg.margin)));

function runLaw(start: number, steps: number): ControlState[] {
  const out: ControlState[] = [];
  let s = initialState(start);
  for (let k = 0; k < steps; k++) {
    s = controlStep(s, { valueMs: p95At(s.rateRps), failed: 0 }, cfg);
    out.push(s);
  }
  return out;
}

test('from 1 req/s the law ramps, then settles within 5% of the rate that meets the aim', () => {
  const states = runLaw(1, 30);
  const first = states.findIndex((s) => s.phase === 'settled');
  assert.ok(first >= 0 && first < 20, `settled after ${first + 1} steps`);
  const settled = states[first] as ControlState;
  assert.ok(Math.abs(settled.rateRps / aimRate - 1) < 0.05, `${settled.rateRps.toFixed(2)} vs ${aimRate.toFixed(2)}`);
  // Once settled it stays settled (no oscillation on a noise-free server).
  assert.ok(states.slice(first).every((s) => s.phase === 'settled'));
  assert.ok(states.slice(first).every((s) => p95At(s.rateRps) <= cfg.limitMs));
});

test('from far past capacity the law backs off hard, then settles at the same rate', () => {
  const states = runLaw(200, 40);
  assert.ok((states[0] as ControlState).rateRps <= 100, 'halved at the first breach');
  assert.equal((states[0] as ControlState).phase, 'track');
  const last = states.at(-1) as ControlState;
  assert.equal(last.phase, 'settled');
  assert.ok(Math.abs(last.rateRps / aimRate - 1) < 0.05);
});

test('failed requests are a breach and unsettle; an empty window holds the rate; steps up stop at what the server admits', () => {
  const s: ControlState = { phase: 'settled', rateRps: 30, step: cfg.minStep, lastDir: 1, held: 5 };
  const failed = controlStep(s, { valueMs: 300, failed: 2 }, cfg);
  assert.equal(failed.phase, 'track');
  assert.ok(failed.rateRps < 30);
  assert.deepEqual(controlStep(s, { valueMs: null, failed: 0 }, cfg), s);
  assert.equal(controlStep(s, { valueMs: 450, failed: 0 }, cfg).phase, 'track');
  const walking: ControlState = { phase: 'track', rateRps: 30, step: 0.2, lastDir: 1, held: 0 };
  assert.ok(Math.abs(controlStep(walking, { valueMs: 100, failed: 0, admittedRps: 28 }, cfg).rateRps - 28 * 1.15) < 1e-9, 'no step up past 1.15 × admitted');
  // Admitting well under what it is offered, with latency still low: saturated, so the walk steps down.
  assert.ok(controlStep(walking, { valueMs: 100, failed: 0, admittedRps: 20 }, cfg).rateRps < 30);
});

test('a backlog growing past noise steps the walk down though latency and admissions look fine; once settled only the limit unsettles', () => {
  const walking: ControlState = { phase: 'track', rateRps: 30, step: 0.05, lastDir: 1, held: 2 };
  const calm = { valueMs: 100, failed: 0, admittedRps: 30 };
  // 300 sent over the stretch, 40 more in flight than at its start: more than 10% of 300 and 3√50.
  const growing = controlStep(walking, { ...calm, backlog: { grew: 40, sent: 300, meanInFlight: 50 } }, cfg);
  assert.ok(growing.rateRps < 30);
  assert.equal(growing.held, 0);
  // Growth within Poisson noise (3√400 = 60 > 40) or within 10% of what was sent is not a backlog.
  assert.ok(controlStep(walking, { ...calm, backlog: { grew: 40, sent: 300, meanInFlight: 400 } }, cfg).rateRps > 30);
  assert.ok(controlStep(walking, { ...calm, backlog: { grew: 25, sent: 300, meanInFlight: 10 } }, cfg).rateRps > 30);
  // Settled: the backlog still turns the walk down, but the answer's window keeps counting.
  const settled: ControlState = { phase: 'settled', rateRps: 30, step: cfg.minStep, lastDir: 1, held: 4 };
  const next = controlStep(settled, { ...calm, backlog: { grew: 40, sent: 300, meanInFlight: 50 } }, cfg);
  assert.ok(next.rateRps < 30);
  assert.equal(next.phase, 'settled');
});

test('noise around the aim only makes the walk settle sooner: it still ends within 10% of the aim rate', () => {
  let seed = 7;
  const noise = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return 0.8 + 0.4 * (seed / 2 ** 31);
  };
  let s = initialState(1);
  let settledAt = -1;
  for (let k = 0; k < 60; k++) {
    s = controlStep(s, { valueMs: p95At(s.rateRps) * noise(), failed: 0 }, cfg);
    if (s.phase === 'settled' && settledAt < 0) settledAt = k;
  }
  assert.ok(settledAt >= 0 && settledAt < 30, `settled at step ${settledAt}`);
  assert.ok(Math.abs(s.rateRps / aimRate - 1) < 0.1, `${s.rateRps.toFixed(2)} vs ${aimRate.toFixed(2)}`);
});

test('a breach while the server works through an earlier backlog holds the rate instead of cutting it to the floor', () => {
  // Offered 2 req/s, the server finishing its queue at 3 first tokens a second: TTFT is over the limit
  // because of the queue, which no cut of the arrival rate shortens.
  const s: ControlState = { phase: 'track', rateRps: 2, step: 0.2, lastDir: -1, held: 0 };
  const held = controlStep(s, { valueMs: 3000, failed: 0, admittedRps: 3 }, cfg);
  assert.equal(held.rateRps, 2);
  assert.equal(held.held, 0);
  // Once the server admits what it is offered, a breach cuts the rate again; failures always do.
  assert.ok(controlStep(s, { valueMs: 3000, failed: 0, admittedRps: 2 }, cfg).rateRps < 2);
  assert.ok(controlStep(s, { valueMs: 3000, failed: 1, admittedRps: 3 }, cfg).rateRps < 2);
  // Twenty-five periods of such a drain leave the rate where it was, not at 0.05 req/s.
  let st = s;
  for (let k = 0; k < 25; k++) st = controlStep(st, { valueMs: 3000, failed: 0, admittedRps: 2.6 }, cfg);
  assert.equal(st.rateRps, 2);
});

test('at a low rate, admitting less than offered is saturation only when it stands out of the count’s noise', () => {
  const walking: ControlState = { phase: 'track', rateRps: 0.4, step: 0.2, lastDir: 1, held: 0 };
  // 14 first tokens in 50 s at 0.4 req/s (20 expected): within noise, not saturation, so the walk
  // does not step down (a bare ratio, 0.28 against 0.9 × 0.4, read it as saturation).
  const noisy = controlStep(walking, { valueMs: 100, failed: 0, admittedRps: 14 / 50, admittedSpanS: 50 }, cfg);
  assert.equal(noisy.lastDir, 1);
  assert.ok(noisy.rateRps >= 0.4);
  // 40 of 100 expected over 250 s: a server taking in well under what it is offered.
  assert.ok(controlStep(walking, { valueMs: 100, failed: 0, admittedRps: 40 / 250, admittedSpanS: 250 }, cfg).rateRps < 0.4);
});
