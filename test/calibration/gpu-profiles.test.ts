import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { fitGpuProfiles, withSimLine } from '../../src/calibration/gpu-profiles.js';
import { parseVidurKernels } from '../../src/calibration/vidur-kernels.js';
import { parseAicAttention, parseAicGemms } from '../../src/calibration/aic-kernels.js';
import { parseAicMoe } from '../../src/calibration/aic-moe.js';
import { PROJECT_ROOT, defaultCatalog } from '../../src/catalog/index.js';
import { isLmBenchError } from '../../src/errors.js';

const catalog = defaultCatalog();
const read = (dir: string, file: string): string => readFileSync(join(PROJECT_ROOT, 'data', 'calibration', dir, file), 'utf8');
const data = {
  vidur: parseVidurKernels(read('vidur', 'gemm_times.csv'), 'gemm_times.csv'),
  aicGemms: parseAicGemms(read('aiconfigurator-kernels', 'gemm.csv'), 'gemm.csv'),
  aicAttention: parseAicAttention(read('aiconfigurator-kernels', 'decode_attention.csv'), 'decode_attention.csv'),
  aicMoe: parseAicMoe(read('aiconfigurator-kernels', 'moe.csv'), 'moe.csv'),
};
const HARDWARE = readFileSync(join(PROJECT_ROOT, 'data', 'hardware.yaml'), 'utf8');

const fit = fitGpuProfiles(data, catalog, catalog.profile);

test('the A100s, the L40S and the B200 take overrides from the kernel fits, and the GPUs of the same kernels take theirs; the H100 is the reference and takes none', () => {
  assert.deepEqual(Object.keys(fit.overrides).sort(), ['A100-40GB', 'A100-80GB', 'B200', 'L4', 'L40S']);
  assert.deepEqual(fit.overrides['A100-40GB'], fit.overrides['A100-80GB']);
  assert.deepEqual(fit.overrides['L4'], fit.overrides['L40S']);
  assert.equal(fit.reference.gpu, 'H100-SXM');
  // The A100's GEMMs and KV reads come from the newer vLLM's tables; its small kernels only Vidur measured.
  assert.match(fit.basis['A100-80GB'] ?? '', /small kernels from Vidur; GEMMs and decode attention from aiconfigurator's vLLM 0\.14\.0/);
  assert.equal(fit.overrides['A100-80GB']?.mfu_fp8, undefined, 'Ampere has no fp8 peak to scale');
  // fp8 KV as measured on the other architectures; the reference's old FA3 path stays the H100's own.
  assert.equal(fit.overrides['B200']?.kv_fp8_efficiency, 1);
  assert.equal(fit.overrides['A100-80GB']?.kv_fp8_efficiency, undefined);
  // MoE: only the family the profile's MoE efficiencies were fitted on (MXFP4) carries, to the B200.
  assert.ok(fit.overrides['B200']?.moe_efficiency !== undefined && fit.overrides['L40S']?.moe_efficiency === undefined);
  assert.ok(fit.moe.some((m) => m.gpu === 'B200' && m.dtype === 'bf16'), 'the bf16 family is fitted and reported, not carried');
  // Every other GPU is compared with the H100 of its own vLLM version.
  for (const g of fit.aicGpus) assert.equal(g.ref.version, g.fit.version, g.fit.gpu);
  // Leave one model out (Vidur's rows): every A100 model is predicted by the fit on the other.
  const a100 = fit.gpus.find((g) => g.gpu === 'A100-80GB');
  assert.equal(a100?.lomo.length, 2);
  assert.ok((a100?.lomo ?? []).every((l) => l.mape >= (a100?.fitMape ?? 0) * 0.5));
});

test('the kernel fits carry: each GPU priced with the H100’s efficiencies misses its own KV reads by more than its own fit does', () => {
  for (const g of fit.aicGpus) assert.ok(g.attentionMapeRefEff > g.fit.attentionMape, `${g.fit.gpu}: ${g.attentionMapeRefEff} vs ${g.fit.attentionMape}`);
});

test('data/hardware.yaml holds the overrides this fit gives from data/sim-profile.yaml (rerun scripts/calibrate.ts after a refit)', () => {
  for (const [gpu, o] of Object.entries(fit.overrides)) assert.deepEqual(catalog.gpu(gpu).sim, o, gpu);
});

test('withSimLine replaces a GPU’s sim line or adds one before its source, and leaves every other GPU as written', () => {
  const o = { eta_weights: 0.5, eta_kv: 0.4, mfu_bf16: 0.3, layer_fixed_us: 20 };
  const once = withSimLine(HARDWARE, 'L4', o, 'a note');
  const twice = withSimLine(once, 'L4', { ...o, eta_kv: 0.35 }, 'a note');
  const gpus = (text: string) => (parseYaml(text) as { gpus: { id: string; sim?: Record<string, number> }[] }).gpus;
  assert.deepEqual(gpus(once).find((g) => g.id === 'L4')?.sim, o);
  assert.equal(gpus(twice).find((g) => g.id === 'L4')?.sim?.['eta_kv'], 0.35);
  assert.equal(twice.split('\n').length, once.split('\n').length, 'replaced, not added again');
  for (const g of gpus(twice).filter((x) => x.id !== 'L4')) assert.deepEqual(g, gpus(HARDWARE).find((x) => x.id === g.id));
  assert.throws(() => withSimLine(HARDWARE, 'Z9', o, ''), (e: unknown) => isLmBenchError(e, 'LMB_ERR_UNKNOWN_GPU'));
});
