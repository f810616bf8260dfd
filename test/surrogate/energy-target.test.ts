import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { BenchmarkResult, ServerConfig } from '../../src/domain/index.js';
import { contextFeatures } from '../../src/surrogate/features.js';
import { priorSurrogate, SIMULATOR_LOG_SD } from '../../src/surrogate/prior.js';
import { fitSurrogate, DEFAULT_SURROGATE_SPEC, predictSurrogate } from '../../src/surrogate/surrogate.js';
import { targetsOf } from '../../src/surrogate/targets.js';
import { simulate } from '../../src/sim/index.js';
import { createRng } from '../../src/util/rng.js';
import { context, makeRows, names } from './fixtures.js';

/**
 * Joules per output token as a surrogate target (issue 25 §4): pulled from a run's energy block, priced
 * by the power model at the decode step the features already price, given the power section's error as
 * its prior spread, and simply absent from runs (and so from models) that carried no power figure.
 */
const catalog = defaultCatalog();
const workload = { ...context.workload, num_prompts: 200 };

function run(config: ServerConfig): BenchmarkResult {
  const out = simulate({ config, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, seed: 3, catalog });
  assert.ok(out.ok);
  return out.result;
}

test('targetsOf takes J/token from the energy block; a run without power lacks the target', () => {
  const r = run({});
  const j = r.energy?.energy_per_output_token_j;
  assert.ok(typeof j === 'number' && j > 0);
  assert.equal(targetsOf(r, 1).energy_per_output_token_j, j);
  assert.equal(targetsOf({ ...r, energy: null }, 1).energy_per_output_token_j, undefined);
  assert.equal(targetsOf({ ...r, energy: undefined }, 1).energy_per_output_token_j, undefined);
  assert.equal(SIMULATOR_LOG_SD.energy_per_output_token_j, 0.25, 'J/token MAPE ≈ 20% (docs/calibration.md) ÷ 0.8');
});

test('the J/token baseline follows the simulator: the power model at the priced decode step over the throughput', () => {
  const configs: ServerConfig[] = [{ max_num_seqs: 8 }, { max_num_seqs: 32 }, {}, { quantization: 'fp8' }];
  const base = configs.map((c) => contextFeatures(c, { ...context, workload }).baselines.energy_per_output_token_j);
  const sim = configs.map((c) => run(c).energy?.energy_per_output_token_j ?? Number.NaN);
  // A bigger batch spreads a step's power over more tokens; fp8 weights stream half the bytes.
  const falling = (xs: readonly number[]): boolean => xs.every((x, i) => i === 0 || x < (xs[i - 1] ?? 0));
  assert.ok(falling(base), `baselines ${base.join(', ')}`);
  assert.ok(falling(sim), `simulated ${sim.join(', ')}`);
  // Close enough for a baseline the residual model corrects (the throughput baseline is as far).
  for (let i = 0; i < configs.length; i++) {
    const ratio = (sim[i] ?? 0) / (base[i] ?? 1);
    assert.ok(ratio > 0.5 && ratio < 3, `config ${i}: simulated ÷ baseline = ${ratio}`);
  }
  // No power model: the GPUs' TDP bounds the draw, so the baseline is the TDP over the throughput.
  const f = contextFeatures({}, { ...context, workload, power: null }).baselines;
  assert.ok(Math.abs(f.energy_per_output_token_j - context.hardware.tdp_w / f.output_throughput) < 1e-9);
});

test('a target missing from every row gets no model; the prior still prices it from the baseline', async () => {
  const { rows } = makeRows(40, 7);
  assert.ok(rows.every((r) => r.targets.energy_per_output_token_j === undefined));
  const s = await fitSurrogate(rows, names, { ...DEFAULT_SURROGATE_SPEC, members: 2, xgb: { ...DEFAULT_SURROGATE_SPEC.xgb, rounds: 10 } }, createRng(1));
  assert.equal(s.targets.energy_per_output_token_j, undefined);
  assert.ok(s.targets.output_throughput_per_gpu !== undefined);

  // The prior: with no row carrying energy, its spread is the simulator's whole error, centred on the baseline.
  const prior = priorSurrogate(rows, names);
  assert.equal(prior.prior?.energy_per_output_token_j?.rows, 0);
  const x = rows[0]?.x ?? [];
  const b = rows[0]?.baselines.energy_per_output_token_j ?? 1;
  const p = predictSurrogate(prior, { rows: 1, cols: x.length, data: Float32Array.from(x) }, { energy_per_output_token_j: Float64Array.of(b) }, ['energy_per_output_token_j']);
  const draws = Array.from(p.targets.energy_per_output_token_j ?? []);
  const logs = draws.map((d) => Math.log(d / b));
  const mean = logs.reduce((a, v) => a + v, 0) / logs.length;
  const sd = Math.sqrt(logs.reduce((a, v) => a + (v - mean) ** 2, 0) / (logs.length - 1));
  assert.ok(Math.abs(mean) < 1e-9 && Math.abs(sd - 0.25) < 0.01, `mean ${mean}, sd ${sd}`);
});
