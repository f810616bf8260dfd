import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { resolveGpu } from '../../src/catalog/gpu-file.js';
import type { Hardware, ModelSpec, ServerConfig } from '../../src/domain/index.js';
import { fp8Compute, loadedQuantMethod, resolveConfig, startupCheck, validateConfig } from '../../src/physics/index.js';
import { catalog } from '../sim/helpers.js';

// C20: vLLM refuses a quantization method on a GPU below the method's minimum compute capability
// (`get_min_capability`, checked in `VllmConfig._get_quantization_config`); above it, fp8 on a GPU without
// fp8 tensor cores (SM < 8.9) runs weight-only through Marlin, which is not an error.

/** A `--gpu` datasheet file of an older NVIDIA card, read the way the CLI reads it. */
function datasheet(t: TestContext, id: string, cc: number, memoryGb: number): Hardware {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-quant-cc-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, `${id}.yaml`);
  writeFileSync(path, [`name: ${id}`, `compute_capability: ${cc}`, `memory_gb: ${memoryGb}`, 'hbm_bandwidth_gbs: 600', 'bf16_tflops: 65', 'fp8_tflops: null', 'interconnect: { kind: pcie, bandwidth_gbs: 32 }', 'tdp_w: 250', ''].join('\n'));
  return resolveGpu(path, catalog);
}

const check = (hw: Hardware, model: ModelSpec, config: ServerConfig = {}) => validateConfig(resolveConfig({ max_model_len: 4096, ...config }, hw, model), { hardware: hw, gpuCount: 1, model });

test('--quantization fp8 on a Volta (SM 7.0) datasheet GPU is refused with vLLM\'s reason; on a Turing (7.5) one it loads weight-only', (t) => {
  const volta = datasheet(t, 'volta-32', 7.0, 32);
  const turing = datasheet(t, 'turing-16', 7.5, 16);
  const llama = catalog.model('llama-3.1-8b');
  const refused = check(volta, llama, { quantization: 'fp8' });
  assert.equal(refused?.rule, 'C20');
  assert.match(refused.message, /^ValueError: The quantization method fp8 is not supported for the current GPU\. Minimum capability: 75\. Current capability: 70\./);
  // The same model unquantized starts its validation on the same GPU: the method, not the GPU, is refused.
  assert.equal(check(volta, llama), null);
  assert.equal(check(turing, llama, { quantization: 'fp8' }), null);
  // Turing has no fp8 tensor cores: its fp8 is weight-only (W8A16), priced at its bf16 rate.
  assert.equal(fp8Compute(resolveConfig({ quantization: 'fp8' }, turing, llama), turing, llama), false);
  // Through the whole start-up on the Turing card: it starts, the weights at a byte each.
  const start = startupCheck({ quantization: 'fp8', max_model_len: 4096 }, { hardware: turing, gpuCount: 1, model: llama });
  assert.ok(start.ok, start.ok ? '' : start.failure.message);
});

test('a checkpoint\'s own method sets the floor: fp8 7.5, ModelOpt FP8 8.0, MXFP4 8.0, compressed-tensors 7.5 from its scheme check', (t) => {
  const volta = datasheet(t, 'volta-32b', 7.0, 32);
  const turing = datasheet(t, 'turing-16b', 7.5, 16);
  const a100 = catalog.gpu('A100-80GB');
  const qwenFp8 = catalog.model('qwen3-32b-fp8');
  assert.equal(loadedQuantMethod(resolveConfig({}, a100, qwenFp8), qwenFp8), 'fp8');
  assert.match(check(volta, qwenFp8)?.message ?? '', /quantization method fp8 .* Minimum capability: 75\. Current capability: 70\./);
  const modelopt = catalog.model('llama-3.1-8b-fp8');
  const c20 = check(turing, modelopt);
  assert.equal(c20?.rule, 'C20');
  assert.match(c20.message, /quantization method modelopt .* Minimum capability: 80\. Current capability: 75\./);
  assert.equal(check(a100, modelopt), null, 'A100 (8.0) loads a ModelOpt FP8 checkpoint weight-only');
  const gptOss = catalog.model('gpt-oss-20b');
  assert.match(check(turing, gptOss)?.message ?? '', /quantization method mxfp4 .* Minimum capability: 80\./);
  assert.equal(check(a100, gptOss), null);
  // An llm-compressor FP8 checkpoint: compressed-tensors' config passes (7.0), its scheme check refuses.
  const ct: ModelSpec = { ...catalog.model('llama-3.1-8b'), id: 'llama-ct-fp8', native_quantization: 'fp8', quantization_method: 'compressed-tensors' };
  assert.equal(check(volta, ct)?.message.startsWith("RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 75. ', 'Current capability: 70.')"), true);
  assert.equal(check(turing, ct), null);
});

test('no capability to compare: a ROCm part and a datasheet that leaves it unknown are not checked', () => {
  const mi300 = catalog.gpu('MI300X');
  assert.equal(mi300.platform, 'rocm');
  assert.equal(check(mi300, catalog.model('llama-3.1-8b'), { quantization: 'fp8' }), null);
  const unknown: Hardware = { ...catalog.gpu('L40S'), id: 'no-cc', compute_capability: null };
  assert.equal(check(unknown, catalog.model('llama-3.1-8b'), { quantization: 'fp8' }), null);
});
