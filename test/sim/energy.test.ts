import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BenchmarkResult, Workload } from '../../src/domain/index.js';
import { makePowerModel } from '../../src/physics/index.js';
import { EnergyTrace, defaultPowerProfile, simulate, simulateSummary, windowEnergy } from '../../src/sim/index.js';
import { catalog, fixed, run } from './helpers.js';

const power = defaultPowerProfile() ?? assert.fail('data/sim-profile.yaml has no power block');
const h100 = catalog.gpu('H100-SXM');

test('an energy trace integrates steps over any window, a straddling step pro rata, idle between steps', () => {
  const pm = makePowerModel(h100, { idle_tdp_frac: 0.1, busy_weight: 0.5, compute_weight: 0, memory_weight: 0 }, 2);
  const tr = new EnergyTrace(pm);
  // Two steps of 1 s, busy throughout: (700 − 70) × 0.5 × 2 GPUs = 630 J above idle each; a gap from 2 s to 3 s.
  tr.add(0, 1, 0, 0, 1);
  tr.add(1, 2, 0, 0, 1);
  tr.add(3, 4, 0, 0, 1);
  assert.equal(tr.upTo(2).dynamicJ, 1260);
  assert.equal(tr.upTo(2.5).dynamicJ, 1260, 'nothing above idle in the gap');
  assert.equal(tr.upTo(0.25).dynamicJ, 157.5);
  assert.equal(tr.upTo(3.5).busyGpuS, 5);
  const w = windowEnergy([tr], 0.5, 3.5);
  assert.ok(w !== null);
  // Idle of both GPUs over 3 s (420 J) + half of step 1, step 2 and half of step 3 (1,260 J).
  assert.equal(w.energyJ, 2 * 70 * 3 + 1260);
  assert.equal(w.avgPowerW, w.energyJ / 3);
  assert.equal(windowEnergy([tr], 2, 2), null, 'an empty window has no power');
  // Without the steps, a server's trace still knows its totals and the step in flight.
  const live = new EnergyTrace(pm, { keepSteps: false });
  live.add(0, 1, 0, 0, 1);
  live.add(1, 3, 0, 0, 2);
  assert.equal(live.steps, 0);
  assert.equal(live.upTo(2).dynamicJ, 630 + 630);
  assert.equal(live.dynamicPowerW(2), 630);
  assert.equal(live.dynamicPowerW(3.5), 0);
});

const decodeHeavy = (users: number): Workload => fixed(200, 400, { kind: 'closed', concurrency: users }, users * 8);

function energyOf(r: BenchmarkResult): NonNullable<BenchmarkResult['energy']> {
  const e = r.energy;
  assert.ok(e !== null && e !== undefined, 'a simulated result carries an energy block');
  return e;
}

test('sim results carry a consistent energy block over the steady-state window', () => {
  const out = run('H100-SXM', 2, 'qwen3-8b', { tensor_parallel_size: 2, max_num_seqs: 64 }, decodeHeavy(32));
  const r = out.result;
  const e = energyOf(r);
  assert.equal(e.source, 'sim');
  assert.equal(e.gpus, 2);
  assert.equal(e.unavailable_reason, null);
  assert.equal(e.window?.rule, 'steady-state');
  const w = e.window ?? assert.fail();
  const span = w.end_s - w.start_s;
  assert.ok(span > 0 && span < r.duration);
  const p = e.avg_power_w ?? assert.fail();
  const j = e.energy_j ?? assert.fail();
  const perToken = e.energy_per_output_token_j ?? assert.fail();
  assert.ok(Math.abs(j - p * span) < 1e-6 * j, 'energy = average power × the window');
  assert.ok(p > 2 * power.idle_tdp_frac * 700 && p < 2 * 700, `${p} W on 2 H100s`);
  assert.ok(Math.abs(perToken * (e.output_tokens_per_joule ?? 0) - 1) < 1e-12);
  // The window's tokens (energy ÷ J/token) are the tokens the records put inside it, within the even-spread estimate.
  const tokens = j / perToken;
  let counted = 0;
  for (const rec of out.records) for (const t of rec.chunk_times_s) if (t > w.start_s && t <= w.end_s) counted++;
  assert.ok(Math.abs(tokens / counted - 1) < 0.02, `${tokens} vs ${counted} tokens in the window`);
});

test('energy is deterministic, free of side effects on the run, and the summary path agrees with the full one', () => {
  const w = decodeHeavy(16);
  const input = { config: { max_num_seqs: 16 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'qwen3-8b', workload: w, seed: 3, catalog } as const;
  const a = simulate(input);
  const b = simulate(input);
  const off = simulate({ ...input, power: null });
  assert.ok(a.ok && b.ok && off.ok);
  assert.deepEqual(a.result.energy, b.result.energy);
  // Pricing energy draws no random numbers and moves no step: the latency figures are the same without it.
  assert.equal(off.result.median_itl_ms, a.result.median_itl_ms);
  assert.equal(off.result.output_throughput, a.result.output_throughput);
  assert.equal(off.result.energy?.avg_power_w, null);
  assert.match(off.result.energy?.unavailable_reason ?? '', /no power model/);
  const s = simulateSummary({ ...input, window: { startAfterFirstTokens: 16, endAfterFinished: w.num_prompts - 17 } });
  assert.ok(s.ok && s.summary.energy !== null);
  assert.ok(Math.abs(s.summary.energy.avgPowerW / (a.result.energy?.avg_power_w ?? 0) - 1) < 1e-9, 'same window, same power');
  assert.ok(Math.abs((s.summary.energy.energyPerOutputTokenJ ?? 0) / (a.result.energy?.energy_per_output_token_j ?? 0) - 1) < 1e-9);
});

test('more users on a memory-bound decode: more power, fewer joules per token', () => {
  const few = energyOf(run('H100-SXM', 1, 'qwen3-8b', { max_num_seqs: 64 }, decodeHeavy(4)).result);
  const many = energyOf(run('H100-SXM', 1, 'qwen3-8b', { max_num_seqs: 64 }, decodeHeavy(64)).result);
  assert.ok((many.avg_power_w ?? 0) > (few.avg_power_w ?? 0), `${many.avg_power_w} vs ${few.avg_power_w} W`);
  assert.ok((many.energy_per_output_token_j ?? 1) < (few.energy_per_output_token_j ?? 0) / 3, `${many.energy_per_output_token_j} vs ${few.energy_per_output_token_j} J/token`);
});

test('a prefill-heavy workload draws more power than a light decode; an idle server draws idle power', () => {
  const prefillHeavy = energyOf(run('H100-SXM', 1, 'qwen3-8b', {}, fixed(6000, 4, { kind: 'closed', concurrency: 16 }, 160)).result);
  const light = energyOf(run('H100-SXM', 1, 'qwen3-8b', {}, fixed(50, 300, { kind: 'closed', concurrency: 1 }, 6)).result);
  assert.ok((prefillHeavy.avg_power_w ?? 0) > (light.avg_power_w ?? 0) + 100, `${prefillHeavy.avg_power_w} vs ${light.avg_power_w} W`);
  assert.ok((prefillHeavy.avg_power_w ?? Infinity) <= 700 + 1e-6, 'never past TDP');
  // One request every 20 s of a 300-token answer: the GPU mostly waits, the load window's power sits near idle.
  const sparse = energyOf(run('H100-SXM', 1, 'qwen3-8b', {}, fixed(50, 100, { kind: 'poisson', rate_rps: 0.05 }, 4)).result);
  assert.ok((sparse.avg_power_w ?? Infinity) < (light.avg_power_w ?? 0), `${sparse.avg_power_w} vs ${light.avg_power_w} W`);
  assert.ok((sparse.avg_power_w ?? 0) >= power.idle_tdp_frac * 700);
});

test('the energy of a deployment counts every GPU: TP 2 draws about twice the power of TP 1 on the same work', () => {
  const one = energyOf(run('H100-SXM', 1, 'qwen3-8b', { max_num_seqs: 32 }, decodeHeavy(32)).result);
  const two = energyOf(run('H100-SXM', 2, 'qwen3-8b', { tensor_parallel_size: 2, max_num_seqs: 32 }, decodeHeavy(32)).result);
  assert.equal(two.gpus, 2);
  const ratio = (two.avg_power_w ?? 0) / (one.avg_power_w ?? 1);
  assert.ok(ratio > 1.4 && ratio < 2.1, `TP2 / TP1 power ×${ratio.toFixed(2)}`);
});

test('GPUs of the deployment no replica uses draw their idle power in its energy: one replica on eight GPUs is not the frugal answer', () => {
  const alone = energyOf(run('H100-SXM', 1, 'qwen3-8b', { max_num_seqs: 32 }, decodeHeavy(32)).result);
  const onEight = energyOf(run('H100-SXM', 8, 'qwen3-8b', { max_num_seqs: 32 }, decodeHeavy(32)).result);
  assert.equal(onEight.gpus, 8);
  const idleW = makePowerModel(catalog.gpu('H100-SXM'), defaultPowerProfile() ?? assert.fail('no power model'), 1).idleW;
  assert.ok(idleW > 0);
  // The same run, the same window: seven more GPUs at idle power, and the joules per token with them.
  assert.ok(Math.abs((onEight.avg_power_w ?? 0) - (alone.avg_power_w ?? 0) - 7 * idleW) < 1e-6 * (onEight.avg_power_w ?? 1), `${onEight.avg_power_w} vs ${alone.avg_power_w} + 7 × ${idleW}`);
  assert.ok((onEight.energy_per_output_token_j ?? 0) > (alone.energy_per_output_token_j ?? 0) * 1.5);
  // Summary path agrees.
  const summary = simulateSummary({ config: { max_num_seqs: 32 }, hardware: { gpu: 'H100-SXM', count: 8 }, model: 'qwen3-8b', workload: decodeHeavy(32), seed: 1, catalog });
  assert.ok(summary.ok);
  assert.equal(summary.summary.energy?.gpus, 8);
});
