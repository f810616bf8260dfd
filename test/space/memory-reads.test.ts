import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSpace, MEMORY_FUNCTIONS, memoryFacts, type SpaceContext } from '../../src/space/index.js';
import type { BoundSpace } from '../../src/space/bound.js';
import { createRng, type Rng } from '../../src/util/rng.js';
import { ctxOf, spaceEditor, VLLM_SPACE } from './helpers.js';

/**
 * The memory rules' tables are built over the knobs the rule reads in the bound context: a dense
 * model's memory ignores data_parallel_size and enable_expert_parallel (only an MoE model's experts
 * shard over DP × TP), so its C12/C13 tables lose the DP grid. Verdicts must not change.
 */

const DENSE = ctxOf('A100-40GB', 4, 'llama-3.1-70b');
const MOE = ctxOf('A100-40GB', 8, 'mixtral-8x7b');
const EXPERT_KNOBS = ['data_parallel_size', 'enable_expert_parallel'];

const tableKnobs = (b: BoundSpace, id: string): string[] => {
  const t = b.tables.find((x) => x.rule.id === id);
  assert.ok(t !== undefined, `rule ${id} in the space`);
  return t.reads.map((p) => b.def.knobs[p]?.knob.name ?? '');
};

test('a dense model\'s memory-rule tables have no DP or EP dimension; C1 and an MoE model\'s keep them', () => {
  const space = loadSpace(VLLM_SPACE);
  const dense = space.bind(ctxOf('H100-SXM', 8, 'llama-3.1-8b'));
  for (const id of ['C12', 'C13', 'C14']) {
    const knobs = tableKnobs(dense, id);
    assert.ok(knobs.length > 0, id);
    for (const k of EXPERT_KNOBS) assert.ok(!knobs.includes(k), `${id} on a dense model reads ${k}: ${knobs.join(', ')}`);
  }
  // A rule naming config.data_parallel_size reads it whatever the model.
  assert.ok(tableKnobs(dense, 'C1').includes('data_parallel_size'));
  const moe = space.bind(ctxOf('H100-SXM', 8, 'qwen3-30b-a3b'));
  for (const id of ['C12', 'C13']) for (const k of EXPERT_KNOBS) assert.ok(tableKnobs(moe, id).includes(k), `${id} on an MoE model reads ${k}`);
  // The space's own listing (no context) keeps the reads for any model.
  for (const k of EXPERT_KNOBS) assert.ok(space.rules.find((r) => r.id === 'C12')?.reads.includes(k), k);
});

test('a dense model\'s memory-rule evaluations do not grow with the DP grid', () => {
  const edit = spaceEditor('lmb-mem-reads-');
  const pinned = edit('dp1.yaml', 'grid: [1, 2, 4, 8, replica_counts]', 'grid: [1]');
  const memoryEvals = (file: string, ctx: SpaceContext): { evals: number; removed: Map<string, number> } => {
    const space = loadSpace(file);
    const b = space.bind(ctx);
    const r = space.prune(ctx);
    assert.equal(r.method, 'exact');
    let evals = 0;
    for (const t of b.tables) {
      if (t.rule.kind !== 'memory') continue;
      evals += t.cells instanceof Uint8Array ? t.cells.reduce((a, x) => a + (x === 0 ? 0 : 1), 0) : t.cells.size;
    }
    return { evals, removed: new Map(r.rules.map((x) => [x.id, x.removed])) };
  };
  const full = memoryEvals(VLLM_SPACE, DENSE);
  const one = memoryEvals(pinned, DENSE);
  assert.ok(one.evals > 0);
  // Every replica count sees the same memory per GPU: one evaluation per combination of the other knobs.
  assert.equal(full.evals, one.evals, 'memory-rule evaluations with DP 1..4 and with DP pinned to 1');
  assert.ok((full.removed.get('C12') ?? 0) > 0, 'C12 removes points of a 70B model on 4×A100-40GB');
});

/** A uniform grid point (conditional knobs drawn only when active). */
function drawPoint(b: BoundSpace, rng: Rng): number[] {
  const point: number[] = [];
  for (let k = 0; k < b.options.length; k++) {
    const size = b.options[k]?.length ?? 1;
    point.push(b.conditional[k] === true ? (b.isActive(k, point) ? 1 + rng.int(size - 1) : 0) : rng.int(size));
  }
  return point;
}

/** The first rule a point breaks, every rule run on the whole config with the simulator's memory facts of the whole config (no tables, no caches). */
function referenceRule(b: BoundSpace, ctx: SpaceContext, point: readonly number[]): string | undefined {
  const config = b.celConfig(point, b.def.knobs.map((_, i) => i));
  const facts = memoryFacts(b.configOf(point), ctx);
  b.def.engine.setMemory((fn) => facts[MEMORY_FUNCTIONS[fn].field]);
  return b.tables.find((t) => t.rule.compiled.run({ ...b.vars, config }) !== true)?.rule.id;
}

test('verdicts on sampled points match every rule run on the whole config (dense and MoE, DP on the grid)', () => {
  for (const ctx of [DENSE, MOE]) {
    const b = loadSpace(VLLM_SPACE).bind(ctx);
    const rng = createRng(11);
    const broken = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const point = drawPoint(b, rng);
      const v = b.checkPoint(point);
      const want = referenceRule(b, ctx, point);
      assert.equal(v.ok ? undefined : v.rule, want, `${ctx.model.id}: ${JSON.stringify(b.configOf(point))}`);
      if (want !== undefined) broken.set(want, (broken.get(want) ?? 0) + 1);
    }
    // The sample reaches the memory rules, not only the static ones.
    assert.ok((broken.get('C12') ?? 0) > 0, `${ctx.model.id}: sampled points break C12 (${JSON.stringify([...broken])})`);
  }
});
