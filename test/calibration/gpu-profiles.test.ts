import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { fitGpuProfiles, withSimLine } from '../../src/calibration/gpu-profiles.js';
import { parseVidurKernels } from '../../src/calibration/vidur-kernels.js';
import { PROJECT_ROOT, defaultCatalog } from '../../src/catalog/index.js';
import { isLmBenchError } from '../../src/errors.js';

const catalog = defaultCatalog();
const rows = parseVidurKernels(readFileSync(join(PROJECT_ROOT, 'data', 'calibration', 'vidur', 'gemm_times.csv'), 'utf8'), 'gemm_times.csv');
const HARDWARE = readFileSync(join(PROJECT_ROOT, 'data', 'hardware.yaml'), 'utf8');

test('the A100s take overrides from the kernel fit, both memory sizes alike; the H100 is the reference and takes none', () => {
  const fit = fitGpuProfiles(rows, catalog, catalog.profile);
  assert.deepEqual(Object.keys(fit.overrides).sort(), ['A100-40GB', 'A100-80GB']);
  assert.deepEqual(fit.overrides['A100-40GB'], fit.overrides['A100-80GB']);
  assert.equal(fit.reference.gpu, 'H100-SXM');
  // Leave one model out: every A100 model is predicted by the fit on the other.
  const a100 = fit.gpus.find((g) => g.gpu === 'A100-80GB');
  assert.equal(a100?.lomo.length, 2);
  assert.ok((a100?.lomo ?? []).every((l) => l.mape >= (a100?.fitMape ?? 0) * 0.5));
});

test('data/hardware.yaml holds the overrides this fit gives from data/sim-profile.yaml (rerun scripts/calibrate.ts after a refit)', () => {
  const fit = fitGpuProfiles(rows, catalog, catalog.profile);
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
