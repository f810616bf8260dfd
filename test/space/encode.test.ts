import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSpace } from '../../src/space/index.js';
import { createRng } from '../../src/util/rng.js';
import { ctxOf, fixture, VLLM_SPACE } from './helpers.js';

const space = loadSpace(VLLM_SPACE);
const ctx = ctxOf('H100-SXM', 8, 'llama-3.1-8b');

test('feature names: log2 for log-scaled knobs, one-hot for categoricals, one column per boolean', () => {
  const names = space.featureNames();
  assert.ok(names.includes('log2(max_num_seqs)'));
  assert.ok(names.includes('gpu_memory_utilization'));
  assert.ok(names.includes('kv_cache_dtype=fp8_e5m2'));
  assert.ok(names.includes('enforce_eager'));
  assert.equal(names.length, 17);
  assert.ok(names.includes('enable_expert_parallel'));
  const v = space.encode(space.defaultsFor(ctx));
  assert.equal(v.length, names.length);
  assert.equal(v[names.indexOf('log2(max_num_seqs)')], 10);
  assert.equal(v[names.indexOf('kv_cache_dtype=auto')], 1);
  assert.equal(v[names.indexOf('kv_cache_dtype=fp8_e4m3')], 0);
});

test('round trip: decode(encode(c)) = c for seeded random configs of the space (with and without a context)', () => {
  const b = space.bind(ctx);
  const rng = createRng(42);
  for (let i = 0; i < 500; i++) {
    const point: number[] = [];
    for (let k = 0; k < b.options.length; k++) {
      const size = b.options[k]?.length ?? 1;
      point.push(b.conditional[k] === true ? (b.isActive(k, point) ? 1 + rng.int(size - 1) : 0) : rng.int(size));
    }
    const c = b.configOf(point);
    assert.deepEqual(space.decode(space.encode(c), ctx), c);
    assert.deepEqual(space.decode(space.encode(c)), c);
    assert.ok(space.contains(c, ctx));
  }
});

test('an inactive conditional knob encodes as NaN and decodes to absent', () => {
  const c = { ...space.defaultsFor(ctx), enforce_eager: true };
  delete (c as Record<string, unknown>)['max_cudagraph_capture_size'];
  const v = space.encode(c);
  assert.ok(Number.isNaN(v[space.featureNames().indexOf('log2(max_cudagraph_capture_size)')]));
  assert.equal(space.decode(v, ctx).max_cudagraph_capture_size, undefined);
});

test('decode with a context snaps off-grid values to the nearest grid value (in log space)', () => {
  const names = space.featureNames();
  const v = space.encode(space.defaultsFor(ctx));
  v[names.indexOf('log2(max_num_seqs)')] = Math.log2(300);
  v[names.indexOf('gpu_memory_utilization')] = 0.913;
  const d = space.decode(v, ctx);
  assert.equal(d.max_num_seqs, 256);
  assert.equal(d.gpu_memory_utilization, 0.92);
});

test('contains: ranges, steps, categories and symbols', () => {
  const s = loadSpace(fixture('small.yaml'));
  assert.ok(s.contains({ gpu_memory_utilization: 0.85 }));
  assert.ok(!s.contains({ gpu_memory_utilization: 0.86 }));
  assert.ok(!s.contains({ max_num_seqs: 8 }));
  assert.ok(!s.contains({ kv_cache_dtype: 'fp8_e5m2' }));
  assert.ok(space.contains({ max_model_len: 131072 }, ctx));
  assert.ok(space.contains({ kv_cache_dtype: 'fp8' }), 'vLLM spells fp8_e4m3 fp8 too');
  assert.deepEqual(space.encode({ kv_cache_dtype: 'fp8' }), space.encode({ kv_cache_dtype: 'fp8_e4m3' }));
  assert.ok(space.isFeasible({ kv_cache_dtype: 'fp8', max_model_len: 8192 }, ctx).ok);
  assert.ok(!space.contains({ max_model_len: 1000 }, ctx));
});

test('distributions: internal floats are log2 for log knobs, indices for categories, 0/1 for booleans', async () => {
  const { toExternal, toInternal } = await import('../../src/space/index.js');
  const mns = space.knobs.find((k) => k.name === 'max_num_seqs');
  const util = space.knobs.find((k) => k.name === 'gpu_memory_utilization');
  const kv = space.knobs.find((k) => k.name === 'kv_cache_dtype');
  const eager = space.knobs.find((k) => k.name === 'enforce_eager');
  assert.ok(mns && util && kv && eager);
  assert.equal(toInternal(mns, 256), 8);
  assert.equal(toExternal(mns, 8.4), 338);
  assert.equal(toInternal(util, 0.9), 0.9);
  assert.equal(toExternal(util, 0.9049), 0.9, 'rounded to the 0.02 step from 0.70');
  assert.equal(toInternal(kv, 'fp8_e5m2'), 2);
  assert.equal(toExternal(kv, 1.2), 'fp8_e4m3');
  assert.equal(toInternal(eager, true), 1);
  assert.equal(toExternal(eager, 0.4), false);
});
