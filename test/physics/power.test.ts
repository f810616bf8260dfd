import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelSpec, PowerProfile, ServerConfig } from '../../src/domain/index.js';
import { makePowerModel, makeStepModel, newStepActivity, resolveConfig, stepPowerW, weightBytesPerGpu, type StepBatch, type StepModel } from '../../src/physics/index.js';
import { defaultPowerProfile } from '../../src/sim/index.js';
import { catalog } from '../sim/helpers.js';

const h100 = catalog.gpu('H100-SXM');
const profile = catalog.profileFor(h100);
const qwen8 = catalog.model('qwen3-8b');
const stored = defaultPowerProfile();
/** The fitted profile of data/sim-profile.yaml: the tests below are about the model as shipped. */
const power: PowerProfile = stored ?? assert.fail('data/sim-profile.yaml has no power block');
const stepModel = (model: ModelSpec, config: ServerConfig = {}): StepModel => makeStepModel(resolveConfig(config, h100, model), h100, model, profile);

const decode = (batch: number, context: number): StepBatch => ({
  tokens: batch,
  requests: batch,
  sampled: batch,
  attnPairs: batch * (context + 1),
  kvReadTokens: batch * context,
  windowPairs: batch * (context + 1),
  windowKvReadTokens: batch * context,
  decodeOnly: true,
});
const prefill = (tokens: number): StepBatch => ({ tokens, requests: 1, sampled: 1, attnPairs: (tokens * (tokens + 1)) / 2, kvReadTokens: 0, windowPairs: (tokens * (tokens + 1)) / 2, windowKvReadTokens: 0, decodeOnly: false });

/** One step's power on one GPU (W) and its energy per token (J), under the shipped power model. */
function stepFigures(m: StepModel, b: StepBatch): { powerW: number; joulesPerToken: number; wallS: number; computeUtil: number; memoryUtil: number } {
  const act = newStepActivity();
  const wallS = m.stepWithActivity(b, act) / 1000;
  const pm = makePowerModel(h100, power, 1);
  const energyJ = pm.idleW * wallS + pm.dynamicJ(act.computeS, act.memoryS, Math.min(wallS, act.gpuS), wallS);
  return { powerW: energyJ / wallS, joulesPerToken: energyJ / b.sampled, wallS, computeUtil: act.computeS / wallS, memoryUtil: act.memoryS / wallS };
}

test('a GPU draws between its idle power and its TDP, whatever the activity: the cap holds, nothing goes below idle', () => {
  const pm = makePowerModel(h100, power, 2);
  assert.equal(pm.idleW, power.idle_tdp_frac * 700);
  assert.equal(stepPowerW(pm, 0, 0, 0), pm.idleW, 'no kernels: idle');
  for (const [c, m, b] of [
    [0, 0.6, 1],
    [0.3, 0.3, 1],
    [0.9, 0.1, 1],
    [1, 1, 1],
    [0.05, 0.9, 0.4],
  ] as const) {
    const w = stepPowerW(pm, c, m, b);
    assert.ok(w > pm.idleW && w <= 700 + 1e-9, `compute ${c}, memory ${m}, busy ${b}: ${w} W`);
  }
  // A saturated tensor core hits the cap: the whole replica's step energy is TDP × GPUs × time.
  assert.equal(pm.dynamicJ(10, 10, 10, 2) + 2 * pm.idleW * 2, 2 * 700 * 2);
  // More work never draws less.
  assert.ok(stepPowerW(pm, 0.3, 0.5, 1) > stepPowerW(pm, 0.1, 0.5, 1));
  assert.ok(stepPowerW(pm, 0.1, 0.7, 1) > stepPowerW(pm, 0.1, 0.5, 1) || power.memory_weight === 0);
});

test('step activity counts the work: a batch-1 decode reads every weight once and does 2 FLOPs per weight', () => {
  const r = resolveConfig({}, h100, qwen8);
  const m = stepModel(qwen8);
  const act = newStepActivity();
  m.stepWithActivity(decode(1, 1), act);
  // Everything but the input embedding is read (the lm-head included); a lookup reads one row.
  const read = weightBytesPerGpu(r, qwen8) - (qwen8.tied_embeddings ? 0 : qwen8.vocab_size * qwen8.hidden_size * 2);
  const bytes = act.memoryS * h100.hbm_bandwidth_gbs * 1e9;
  assert.ok(Math.abs(bytes / read - 1) < 0.05, `bytes ${bytes.toExponential(3)} vs weights ${read.toExponential(3)}`);
  const flops = act.computeS * h100.bf16_tflops * 1e12;
  // A CUDA graph pads batch 1 to its smallest capture size: FLOPs per padded token ≈ 2 × bf16 weights read.
  const padded = m.captureSizes[0] ?? 1;
  assert.ok(Math.abs(flops / padded / read - 1) < 0.05, `FLOPs per token ${(flops / padded).toExponential(3)} vs 2 × params ${read.toExponential(3)}`);
});

test('activity never claims more than the datasheet allows, and asking for it does not change the step time', () => {
  const m = stepModel(qwen8);
  for (const b of [decode(1, 100), decode(64, 2000), decode(512, 800), prefill(8192), prefill(512)]) {
    const act = newStepActivity();
    const ms = m.stepWithActivity(b, act);
    assert.equal(ms, m.stepMs(b));
    assert.ok(act.computeS > 0 && act.memoryS > 0 && act.gpuS > 0);
    assert.ok(act.computeS <= ms / 1000 && act.memoryS <= ms / 1000 && act.gpuS <= ms / 1000 + 1e-12, JSON.stringify({ ms, ...act }));
  }
});

test('a bigger batch gives fewer joules per token on a memory-bound decode', () => {
  const m = stepModel(qwen8);
  const small = stepFigures(m, decode(8, 1000));
  const big = stepFigures(m, decode(128, 1000));
  assert.ok(small.memoryUtil > small.computeUtil * 5, 'batch 8 is memory-bound');
  assert.ok(big.powerW > small.powerW, `a fuller step draws more: ${big.powerW} vs ${small.powerW} W`);
  assert.ok(big.joulesPerToken < small.joulesPerToken / 3, `${big.joulesPerToken} vs ${small.joulesPerToken} J/token`);
});

test('a compute-bound prefill draws more power than a light decode', () => {
  const m = stepModel(qwen8);
  const pre = stepFigures(m, prefill(8192));
  const light = stepFigures(m, decode(2, 500));
  assert.ok(pre.computeUtil > 0.3, `prefill tensor utilisation ${pre.computeUtil}`);
  assert.ok(pre.powerW > light.powerW + 100, `${pre.powerW} vs ${light.powerW} W`);
  assert.ok(pre.powerW <= 700 + 1e-9);
});

test('an MoE step counts only the experts its tokens touch: a small decode reads far less than every expert', () => {
  const moe = catalog.model('qwen3-30b-a3b');
  const m = stepModel(moe);
  const one = newStepActivity();
  const many = newStepActivity();
  m.stepWithActivity(decode(1, 100), one);
  m.stepWithActivity(decode(256, 100), many);
  const all = weightBytesPerGpu(resolveConfig({}, h100, moe), moe) / (h100.hbm_bandwidth_gbs * 1e9);
  assert.ok(one.memoryS < 0.3 * all, `batch 1 reads ${one.memoryS} s of ${all} s of weights`);
  assert.ok(many.memoryS > 0.8 * all, `batch 256 touches nearly every expert: ${many.memoryS} of ${all} s`);
});
