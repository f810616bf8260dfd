import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { kvBytesPerToken } from '../../src/domain/index.js';

test('the catalog holds the GPUs and models the issues name, each with a source', () => {
  const c = defaultCatalog();
  for (const id of ['A100-40GB', 'A100-80GB', 'H100-SXM', 'H100-PCIe', 'H200', 'L40S', 'L4', 'MI300X']) {
    assert.ok(c.gpu(id).source.length > 0, id);
  }
  for (const id of ['llama-3.1-8b', 'llama-3.1-70b', 'llama-3.2-1b', 'llama-3.2-3b', 'qwen2.5-7b', 'qwen2.5-72b', 'mistral-7b', 'mixtral-8x7b']) {
    assert.ok(c.model(id).source.length > 0, id);
  }
});

test('lookups accept aliases and Hugging Face names, case-insensitively', () => {
  const c = defaultCatalog();
  assert.equal(c.gpu('h100').id, 'H100-SXM');
  assert.equal(c.gpu('a100_80gb').id, 'A100-80GB');
  assert.equal(c.model('meta-llama/Llama-3.1-8B-Instruct').id, 'llama-3.1-8b');
});

test('unknown names fail with the catalog code and list what is known', () => {
  const c = defaultCatalog();
  assert.throws(() => c.gpu('V100'), (e) => isLmBenchError(e, 'LMB_ERR_UNKNOWN_GPU') && /H100-SXM/.test(e.message));
  assert.throws(() => c.model('gpt-5'), (e) => isLmBenchError(e, 'LMB_ERR_UNKNOWN_MODEL'));
  // findGpu answers the same lookup without throwing: the GPU gpu() returns, or null where it throws.
  assert.equal(c.findGpu('V100'), null);
  assert.equal(c.findGpu('NVIDIA H100 80GB HBM3'), c.gpu('h100'));
});

test('KV bytes per token match docs/references/vllm-engine.md#kv-bytes-per-token (bf16, whole model)', () => {
  const c = defaultCatalog();
  const kib = (id: string) => kvBytesPerToken(c.model(id), 2) / 1024;
  assert.equal(kib('llama-3.1-8b'), 128);
  assert.equal(kib('llama-3.2-1b'), 32);
  assert.equal(kib('qwen2.5-7b'), 56);
  assert.equal(kib('llama-3.1-70b'), 320);
});
