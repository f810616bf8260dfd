import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerConfig } from '../../src/domain/index.js';
import { latinHypercube, loadSpace } from '../../src/space/index.js';
import { createRng } from '../../src/util/rng.js';
import { ctxOf, fixture, VLLM_SPACE } from './helpers.js';

const space = loadSpace(VLLM_SPACE);
const ctx = ctxOf('A100-80GB', 4, 'llama-3.1-70b');

test('enumeration yields exactly size() distinct points, in a fixed order, conditional knobs only where active', () => {
  const s = loadSpace(fixture('small.yaml'));
  const c = ctxOf('H100-SXM', 2, 'llama-3.1-8b');
  const all = [...s.enumerate(c)];
  // 3 TP × 4 seqs × 2 budgets × (eager: 1 + graphs: 3 capture sizes) × 2 dtypes × 3 utilisations
  assert.equal(s.size(c), 3 * 4 * 2 * (1 + 3) * 2 * 3);
  assert.equal(all.length, s.size(c));
  assert.equal(new Set(all.map((x) => JSON.stringify(x))).size, all.length);
  assert.deepEqual(all[0], { tensor_parallel_size: 1, max_num_seqs: 16, max_num_batched_tokens: 64, enforce_eager: false, max_cudagraph_capture_size: 128, kv_cache_dtype: 'auto', gpu_memory_utilization: 0.8 });
  assert.ok(all.every((x) => (x.enforce_eager === true) === (x.max_cudagraph_capture_size === undefined)));
  // Without a context `native` is left out and expert parallelism (two values) applies on the 15 of
  // 16 (TP, DP) pairs with more than one rank.
  const perLayout = 10 * 9 * 4 * 15 * 2 * 2 * 3 * 2 * 5 * 5;
  assert.equal(space.size(), perLayout * (1 + 15 * 2));
  const first = space.enumerate(ctx).next().value as ServerConfig;
  assert.equal(first.tensor_parallel_size, 1);
});

test('Latin hypercube: every stratum of every dimension used exactly once', () => {
  const pts = latinHypercube(50, 4, createRng(3));
  for (let d = 0; d < 4; d++) {
    const strata = pts.map((p) => Math.floor((p[d] ?? 0) * 50)).sort((a, b) => a - b);
    assert.deepEqual(strata, Array.from({ length: 50 }, (_, i) => i));
  }
});

test('sample: deterministic per seed, distinct, all feasible, and spread over the feasible values', () => {
  const a = space.sample(60, createRng(7), ctx);
  const b = space.sample(60, createRng(7), ctx);
  const c = space.sample(60, createRng(8), ctx);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  assert.equal(a.length, 60);
  assert.equal(new Set(a.map((x) => JSON.stringify(x))).size, 60);
  for (const x of a) assert.ok(space.isFeasible(x, ctx).ok, JSON.stringify(x));
  const utils = new Set(a.map((x) => x.gpu_memory_utilization));
  assert.ok(utils.size >= 8, `spread over ${utils.size} utilisations`);
  assert.ok(new Set(a.map((x) => x.kv_cache_dtype)).size === 3);
});

test('mutate: a feasible neighbour that differs in one or two knobs (plus a conditional knob following its parent)', () => {
  const rng = createRng(11);
  let config = space.sample(1, createRng(1), ctx)[0] ?? {};
  for (let i = 0; i < 100; i++) {
    const next = space.mutate(config, rng, ctx);
    assert.ok(space.isFeasible(next, ctx).ok);
    const keys = new Set([...Object.keys(config), ...Object.keys(next)]);
    const changed = [...keys].filter((k) => (config as Record<string, unknown>)[k] !== (next as Record<string, unknown>)[k]);
    const moved = changed.filter((k) => k !== 'max_cudagraph_capture_size' || !changed.includes('enforce_eager'));
    assert.ok(moved.length >= 1 && moved.length <= 2, `changed ${changed.join(', ')}`);
    config = next;
  }
});

test('neighbours: exactly the feasible points one knob one grid step away, as a brute force over the enumerated space finds them', () => {
  const s = loadSpace(fixture('small.yaml'));
  const c = ctxOf('H100-SXM', 2, 'llama-3.1-8b');
  const b = s.bind(c);
  // The enumeration is the whole grid; the neighbourhood keeps to what the rules accept.
  const all = [...s.enumerate(c)].filter((x) => s.isFeasible(x, c).ok);
  const defaults = b.pointOf(s.defaultsFor(c)) ?? [];
  const categorical = b.def.knobs.map((k) => k.knob.type === 'categorical');
  for (const from of [all[0], all[Math.floor(all.length / 2)], all[all.length - 1]] as ServerConfig[]) {
    const p0 = b.pointOf(from) ?? [];
    const brute = all.filter((cfg) => {
      const p = b.pointOf(cfg) ?? [];
      const moved = p.map((v, k) => k).filter((k) => b.conditional[k] !== true && p[k] !== p0[k]);
      if (moved.length !== 1) return false;
      const k = moved[0] as number;
      if (!categorical[k] && Math.abs((p[k] ?? 0) - (p0[k] ?? 0)) !== 1) return false;
      // A conditional knob keeps its value while active, takes its default on becoming active, and is unset when inactive.
      return p.every((v, j) => b.conditional[j] !== true || v === (b.isActive(j, p) ? ((p0[j] ?? 0) > 0 ? p0[j] : Math.max(1, defaults[j] ?? 1)) : 0));
    });
    const got = s.neighbours(from, c);
    assert.ok(got.length > 0);
    assert.deepEqual(new Set(got.map((x) => JSON.stringify(x))), new Set(brute.map((x) => JSON.stringify(x))));
  }
});

test('feasibleMask over 100k candidates agrees with isFeasible', () => {
  const b = space.bind(ctx);
  const rng = createRng(99);
  const configs: ServerConfig[] = [];
  for (let i = 0; i < 100_000; i++) {
    const point: number[] = [];
    for (let k = 0; k < b.options.length; k++) {
      const size = b.options[k]?.length ?? 1;
      point.push(b.conditional[k] === true ? (b.isActive(k, point) ? 1 + rng.int(size - 1) : 0) : rng.int(size));
    }
    configs.push(b.configOf(point));
  }
  const mask = space.feasibleMask(configs, ctx);
  assert.equal(mask.length, 100_000);
  const feasible = mask.reduce((a, x) => a + x, 0);
  assert.ok(feasible > 0 && feasible < 100_000);
  for (let i = 0; i < 100_000; i += 997) assert.equal(mask[i] === 1, space.isFeasible(configs[i] ?? {}, ctx).ok);
});
