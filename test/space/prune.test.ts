import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startupCheck } from '../../src/physics/index.js';
import { simulate } from '../../src/sim/index.js';
import { loadSpace } from '../../src/space/index.js';
import { createRng } from '../../src/util/rng.js';
import { ctxOf, fixture, VLLM_SPACE } from './helpers.js';

const longPrompts = { name: 'long', input_len: { dist: 'uniform', min: 1000, max: 6000 }, output_len: { dist: 'fixed', value: 200 }, arrival: { kind: 'closed', concurrency: 8 }, num_prompts: 16 } as const;

test('prune counts equal a brute-force first-match count over every point (small space)', () => {
  const s = loadSpace(fixture('small.yaml'));
  const ctx = ctxOf('H100-SXM', 2, 'llama-3.1-8b');
  const brute = new Map<string, number>();
  let kept = 0;
  for (const c of s.enumerate(ctx)) {
    const v = s.isFeasible(c, ctx);
    if (v.ok) kept++;
    else brute.set(v.rule ?? '', (brute.get(v.rule ?? '') ?? 0) + 1);
  }
  const r = s.prune(ctx);
  assert.equal(r.attribution, 'first-match');
  assert.equal(r.points_before, s.size(ctx));
  assert.equal(r.points_after, kept);
  for (const rule of r.rules) assert.equal(rule.removed, brute.get(rule.id) ?? 0, rule.id);
  assert.ok(r.rules.every((x) => x.removed > 0), 'every rule of the fixture removes something');
  const feasible = [...s.enumerateFeasible(ctx)];
  assert.equal(feasible.length, kept);
  assert.deepEqual(feasible, [...s.enumerate(ctx)].filter((c) => s.isFeasible(c, ctx).ok), 'same points, same order');
});

test('prune on 70B/2×A100-80GB: memory rules remove points, and sampled kept points start', () => {
  const s = loadSpace(VLLM_SPACE);
  const ctx = ctxOf('A100-80GB', 2, 'llama-3.1-70b', longPrompts);
  const r = s.prune(ctx);
  const mem = r.rules.filter((x) => x.kind === 'memory').reduce((a, x) => a + x.removed, 0);
  assert.ok(mem > 0, 'memory rules remove configurations of a 70B model on two 80 GB parts');
  for (const c of s.sample(40, createRng(5), ctx)) assert.ok(startupCheck(c, ctx).ok, JSON.stringify(c));
});

test('C16: a config that starts but cannot hold the longest request has those requests rejected', () => {
  const s = loadSpace(VLLM_SPACE);
  const ctx = ctxOf('H100-SXM', 1, 'llama-3.1-8b', { name: 'long', input_len: { dist: 'uniform', min: 1000, max: 6000 }, output_len: { dist: 'fixed', value: 200 }, arrival: { kind: 'closed', concurrency: 8 }, num_prompts: 16 });
  const config = s.complete({ max_model_len: 4096 }, ctx);
  const v = s.isFeasible(config, ctx);
  assert.equal(v.rule, 'C16');
  assert.ok(startupCheck(config, ctx).ok, 'it starts');
  const run = simulate({ config, hardware: { gpu: 'H100-SXM', count: 1 }, model: ctx.model, workload: ctx.workload, seed: 3 });
  assert.ok(run.ok);
  assert.ok(run.result.failed > 0 && run.result.completed > 0, `failed ${run.result.failed}, completed ${run.result.completed}`);
  const fits = simulate({ config: { ...config, max_model_len: 8192 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: ctx.model, workload: ctx.workload, seed: 3 });
  assert.ok(fits.ok && fits.result.failed === 0, 'at 8192 every request is served');
});
