import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { loadPrices } from '../../src/cost/prices.js';
import type { Workload } from '../../src/domain/index.js';
import type { HistoryCorrection } from '../../src/plan/history.js';
import { plan, type SimRun } from '../../src/plan/plan.js';
import { fixedChat, standInResult } from './stand-in.js';
import type { PlanDeployment, PlanTraffic } from '../../src/plan/types.js';

// The history's speed correction of a plan's throughput and p99s at the target traffic. A stand-in
// replica with known latencies makes the corrected figures known: each closed-loop user's request takes
// TTFT_MS then DECODE_MS (200 tokens at 100 tok/s), and an open loop's p99 TTFT grows with its rate.

const catalog = defaultCatalog();
const prices = loadPrices(catalog);
const IDLE_TDP_FRAC = 0.14;
const OUTPUT_TOKENS = 200;
const TTFT_MS = 100;
const DECODE_MS = 1900;
/** The stand-in's power: idle, plus W per output tok/s. */
const IDLE_W = IDLE_TDP_FRAC * catalog.gpu('H100-SXM').tdp_w;
const W_PER_TOK_S = 0.5;
/** The open-loop stand-in's p99 TTFT at `rps`: 1 s at 8 req/s. */
const ttftAt = (rps: number): number => 200 + 100 * rps;

const fixed: Workload = fixedChat(OUTPUT_TOKENS);

const replica: SimRun = ({ workload }) => {
  const a = workload.arrival;
  const closed = a.kind === 'closed';
  // Closed: users one request each per cycle; open: the Poisson rate (a burst: 10 req/s).
  const rps = closed ? a.concurrency / ((TTFT_MS + DECODE_MS) / 1000) : a.kind === 'poisson' ? (a.rate_rps ?? 10) : 10;
  const tokS = rps * OUTPUT_TOKENS;
  const powerW = IDLE_W + W_PER_TOK_S * tokS;
  const result = standInResult({
    completed: workload.num_prompts,
    rps,
    tokS,
    // Closed loops pass up to 4 users; open loops up to 8 req/s (a 1 s p99 TTFT).
    p99TtftMs: closed ? (a.concurrency <= 4 ? 500 : 5000) : ttftAt(rps),
    powerW,
    extra: { mean_ttft_ms: TTFT_MS, mean_e2el_ms: TTFT_MS + DECODE_MS, mean_tpot_ms: DECODE_MS / (OUTPUT_TOKENS - 1) },
  });
  return { result, failure: null };
};

function planned(traffic: PlanTraffic, correction: HistoryCorrection | null): PlanDeployment {
  const a = plan(
    { model: 'llama-3.1-8b', workload: fixed, traffic, slo: { ttft_p99_ms: 1000 }, gpus: ['H100-SXM'], maxGpus: 64, objective: 'gpus', seed: 1 },
    { catalog, simulate: replica, prices, idleTdpFrac: IDLE_TDP_FRAC, correction: () => correction },
  );
  const d = a.deployments[0];
  assert.ok(d?.feasible, d?.reason ?? '');
  assert.equal(d.tensor_parallel_size, 1, 'the fewest GPUs is TP 1 for a stand-in that does not scale with TP');
  return d;
}

const corrected = (speedFactor: number, latencyFactor = 1): HistoryCorrection => ({ runs: 4, speedFactor, latencyFactor, logSd: 0.05 });
const close = (a: number | null, b: number, what: string): void => assert.ok(a !== null && Math.abs(a / b - 1) < 1e-9, `${what}: ${a}, expected ${b}`);

/** The figures hold together: $/M from $/h and tok/s, power from J/token and tok/s. */
function consistent(d: PlanDeployment): void {
  close(d.usd_per_million_output_tokens, ((d.usd_per_hour as number) / ((d.output_throughput_tok_s as number) * 3600)) * 1e6, '$/M output tokens');
  close(d.avg_power_w, (d.energy_per_output_token_j as number) * (d.output_throughput_tok_s as number), 'power');
}

for (const [speed, latency] of [
  [2, 1],
  [0.5, 1],
  [1, 1.5],
] as const) {
  test(`plan: closed-loop users on a server ×${speed} the simulated decode speed (TTFT ×${latency}) send as fast as it answers`, () => {
    const users = 3;
    const estimated = planned({ kind: 'users', users }, null);
    const d = planned({ kind: 'users', users }, corrected(speed, latency));
    // 3 users are within one replica's headroom either way (4 users, or ⌊4 × 0.5⌋ = 2 a replica when slower).
    const perReplica = Math.ceil(users / (d.replicas as number));
    assert.ok(perReplica <= 4);
    // Each user's cycle on the corrected server, and the tokens it emits a second.
    const cycleS = (TTFT_MS * latency + DECODE_MS / speed) / 1000;
    const tokS = (users * OUTPUT_TOKENS) / cycleS;
    // Before: the simulated tok/s (300) and $/M whatever the speed, beside a power that alone followed it.
    close(d.output_throughput_tok_s, tokS, 'output tok/s');
    close(estimated.output_throughput_tok_s, (users * OUTPUT_TOKENS) / ((TTFT_MS + DECODE_MS) / 1000), 'estimated output tok/s');
    // The energy above idle goes with the tokens, each at 1/speed its simulated energy; the idle draw stays.
    const idleW = IDLE_W * (d.replicas as number);
    const simDynamicPerTokJ = W_PER_TOK_S;
    close(d.avg_power_w, idleW + (simDynamicPerTokJ / speed) * tokS, 'power');
    consistent(d);
    consistent(estimated);
    if (speed !== 1) assert.ok(speed > 1 ? (d.usd_per_million_output_tokens as number) < (estimated.usd_per_million_output_tokens as number) : (d.usd_per_million_output_tokens as number) > (estimated.usd_per_million_output_tokens as number), 'a faster server is cheaper per token, a slower one dearer');
  });
}

test('plan: an open loop emits its traffic whatever the speed: tok/s, $/M and J/token as before the closed-loop correction', () => {
  for (const speed of [2, 0.5]) {
    const d = planned({ kind: 'rate', rate_rps: 6 }, corrected(speed, 1.2));
    close(d.output_throughput_tok_s, 6 * OUTPUT_TOKENS, `output tok/s at ×${speed}`);
    const idleW = IDLE_W * (d.replicas as number);
    // The energy above idle of the same tokens at 1/speed each (power-correction.test.ts), within the TDP.
    const tdpW = catalog.gpu('H100-SXM').tdp_w * (d.replicas as number);
    const simW = idleW + W_PER_TOK_S * 6 * OUTPUT_TOKENS;
    close(d.avg_power_w, Math.min(Math.max(tdpW, simW), idleW + (W_PER_TOK_S * 6 * OUTPUT_TOKENS) / speed), `power at ×${speed}`);
    consistent(d);
  }
});

test("plan: a slower server's open-loop p99s are the load its slower decoding puts on each replica (rate ÷ speed), as its headroom was judged", () => {
  const speed = 0.5;
  const rate = 20;
  const d = planned({ kind: 'rate', rate_rps: rate }, corrected(speed));
  const share = rate / (d.replicas as number);
  // Its headroom is the simulator's (under 8 req/s) × speed, and the replicas cover the traffic at it.
  assert.ok((d.max_rate_rps as number) >= rate);
  // Before: the p99 at the share's own rate (200 + 100 × 3.3 = 533 ms), a lighter load than the replicas were sized against.
  close(d.p99_ttft_ms, ttftAt(share / speed), 'p99 TTFT');
  assert.ok((d.p99_ttft_ms as number) <= 1000, 'within the SLO it was checked against');
  // The throughput is still the traffic's.
  close(d.output_throughput_tok_s, rate * OUTPUT_TOKENS, 'output tok/s');
  // A faster server is judged at the share's own rate (no lighter load credited).
  const fast = planned({ kind: 'rate', rate_rps: rate }, corrected(2));
  close(fast.p99_ttft_ms, ttftAt(rate / (fast.replicas as number)), 'p99 TTFT of a faster server');
});
