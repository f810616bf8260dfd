import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Workload, type WorkloadInput } from '../../src/domain/index.js';
import { loadTraffic } from '../../src/loadgen/traffic.js';
import { runBenchmark } from '../../src/loadgen/index.js';
import { startSimServer } from '../../src/sim/server.js';
import { simulate } from '../../src/sim/index.js';
import { defaultCatalog } from '../../src/catalog/index.js';

// One seed, one traffic: the load runner sends the requests the simulator simulates, length for
// length and arrival for arrival. The simulator's side is read from what it ran (its records), not
// from the shared sampler, so a runner that drew on other streams (it once did: 'workload' and
// 'arrival' against the simulator's 'requests' and 'arrivals') fails here.

const catalog = defaultCatalog();
const base = { api: 'completions', ignore_eos: true } as const;
const lognormalIn = { dist: 'lognormal', mean: 128, std: 64, min: 4, max: 512 } as const;
const uniformOut = { dist: 'uniform', min: 4, max: 40 } as const;

const workloads: Record<string, WorkloadInput> = {
  'fixed lengths, poisson': { ...base, name: 'a', input_len: { dist: 'fixed', value: 64 }, output_len: { dist: 'fixed', value: 8 }, arrival: { kind: 'poisson', rate_rps: 4 }, num_prompts: 20 },
  'lognormal in, uniform out, poisson': { ...base, name: 'b', input_len: lognormalIn, output_len: uniformOut, arrival: { kind: 'poisson', rate_rps: 4 }, num_prompts: 20 },
  'uniform lengths, poisson stages': { ...base, name: 'c', input_len: { dist: 'uniform', min: 8, max: 300 }, output_len: uniformOut, arrival: { kind: 'poisson', stages: [{ rate_rps: 4, duration_s: 5 }, { rate_rps: 8, duration_s: 5 }] } },
  'stages opening with a pause, cut short': { ...base, name: 'd', input_len: lognormalIn, output_len: uniformOut, arrival: { kind: 'poisson', stages: [{ rate_rps: 0, duration_s: 3 }, { rate_rps: 5, duration_s: 4 }, { rate_rps: 10, duration_s: 2 }] }, num_prompts: 25 },
  'gamma, normal lengths': { ...base, name: 'e', input_len: { dist: 'normal', mean: 100, std: 30, min: 8, max: 400 }, output_len: uniformOut, arrival: { kind: 'gamma', rate_rps: 6, burstiness: 0.5 }, num_prompts: 20 },
  'closed loop, zipf lengths': { ...base, name: 'f', input_len: { dist: 'zipf', s: 1.1, min: 8, max: 256 }, output_len: uniformOut, arrival: { kind: 'closed', concurrency: 3 }, num_prompts: 15 },
  'prompt pool with shared prefixes': { ...base, name: 'g', input_len: lognormalIn, output_len: uniformOut, shared_prefix: { groups: 3, length: 48, fraction: 0.6 }, prompt_pool: { size: 6 }, arrival: { kind: 'poisson', rate_rps: 5 }, num_prompts: 24 },
  'sessions': { ...base, name: 'h', input_len: { dist: 'uniform', min: 8, max: 64 }, output_len: uniformOut, sessions: { turns: 3, concurrent: 2 }, arrival: { kind: 'poisson', rate_rps: 3 }, num_prompts: 18 },
};

/** The simulator's (prompt tokens, output tokens, arrival) per request, in request order. */
function simulated(w: Workload, seed: number): { lengths: [number, number][]; arrivals: number[] } {
  const out = simulate({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.2-1b', workload: w, seed, catalog });
  if (!out.ok) throw new Error(`the simulator did not start: ${out.failure.message}`);
  const records = [...out.records].sort((a, b) => Number(a.request_id.split('-').pop()) - Number(b.request_id.split('-').pop()));
  assert.ok(records.every((r) => r.error_kind === null), 'every request served (ignore_eos: output = planned length)');
  return { lengths: records.map((r) => [r.prompt_tokens, r.output_tokens]), arrivals: records.map((r) => r.sched_time_s) };
}

for (const [name, input] of Object.entries(workloads)) {
  test(`the load runner plans what the simulator simulates from one seed: ${name}`, () => {
    const w = Workload.parse(input);
    for (const seed of [5, 9]) {
      const sim = simulated(w, seed);
      const plan = loadTraffic(w, seed);
      assert.equal(plan.n, w.num_prompts);
      assert.deepEqual(plan.requests.slice(0, plan.n).map((r) => [r.clientTokens, r.maxTokens]), sim.lengths, `seed ${seed}: lengths`);
      if (w.arrival.kind === 'closed') assert.equal(plan.arrivals, null, 'a closed loop has no schedule');
      else assert.deepEqual(Array.from(plan.arrivals ?? []), sim.arrivals, `seed ${seed}: arrivals`);
      // A salt changes the words only.
      const salted = loadTraffic(w, seed, { promptSalt: 'x' });
      assert.deepEqual(salted.requests.map((r) => [r.clientTokens, r.maxTokens]), plan.requests.map((r) => [r.clientTokens, r.maxTokens]));
      assert.deepEqual(salted.arrivals, plan.arrivals);
    }
  });
}

test('the seeds differ: another seed, other traffic (the comparison above can fail)', () => {
  const w = Workload.parse(workloads['lognormal in, uniform out, poisson']);
  const a = loadTraffic(w, 9);
  const b = simulated(w, 10);
  assert.notDeepEqual(a.requests.map((r) => [r.clientTokens, r.maxTokens]), b.lengths);
  assert.notDeepEqual(Array.from(a.arrivals ?? []), b.arrivals);
});

test('end to end: `run` against sim serve sends the simulated lengths on the simulated schedule', { timeout: 60_000 }, async () => {
  const w = Workload.parse(workloads['uniform lengths, poisson stages']);
  const seed = 5;
  const sim = simulated({ ...w, num_prompts: 12 }, seed);
  const server = await startSimServer({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.2-1b', port: 0, speed: 50, seed: 1 });
  try {
    // Time is scaled: 12 arrivals over ~3 s of schedule; the check is of the plan sent, not of timing.
    const { records, result } = await runBenchmark({ endpoint: `${server.url}/v1/completions`, seed, workload: { ...w, num_prompts: 12 }, scrapeMetrics: false, env: { LMB_LOOPBACK_ONLY: '1' } });
    assert.equal(result.completed, 12);
    const sent = records.filter((r) => r.phase === 'measure').sort((a, b) => Number(a.request_id.slice(1)) - Number(b.request_id.slice(1)));
    assert.deepEqual(sent.map((r) => [r.prompt_tokens_client, r.output_tokens]), sim.lengths);
    // The runner's axis starts before its schedule does: the same times, shifted by one constant.
    const shift = (sent[0]?.sched_time_s ?? 0) - (sim.arrivals[0] ?? 0);
    sent.forEach((r, i) => assert.ok(Math.abs(r.sched_time_s - shift - (sim.arrivals[i] ?? 0)) < 1e-9, `request ${i} scheduled at the simulator's time`));
    assert.equal(result.request_rate, 4, 'all 12 went out in the 4 req/s stage');
  } finally {
    await server.close();
  }
});
