import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerConfig } from '../../src/domain/index.js';
import { resolveConfig } from '../../src/physics/index.js';
import { loadSpace, MEMORY_FUNCTIONS, memoryFacts } from '../../src/space/index.js';
import { createRng } from '../../src/util/rng.js';
import { ctxOf, VLLM_SPACE } from './helpers.js';

const space = loadSpace(VLLM_SPACE);

test('each memory built-in depends only on the knobs it declares (checked against the simulator)', () => {
  const ctx = ctxOf('A100-80GB', 4, 'llama-3.1-70b');
  const rng = createRng(4);
  const samples = space.sample(40, rng, ctx);
  for (const [name, fn] of Object.entries(MEMORY_FUNCTIONS)) {
    const declared: readonly string[] = fn.reads;
    for (const c of samples) {
      const full = memoryFacts(c, ctx)[fn.field];
      const sub: Record<string, unknown> = {};
      for (const r of declared) if ((c as Record<string, unknown>)[r] !== undefined) sub[r] = (c as Record<string, unknown>)[r];
      // With every other knob at its default the value must not move.
      assert.equal(memoryFacts(sub as ServerConfig, ctx)[fn.field], full, `${name} reads more than ${declared.join(', ')}`);
    }
  }
});

test('defaultsFor agrees with the simulator resolving an empty config, on every GPU', () => {
  for (const gpu of ['A100-40GB', 'A100-80GB', 'H100-SXM', 'H200', 'L40S', 'L4', 'MI300X']) {
    const ctx = ctxOf(gpu, 1, 'llama-3.1-8b');
    const d = space.defaultsFor(ctx);
    const r = resolveConfig({}, ctx.hardware, ctx.model) as Record<string, unknown>;
    for (const [k, v] of Object.entries(d)) assert.equal(v, r[k], `${gpu}: ${k}`);
  }
});
