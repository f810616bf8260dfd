import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerConfig } from '../../src/domain/index.js';
import { resolveConfig } from '../../src/physics/index.js';
import { loadSpace, MEMORY_FUNCTIONS, memoryFacts, memoryReads, type MemoryFunctionName } from '../../src/space/index.js';
import { createRng } from '../../src/util/rng.js';
import { ctxOf, VLLM_SPACE } from './helpers.js';

const space = loadSpace(VLLM_SPACE);

test('each memory built-in depends only on the knobs it declares for the model (checked against the simulator)', () => {
  // A dense model (its memory ignores DP and EP) and an MoE model (its experts shard over DP × TP), both with DP on the grid.
  for (const ctx of [ctxOf('A100-80GB', 4, 'llama-3.1-70b'), ctxOf('A100-40GB', 8, 'mixtral-8x7b')]) {
    const rng = createRng(4);
    const samples = space.sample(40, rng, ctx);
    assert.ok(new Set(samples.map((c) => c.data_parallel_size)).size > 1, `${ctx.model.id}: the samples vary data_parallel_size`);
    for (const name of Object.keys(MEMORY_FUNCTIONS) as MemoryFunctionName[]) {
      const declared = memoryReads(name, ctx.model);
      const field = MEMORY_FUNCTIONS[name].field;
      for (const c of samples) {
        const full = memoryFacts(c, ctx)[field];
        const sub: Record<string, unknown> = {};
        for (const r of declared) if ((c as Record<string, unknown>)[r] !== undefined) sub[r] = (c as Record<string, unknown>)[r];
        // With every other knob at its default the value must not move.
        assert.equal(memoryFacts(sub as ServerConfig, ctx)[field], full, `${ctx.model.id}: ${name} reads more than ${declared.join(', ')}`);
      }
    }
  }
});

test('a dense model\'s memory built-ins do not read DP or EP; an MoE model\'s weights do', () => {
  const dense = ctxOf('H100-SXM', 8, 'llama-3.1-8b').model;
  const moe = ctxOf('H100-SXM', 8, 'qwen3-30b-a3b').model;
  for (const name of Object.keys(MEMORY_FUNCTIONS) as MemoryFunctionName[]) {
    assert.ok(!memoryReads(name, dense).some((r) => r === 'data_parallel_size' || r === 'enable_expert_parallel'), name);
    assert.deepEqual(memoryReads(name, moe), MEMORY_FUNCTIONS[name].reads, name);
  }
  assert.ok(memoryReads('weights_gib', moe).includes('data_parallel_size') && memoryReads('weights_gib', moe).includes('enable_expert_parallel'));
});

test('defaultsFor agrees with the simulator resolving an empty config, on every GPU', () => {
  for (const gpu of ['A100-40GB', 'A100-80GB', 'H100-SXM', 'H200', 'L40S', 'L4', 'MI300X']) {
    const ctx = ctxOf(gpu, 1, 'llama-3.1-8b');
    const d = space.defaultsFor(ctx);
    const r = resolveConfig({}, ctx.hardware, ctx.model) as Record<string, unknown>;
    for (const [k, v] of Object.entries(d)) assert.equal(v, r[k], `${gpu}: ${k}`);
  }
});
