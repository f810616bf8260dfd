import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerConfig } from '../../src/domain/index.js';
import { startupCheck } from '../../src/physics/index.js';
import { simulate } from '../../src/sim/index.js';
import { loadSpace, type SearchSpace, type SpaceContext } from '../../src/space/index.js';
import { createRng, type Rng } from '../../src/util/rng.js';
import { ctxOf, VLLM_SPACE } from './helpers.js';

/** A uniformly random grid point of the bound space. */
function randomConfig(s: SearchSpace, ctx: SpaceContext, rng: Rng): ServerConfig {
  const b = s.bind(ctx);
  const point: number[] = [];
  for (let k = 0; k < b.options.length; k++) {
    const size = b.options[k]?.length ?? 1;
    if (b.conditional[k] === true) point.push(b.isActive(k, point) ? 1 + rng.int(size - 1) : 0);
    else point.push(rng.int(size));
  }
  return b.configOf(point);
}

// The key test: every point a rule removes really fails in the simulator, every kept point starts.
const longPrompts = { name: 'long', input_len: { dist: 'uniform', min: 1000, max: 6000 }, output_len: { dist: 'fixed', value: 200 }, arrival: { kind: 'closed', concurrency: 8 }, num_prompts: 16 } as const;
const base = ctxOf('H100-SXM', 8, 'llama-3.1-8b');
// A made-up model: 12 KV heads break C3 at TP 8, a 1002-wide MLP breaks C4 at TP 4 (no catalog model does).
const odd: SpaceContext = { ...base, model: { ...base.model, id: 'odd-8b', num_attention_heads: 24, num_kv_heads: 12, intermediate_size: 1002 } };
// A made-up MoE model: 772-wide experts break C17 at 8 ranks without expert parallelism.
const moeBase = ctxOf('H100-SXM', 8, 'qwen3-30b-a3b');
const oddMoe: SpaceContext = { ...moeBase, model: { ...moeBase.model, id: 'odd-moe', moe: { experts: 128, top_k: 8, shared_experts: 0, expert_intermediate_size: 772 } } };
const contexts: [string, SpaceContext][] = [
  ['8B on 8×H100, chat', base],
  ['70B on 4×A100-40GB, long prompts', ctxOf('A100-40GB', 4, 'llama-3.1-70b', longPrompts)],
  ['Qwen2.5-7B on 2×L40S, chat', ctxOf('L40S', 2, 'qwen2.5-7b')],
  ['Qwen2.5-7B on 8×MI300X, long prompts', ctxOf('MI300X', 8, 'qwen2.5-7b', longPrompts)],
  ['odd heads on 8×H100', odd],
  ['gpt-oss-120b on 8×H100, chat', ctxOf('H100-SXM', 8, 'gpt-oss-120b')],
  ['Qwen3-30B-A3B-FP8 on 8×H100, chat', ctxOf('H100-SXM', 8, 'qwen3-30b-a3b-fp8')],
  ['odd experts on 8×H100', oddMoe],
];
const seenRules = new Set<string>();

for (const [name, ctx] of contexts) {
  test(`removed points fail to start (or have requests rejected), kept points start: ${name}`, () => {
    const s = loadSpace(VLLM_SPACE);
    const rng = createRng(20261202);
    const byRule = new Map<string, number>();
    let keptSeen = 0;
    const rejectedC16: ServerConfig[] = [];
    // Up to 12 removed points per rule and 40 kept ones out of 3000 uniform draws.
    for (let i = 0; i < 3000; i++) {
      const config = randomConfig(s, ctx, rng);
      const v = s.isFeasible(config, ctx);
      const rule = v.ok ? 'kept' : (v.rule ?? '');
      const seen = byRule.get(rule) ?? 0;
      if (seen >= (v.ok ? 40 : 12)) continue;
      byRule.set(rule, seen + 1);
      const start = startupCheck(config, ctx);
      if (v.ok) {
        keptSeen++;
        assert.ok(start.ok, `kept but fails to start: ${JSON.stringify(config)}: ${start.ok ? '' : start.failure.message}`);
        continue;
      }
      seenRules.add(rule);
      if (rule === 'C16') {
        if (start.ok) rejectedC16.push(config);
        continue;
      }
      assert.ok(!start.ok, `removed by ${rule} but starts: ${JSON.stringify(config)}`);
    }
    // Feasible samples as well: the random draws rarely land in a small feasible region.
    for (const config of s.sample(30, rng, ctx)) {
      keptSeen++;
      const start = startupCheck(config, ctx);
      assert.ok(start.ok, `sampled but fails to start: ${JSON.stringify(config)}: ${start.ok ? '' : start.failure.message}`);
    }
    assert.ok(keptSeen >= 30, `saw ${keptSeen} kept points`);
    assert.ok(byRule.size >= 3, `saw removals by ${[...byRule.keys()].join(', ')}`);
    // C16 removes configs that start but reject the workload's longest requests: simulate one.
    for (const config of rejectedC16.slice(0, 1)) {
      const run = simulate({ config, hardware: { gpu: ctx.hardware.id, count: ctx.gpuCount }, model: ctx.model, workload: ctx.workload, seed: 1 });
      assert.ok(run.ok);
      assert.ok(run.result.failed > 0, `C16 config served every request: ${JSON.stringify(config)}`);
    }
  });
}

test('the samples above covered every rule that can fire with these models', () => {
  for (const id of ['C1', 'C2', 'C3', 'C4', 'C6', 'C7', 'C11', 'C12', 'C13', 'C14', 'C16', 'C17', 'C18', 'C19']) assert.ok(seenRules.has(id), `no removed sample for ${id}`);
});

