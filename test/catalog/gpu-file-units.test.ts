import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { defaultCatalog } from '../../src/catalog/index.js';
import { GpuFile, gpuFromDatasheet, resolveGpu } from '../../src/catalog/gpu-file.js';
import { isLmBenchError } from '../../src/errors.js';

// A `--gpu` datasheet YAML typed from a vendor's datasheet or nvidia-smi: figures in the wrong unit
// (TB/s, PFLOPS, MiB, kW) are refused with the field, its line and the unit wanted, not priced 1000× off.

const catalog = defaultCatalog();

const FIGURES: Record<string, string> = {
  name: 'Acme 96',
  memory_gb: '96',
  hbm_bandwidth_gbs: '2000',
  bf16_tflops: '600',
  fp8_tflops: '1200',
  interconnect: '{ kind: pcie, bandwidth_gbs: 128 }',
  tdp_w: '600',
};

function datasheet(t: TestContext, figures: Record<string, string>, file = 'acme-96.yaml'): string {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-gpu-units-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, file);
  writeFileSync(path, Object.entries(figures).map(([k, v]) => `${k}: ${v}\n`).join(''));
  return path;
}

function refused(path: string, code: string, pattern: RegExp): void {
  assert.throws(
    () => resolveGpu(path, catalog),
    (e) => isLmBenchError(e) && e.code === code && pattern.test(e.message),
  );
}

test('a datasheet in the units its field names is read', (t) => {
  const hw = resolveGpu(datasheet(t, FIGURES), catalog);
  assert.deepEqual([hw.id, hw.memory_gb, hw.memory_visible_gib, hw.hbm_bandwidth_gbs], ['acme-96', 96, 95.04, 2000]);
});

test('figures in another unit (TB/s, PFLOPS, kW, nvidia-smi MiB) are refused, naming the field, its line and the unit', (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ hbm_bandwidth_gbs: '3.35' }, /:3: hbm_bandwidth_gbs: .*GB\/s, not TB\/s/],
    [{ bf16_tflops: '2.25' }, /:4: bf16_tflops: .*TFLOPS, not PFLOPS/],
    [{ fp8_tflops: '4.5' }, /:5: fp8_tflops: .*TFLOPS, not PFLOPS/],
    [{ interconnect: '{ kind: nvlink, bandwidth_gbs: 1.8 }' }, /:6: interconnect\.bandwidth_gbs: .*GB\/s, not TB\/s/],
    [{ tdp_w: '1' }, /:7: tdp_w: .*watts, not kW/],
    [{ memory_gb: '81559' }, /:2: memory_gb: .*not MiB/],
  ];
  for (const [change, pattern] of cases) refused(datasheet(t, { ...FIGURES, ...change }), 'LMB_ERR_CONFIG_INVALID', pattern);
});

test('a memory size that leaves no memory or overflows the byte counts is a schema error, not an internal one', (t) => {
  // 0.001 GB made the default memory_visible_gib round to 0 (a raw ZodError, LMB_ERR_INTERNAL); 1e300
  // overflowed to Infinity and surfaced as a search-space rule error.
  refused(datasheet(t, { ...FIGURES, memory_gb: '0.001' }), 'LMB_ERR_CONFIG_INVALID', /memory_gb: under 1 GB/);
  refused(datasheet(t, { ...FIGURES, memory_gb: '1e300' }), 'LMB_ERR_CONFIG_INVALID', /memory_gb: over 2048 GB/);
});

test('memory_visible_gib beyond the card is refused, in a file and in a service request alike', (t) => {
  refused(datasheet(t, { ...FIGURES, memory_visible_gib: '950' }), 'LMB_ERR_CONFIG_INVALID', /memory_visible_gib: 950 GiB exceeds the card's 96 GB/);
  const sheet = GpuFile.parse({ id: 'acme-x', memory_gb: 96, memory_visible_gib: 950, hbm_bandwidth_gbs: 2000, bf16_tflops: 600, fp8_tflops: null, interconnect: { kind: 'pcie', bandwidth_gbs: 64 }, tdp_w: 300 });
  assert.throws(
    () => gpuFromDatasheet({ ...sheet, id: 'acme-x' }, catalog, { source: 's', where: 'body.gpus[1]', code: 'LMB_ERR_INVALID_ARGUMENT', idField: 'gpus[1].id' }),
    (e) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT') && e.details?.['field'] === 'gpus[1].memory_visible_gib',
  );
});

test('a --gpu path to no file is a missing file, and a datasheet not named .yaml says so, not "unknown GPU"', (t) => {
  const path = datasheet(t, FIGURES);
  refused(path.replace('acme-96.yaml', 'acme-69.yaml'), 'LMB_ERR_FILE_NOT_FOUND', /acme-69\.yaml does not exist/);
  refused(datasheet(t, FIGURES, 'acme.json'), 'LMB_ERR_CONFIG_INVALID', /acme\.json: a GPU datasheet file is YAML/);
  // Catalog names still resolve first, and an unknown plain name is still an unknown GPU.
  assert.equal(resolveGpu('NVIDIA L40S', catalog).id, 'L40S');
  refused('NVIDIA GeForce RTX 4090', 'LMB_ERR_UNKNOWN_GPU', /unknown GPU/);
});

test('an AMD datasheet runs on ROCm by default, and a vendor on the other vendor\'s platform is refused', (t) => {
  // Platform decides C11 (fp8_e5m2 KV cache refused on ROCm): the old default of cuda for every vendor
  // let an AMD datasheet without `platform` pass a configuration vLLM refuses there.
  assert.equal(resolveGpu(datasheet(t, { ...FIGURES, vendor: 'amd' }, 'acme-amd.yaml'), catalog).platform, 'rocm');
  assert.equal(resolveGpu(datasheet(t, FIGURES, 'acme-nv.yaml'), catalog).platform, 'cuda');
  refused(datasheet(t, { ...FIGURES, vendor: 'amd', platform: 'cuda' }, 'acme-amd-cuda.yaml'), 'LMB_ERR_CONFIG_INVALID', /platform: cuda does not run amd GPUs/);
});
