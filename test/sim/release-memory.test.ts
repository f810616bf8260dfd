import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulate } from '../../src/sim/index.js';
import { catalog, fixed } from './helpers.js';

// vLLM 0.21 profiles the CUDA graphs inside gpu_memory_utilization's share (physics/memory.ts): the
// simulated server of that release has a smaller KV cache and reserves no memory on top of its share.
test('a simulated run of vLLM 0.21 budgets its CUDA graphs inside the requested memory; 0.20 on top of it', () => {
  const run = (vllmVersion: string): { kvTokens: number; reservedGib: number } => {
    const out = simulate({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: fixed(256, 32, { kind: 'burst' }, 8), seed: 1, vllmVersion, runtimeFailures: false });
    assert.ok(out.ok);
    const m = out.result.server_metrics;
    assert.ok(m !== null && m !== undefined && m.kv_cache_capacity_tokens !== null && m.gpu_memory_reserved_gib !== null);
    return { kvTokens: m.kv_cache_capacity_tokens, reservedGib: m.gpu_memory_reserved_gib };
  };
  const before = run('0.20.2');
  const after = run('0.21.0');
  assert.ok(after.kvTokens < before.kvTokens, `${after.kvTokens} < ${before.kvTokens}`);
  assert.ok(after.reservedGib < before.reservedGib);
  // In budget the reservation is gpu_memory_utilization's share itself (0.9 of what the GPU shows).
  const share = 0.9 * catalog.gpu('H100-SXM').memory_visible_gib;
  assert.ok(Math.abs(after.reservedGib - share) < 0.01, `${after.reservedGib} against ${share}`);
});
