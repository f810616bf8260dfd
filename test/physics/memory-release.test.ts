import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkMemory, cudagraphsInBudget, memoryModel, resolveConfig, startupCheck } from '../../src/physics/index.js';
import { catalog } from '../sim/helpers.js';

// vLLM 0.21 made its CUDA-graph memory profile the default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1):
// the graphs' estimate comes off the KV cache inside gpu_memory_utilization, where earlier releases
// captured them afterwards in the 1 − utilization headroom.

const hw = catalog.gpu('H100-SXM');
const model = catalog.model('llama-3.1-8b');

test('from 0.21 the graphs come off the KV cache and no longer out of the headroom; before it, and with no release named, nothing moves', () => {
  const r = resolveConfig({}, hw, model);
  const none = memoryModel(r, hw, model);
  const old = memoryModel(r, hw, model, '0.20.2');
  const now = memoryModel(r, hw, model, '0.21.0');
  assert.deepEqual(old, none);
  assert.equal(none.cudagraphInBudget, false);
  assert.equal(now.cudagraphInBudget, true);
  assert.ok(now.cudagraphGib > 0);
  assert.equal(now.cudagraphGib, none.cudagraphGib);
  assert.ok(Math.abs(none.kvGibPerGpu - now.kvGibPerGpu - now.cudagraphGib) < 1e-9, `${none.kvGibPerGpu} → ${now.kvGibPerGpu}`);
  assert.ok(Math.abs(now.headroomGib - none.headroomGib - now.cudagraphGib) < 1e-9);
  assert.ok(now.numBlocks < none.numBlocks);
  // A git tag and a later minor count as the release they name; an unnumbered build is a current one.
  assert.equal(memoryModel(r, hw, model, 'v0.27.1').kvGibPerGpu, now.kvGibPerGpu);
  assert.equal(cudagraphsInBudget('nightly'), true);
  assert.equal(cudagraphsInBudget('0.14.1'), false);
  assert.equal(cudagraphsInBudget(undefined), false);
  // Eager mode captures no graphs: every release sizes the same cache.
  const eager = resolveConfig({ enforce_eager: true }, hw, model);
  assert.equal(memoryModel(eager, hw, model, '0.21.0').kvGibPerGpu, memoryModel(eager, hw, model).kvGibPerGpu);
});

test('at gpu_memory_utilization 0.99 the graphs no longer fit outside the pool before 0.21 (C14); from 0.21 they are inside it and the server starts', () => {
  const config = { gpu_memory_utilization: 0.99 };
  const r = resolveConfig(config, hw, model);
  const ctx = { hardware: hw, gpuCount: 1, model };
  assert.equal(checkMemory(r, ctx)?.rule, 'C14');
  assert.equal(checkMemory(r, { ...ctx, vllmVersion: '0.20.0' })?.rule, 'C14');
  assert.equal(checkMemory(r, { ...ctx, vllmVersion: '0.21.0' }), null);
  const start = startupCheck(config, { ...ctx, vllmVersion: '0.21.0' });
  assert.ok(start.ok);
  assert.equal(start.memory.cudagraphInBudget, true);
  assert.ok(start.memory.headroomGib >= 0);
});

test('from 0.21 a pool too small for weights, activations and graphs is C12, naming the graphs', () => {
  // Find the utilization at which the 0.21 cache is empty but the pre-0.21 one is not: the graphs make the difference.
  const ctx = { hardware: hw, gpuCount: 1, model };
  const at = (u: number) => resolveConfig({ gpu_memory_utilization: u, enforce_eager: false }, hw, model);
  let u = 0.2;
  while (memoryModel(at(u), hw, model, '0.21.0').numBlocks <= 0 && u < 1) u = Math.round((u + 0.001) * 1000) / 1000;
  const r = at(u - 0.001);
  assert.ok(memoryModel(r, hw, model, '0.21.0').numBlocks <= 0);
  assert.ok(memoryModel(r, hw, model).numBlocks > 0, 'the old model still has blocks');
  const failure = checkMemory(r, { ...ctx, vllmVersion: '0.21.0' });
  assert.equal(failure?.rule, 'C12');
  assert.match(failure.message, /GiB of CUDA graphs out of/);
});
