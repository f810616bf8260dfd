import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fitKernelEfficiency, gemmMs, kernelLoss, kernelOverrides, parseVidurKernels, smallKernelsUs, type KernelRow } from '../../src/calibration/vidur-kernels.js';
import { PROJECT_ROOT, defaultCatalog } from '../../src/catalog/index.js';
import { PROFILE_BOUNDS } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { makeStepModel, resolveConfig } from '../../src/physics/index.js';

const catalog = defaultCatalog();
const FILE = join(PROJECT_ROOT, 'data', 'calibration', 'vidur', 'gemm_times.csv');
const rows = parseVidurKernels(readFileSync(FILE, 'utf8'), 'gemm_times.csv');
const floorUs = catalog.profile.kernel_floor_us;

test('the Vidur slice: A100 and H100 rows of Llama layers, four GEMMs each with the sharded shapes', () => {
  assert.deepEqual([...new Set(rows.map((r) => r.gpu))].sort(), ['A100-80GB', 'H100-SXM']);
  for (const r of rows) {
    assert.equal(r.gemms.length, 4);
    assert.ok(r.gemms.every((g) => g.ms > 0 && g.params > 0), `${r.model} ${r.tokens} TP${r.tp}`);
    assert.ok(r.smallMs > 0);
  }
  // Sharding: the same layer's weights on one GPU shrink with TP.
  const at = (tp: number): KernelRow => rows.find((r) => r.model === 'meta-llama/Llama-2-70b-hf' && r.tokens === 1 && r.tp === tp) as KernelRow;
  assert.equal((at(1).gemms[2]?.params ?? 0) / (at(8).gemms[2]?.params ?? 1), 8);
});

test('a bad cell names its file, line and column', () => {
  const text = readFileSync(FILE, 'utf8').split('\n');
  text[2] = (text[2] ?? '').replace(/,[^,]*$/, ',oops');
  assert.throws(
    () => parseVidurKernels(text.join('\n'), 'bad.csv'),
    (e: unknown) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID') && /bad\.csv:3: add_ms/.test((e as Error).message),
  );
});

test('a GEMM is priced as the step model prices it: a TP1 decode of one token costs what its GEMMs cost', () => {
  const hw = catalog.gpu('H100-SXM');
  const model = catalog.model('llama-3.1-8b');
  const p = catalog.profile;
  // Llama-3-8B's shapes, as the slice's A100 rows have them.
  const layer = rows.find((r) => r.model === 'meta-llama/Meta-Llama-3-8B' && r.tp === 1 && r.tokens === 1) as KernelRow;
  const gemmsMs = layer.gemms.reduce((a, g) => a + gemmMs(g, 1, hw, p, floorUs), 0);
  const m = makeStepModel(resolveConfig({}, hw, model), hw, model, p);
  const step = (ctx: number): number => m.gpuMs({ tokens: 1, requests: 1, sampled: 1, attnPairs: ctx + 1, kvReadTokens: ctx, windowPairs: ctx + 1, windowKvReadTokens: ctx, decodeOnly: true });
  // The step's layers are these GEMMs, the small kernels and attention: more than the GEMMs, by less than the rest.
  const layersMs = step(0) - p.step_fixed_ms;
  assert.ok(layersMs > model.layers * gemmsMs, `${layersMs} vs ${model.layers * gemmsMs}`);
  assert.ok(layersMs < model.layers * (gemmsMs + (p.layer_fixed_us + 10) / 1000) + 2, `${layersMs}`);
});

test('the fit recovers the efficiencies that generated the times', () => {
  const hw = catalog.gpu('A100-80GB');
  const truth = { eta_weights: 0.62, mfu_bf16: 0.48 };
  const synthetic = rows.filter((r) => r.gpu === 'A100-80GB').map((r) => ({ ...r, gemms: r.gemms.map((g) => ({ ...g, ms: gemmMs(g, r.tokens, hw, truth, floorUs) })) }));
  const fit = fitKernelEfficiency(synthetic, hw, floorUs);
  assert.ok(Math.abs(fit.eta_weights - truth.eta_weights) < 0.006, JSON.stringify(fit));
  assert.ok(Math.abs(fit.mfu_bf16 - truth.mfu_bf16) < 0.006, JSON.stringify(fit));
  assert.ok(kernelLoss(synthetic, hw, fit, floorUs) < 0.01);
});

test('measured: the A100 streams its weights at a lower share of its bandwidth than the H100, on the same 70B layer shapes', () => {
  const on = (gpu: string, model: string) => rows.filter((r) => r.gpu === gpu && r.model === model);
  const a = fitKernelEfficiency(on('A100-80GB', 'meta-llama/Meta-Llama-3-70B'), catalog.gpu('A100-80GB'), floorUs);
  const h = fitKernelEfficiency(on('H100-SXM', 'meta-llama/Llama-2-70b-hf'), catalog.gpu('H100-SXM'), floorUs);
  assert.ok(a.eta_weights < h.eta_weights, `A100 ${a.eta_weights}, H100 ${h.eta_weights}`);
  // And its small kernels take longer per layer.
  assert.ok(smallKernelsUs(on('A100-80GB', 'meta-llama/Meta-Llama-3-70B')) > smallKernelsUs(on('H100-SXM', 'meta-llama/Llama-2-70b-hf')));
});

test('overrides scale the serving profile by the kernel ratios and stay inside the plausible ranges', () => {
  const p = catalog.profile;
  const o = kernelOverrides(p, { gpu: { eta_weights: 0.6, mfu_bf16: 0.7 }, ref: { eta_weights: 0.8, mfu_bf16: 0.7 }, smallUs: 30, refSmallUs: 20 }, PROFILE_BOUNDS);
  assert.ok(Math.abs(o.eta_weights - p.eta_weights * 0.75) < 1e-3);
  assert.ok(Math.abs(o.eta_kv - p.eta_kv * 0.75) < 1e-3);
  assert.ok(Math.abs(o.mfu_bf16 - p.mfu_bf16) < 1e-3);
  assert.ok(Math.abs(o.layer_fixed_us - p.layer_fixed_us * 1.5) < 0.01);
  const wild = kernelOverrides(p, { gpu: { eta_weights: 0.9, mfu_bf16: 0.7 }, ref: { eta_weights: 0.3, mfu_bf16: 0.7 }, smallUs: 20, refSmallUs: 20 }, PROFILE_BOUNDS);
  assert.equal(wild.eta_weights, PROFILE_BOUNDS.eta_weights[1]);
});
