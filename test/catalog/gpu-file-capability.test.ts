import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { defaultCatalog } from '../../src/catalog/index.js';
import { resolveGpu } from '../../src/catalog/gpu-file.js';
import { isLmBenchError } from '../../src/errors.js';

// A datasheet's compute capability is major.minor (7.5), the way nvidia-smi and data/hardware.yaml
// write it. vLLM prints it as major × 10 + minor (75); typed that way it would pass every minimum
// (a quantization method's, fp8 tensor cores' 8.9) for a GPU that has none of them.

const catalog = defaultCatalog();

function datasheet(t: TestContext, cc: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-gpu-cc-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'turing-16.yaml');
  writeFileSync(path, ['name: Turing 16', `compute_capability: ${cc}`, 'memory_gb: 16', 'hbm_bandwidth_gbs: 320', 'bf16_tflops: 65', 'fp8_tflops: null', 'interconnect: { kind: pcie, bandwidth_gbs: 32 }', 'tdp_w: 70', ''].join('\n'));
  return path;
}

test('a compute capability written as vLLM prints it (75) is refused, naming the field and the form wanted', (t) => {
  assert.throws(
    () => resolveGpu(datasheet(t, '75'), catalog),
    (e) => isLmBenchError(e) && e.code === 'LMB_ERR_CONFIG_INVALID' && /compute_capability/.test(e.message) && /major\.minor \(7\.5 for a T4/.test(e.message),
  );
});

test('major.minor is read as is, and null leaves it unknown', (t) => {
  assert.equal(resolveGpu(datasheet(t, '7.5'), catalog).compute_capability, 7.5);
  assert.equal(resolveGpu(datasheet(t, 'null'), catalog).compute_capability, null);
});
