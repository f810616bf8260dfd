// Tuning efficiency on the simulator: lm-bench's study (surrogate sampler) against random search and
// vLLM auto_tune's grid at the same 15-trial budget, each measured against the best SLO-feasible
// goodput a 2,000-point search of the pruned space finds. Also checks what pruning removes and that
// it keeps the best configurations. Writes bench/results/tune.md.
//
//   node --import tsx bench/tune-efficiency.ts [--seeds 5] [--budget 15] [--reference 2000] [--pairs all|first]
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultCatalog, PROJECT_ROOT } from '../src/catalog/index.js';
import { checkSlo, StudySpec, Workload, type ServerConfig, type Trial } from '../src/domain/index.js';
import { DEFAULT_OBJECTIVES } from '../src/optimize/objectives.js';
import { loadSpace } from '../src/space/index.js';
import { openStore } from '../src/store/index.js';
import { createExecutor } from '../src/targets/executor.js';
import type { TrialInput } from '../src/targets/types.js';
import { runStudy, featureContext } from '../src/tune/study-runner.js';
import { createRng } from '../src/util/rng.js';
import { loadYamlFile } from '../src/util/yaml.js';
import { mannWhitneyGreater, median } from './lib/stats.js';

const { values: argv } = parseArgs({ options: { seeds: { type: 'string' }, budget: { type: 'string' }, reference: { type: 'string' }, pairs: { type: 'string' }, horizon: { type: 'string' }, raw: { type: 'string' } } });
const SEEDS = Number(argv.seeds ?? 5);
const BUDGET = Number(argv.budget ?? 15);
const REFERENCE = Number(argv.reference ?? 2000);
/** How long random search runs to find its own trials-to-95% (it rarely gets there within the budget). */
const HORIZON = Number(argv.horizon ?? 150);
/** Points drawn from the unpruned grid to check that pruning loses no configuration that starts. */
const RAW = Number(argv.raw ?? 1000);

interface Pair {
  readonly name: string;
  readonly gpu: string;
  readonly gpus: number;
  readonly model: string;
  readonly workload: string;
  /** Overrides the workload file's SLO where that one cannot be met on this deployment. */
  readonly slo?: Record<string, number>;
}
const PAIRS: Pair[] = [
  { name: 'Llama-3.1-8B, 8×H100-SXM, chat', gpu: 'H100-SXM', gpus: 8, model: 'llama-3.1-8b', workload: 'chat' },
  // The chat SLO (TTFT p99 ≤ 350 ms, ITL p99 ≤ 50 ms) is out of reach for 70B at 64 users on 4 GPUs
  // (no feasible point among 2,000); this pair asks for p99 TTFT ≤ 1.5 s and p99 ITL ≤ 80 ms.
  { name: 'Llama-3.1-70B, 4×H100-SXM, chat (TTFT p99 ≤ 1500 ms, ITL p99 ≤ 80 ms)', gpu: 'H100-SXM', gpus: 4, model: 'llama-3.1-70b', workload: 'chat', slo: { ttft_p99_ms: 1500, itl_p99_ms: 80 } },
];

const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));

function specFor(p: Pair, seed: number, budget: number, name: string): StudySpec {
  const workload = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', `${p.workload}.yaml`), Workload);
  return StudySpec.parse({
    name,
    space: join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'),
    hardware: { gpu: catalog.gpu(p.gpu).id, count: p.gpus },
    model: p.model,
    workload,
    slo: p.slo ?? workload.slo ?? {},
    objectives: [...DEFAULT_OBJECTIVES],
    target: '{"kind":"sim"}',
    seed,
    budget_trials: budget,
    budget_hours: null,
    parallel: 1,
  });
}

/** SLO-feasible goodput per GPU of a measured trial (0 when it missed the SLOs or failed). */
function goodput(spec: StudySpec, t: Pick<Trial, 'state' | 'result'>): number {
  if (t.state !== 'complete' || t.result === null) return 0;
  return checkSlo(spec.slo, t.result).every((c) => c.ok) ? t.result.output_throughput / spec.hardware.count : 0;
}

function bestSoFar(spec: StudySpec, trials: readonly Trial[]): number[] {
  let best = 0;
  return trials.map((t) => (best = Math.max(best, goodput(spec, t))));
}

/** Goodput per config; with `served`, -1 marks a configuration that failed to start or failed requests. */
async function measureConfigs(spec: StudySpec, configs: readonly ServerConfig[], seedBase: number, served = false): Promise<number[]> {
  const ex = createExecutor({ kind: 'sim' }, 2);
  try {
    return await Promise.all(
      configs.map(async (config, i) => {
        const input: TrialInput = { trial_id: i + 1, study: 'ref', seed: seedBase + i, config, workload: spec.workload, hardware: spec.hardware, model: spec.model, slo: spec.slo };
        const out = await ex.run(input);
        if (out.status !== 'ok' || (served && out.result.failed > 0)) return served ? -1 : 0;
        return goodput(spec, { state: 'complete', result: out.result });
      }),
    );
  } finally {
    await ex.close();
  }
}

/**
 * vLLM auto_tune's search: max_num_seqs × max_num_batched_tokens, everything else at vLLM defaults.
 * auto_tune keeps the user's TP; we give it what a user would pick: replicas filling the GPUs when the
 * model fits on one (bf16 weights under 80% of its memory), else one server across all of them.
 */
function autoTuneGrid(p: Pair, budget: number): ServerConfig[] {
  const seqs = [64, 128, 256];
  const mbt = [512, 1024, 2048, 4096, 8192];
  const fitsOne = catalog.model(p.model).params_b * 2 < 0.8 * catalog.gpu(p.gpu).memory_gb;
  const parallel = fitsOne ? { tensor_parallel_size: 1, data_parallel_size: p.gpus } : { tensor_parallel_size: p.gpus, data_parallel_size: 1 };
  const grid: ServerConfig[] = [];
  for (const s of seqs) for (const b of mbt) if (b >= s) grid.push({ ...parallel, max_num_seqs: s, max_num_batched_tokens: b });
  return grid.slice(0, budget);
}

function trialsTo(curve: readonly number[], target: number): number | null {
  const i = curve.findIndex((v) => v >= target);
  return i < 0 ? null : i + 1;
}

const lines: string[] = [];
const out = (s = ''): void => {
  lines.push(s);
  console.log(s);
};
out('# Tuning efficiency on the simulator');
out();
out(`Command: \`node --import tsx bench/tune-efficiency.ts --seeds ${SEEDS} --budget ${BUDGET} --reference ${REFERENCE} --horizon ${HORIZON} --raw ${RAW}\` (${new Date().toISOString().slice(0, 10)}, 2-core machine).`);
out();
out(`Goodput = output tokens/s per GPU of a run meeting the workload's SLOs (0 otherwise). Reference = best goodput among ${REFERENCE} feasible points sampled from the pruned space (seeded), each simulated once. Each method gets ${BUDGET} trials per seed, ${SEEDS} seeds; medians over seeds. The grid is vLLM auto_tune's (max_num_seqs {64,128,256} × max_num_batched_tokens {512…8192}, other knobs at vLLM defaults; replicas filling the GPUs when the model fits on one, else TP across all of them). p = exact one-sided Mann–Whitney U over the seeds (lm-bench better).`);

for (const p of argv.pairs === 'first' ? PAIRS.slice(0, 1) : PAIRS) {
  const t0 = Date.now();
  const base = specFor(p, 0, BUDGET, 'ref');
  const ctx = featureContext(base, catalog);
  const prune = space.prune(ctx);
  const refConfigs = space.sample(REFERENCE, createRng(12345), ctx);
  const refGoodputs = await measureConfigs(base, refConfigs, 900_000);
  const refBest = Math.max(...refGoodputs);
  const target95 = 0.95 * refBest;

  // Pruning keeps the best: draw points from the whole grid (ignoring every rule), measure them, and
  // check that each one that starts and serves every request is one the pruned space keeps.
  const bound = space.bind(ctx);
  const rawRng = createRng(777);
  const knobNames = space.knobs.map((k) => k.name);
  const rawConfigs: ServerConfig[] = Array.from({ length: RAW }, () => {
    const c: Record<string, unknown> = {};
    bound.options.forEach((opts, k) => {
      const choices = opts.filter((o) => o !== undefined);
      const name = knobNames[k];
      if (name !== undefined && choices.length > 0) c[name] = choices[rawRng.int(choices.length)];
    });
    return space.complete(c, ctx);
  });
  const rawGoodputs = await measureConfigs(base, rawConfigs, 700_000, true);
  const rawServed = rawConfigs.filter((_, i) => (rawGoodputs[i] ?? -1) >= 0);
  const rawLost = rawServed.filter((c) => !space.isFeasible(c, ctx).ok);
  const rawBest = Math.max(0, ...rawGoodputs);
  const rawBestKept = rawConfigs.some((c, i) => rawGoodputs[i] === rawBest && space.isFeasible(c, ctx).ok);
  const rawPruned = rawConfigs.filter((c) => !space.isFeasible(c, ctx).ok).length;

  const methods: Record<'lm-bench' | 'random' | 'auto_tune grid', { best: number[]; to95: (number | null)[] }> = {
    'lm-bench': { best: [], to95: [] },
    random: { best: [], to95: [] },
    'auto_tune grid': { best: [], to95: [] },
  };
  const randomLong: (number | null)[] = [];
  for (let seed = 1; seed <= SEEDS; seed++) {
    for (const sampler of ['surrogate', 'random'] as const) {
      const spec = specFor(p, seed, BUDGET, `${sampler}-${seed}`);
      const store = openStore(':memory:');
      const { study } = await runStudy({ store, catalog, space, spec, target: { kind: 'sim' }, now: Date.now, sampler });
      const curve = bestSoFar(spec, study.trials());
      const m = methods[sampler === 'surrogate' ? 'lm-bench' : 'random'];
      m.best.push(curve.at(-1) ?? 0);
      m.to95.push(trialsTo(curve, target95));
    }
    {
      // Random search's own convergence, past the budget.
      const spec = specFor(p, seed, HORIZON, `random-long-${seed}`);
      const store = openStore(':memory:');
      const { study } = await runStudy({ store, catalog, space, spec, target: { kind: 'sim' }, now: Date.now, sampler: 'random' });
      randomLong.push(trialsTo(bestSoFar(spec, study.trials()), target95));
    }
    const grid = autoTuneGrid(p, BUDGET);
    const g = await measureConfigs(base, grid, seed * 1000);
    let best = 0;
    const curve = g.map((v) => (best = Math.max(best, v)));
    methods['auto_tune grid'].best.push(curve.at(-1) ?? 0);
    methods['auto_tune grid'].to95.push(trialsTo(curve, target95));
  }
  out();
  out(`## ${p.name}`);
  out();
  out(`Pruning: ${prune.points_before.toLocaleString('en')} points → ${prune.points_after.toLocaleString('en')} (${((1 - prune.points_after / prune.points_before) * 100).toFixed(1)}% pruned). Reference best goodput ${refBest.toFixed(0)} tok/s/GPU; 95% = ${target95.toFixed(0)}. (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  out();
  out('| method | median best goodput (tok/s/GPU) | % of reference | seeds reaching 95% | median trials to 95% | p vs lm-bench |');
  out('| --- | --- | --- | --- | --- | --- |');
  for (const [name, m] of Object.entries(methods)) {
    const reached = m.to95.filter((x): x is number => x !== null);
    const p = name === 'lm-bench' ? '–' : mannWhitneyGreater(methods['lm-bench'].best, m.best).toFixed(4);
    out(`| ${name} | ${median(m.best).toFixed(0)} | ${((median(m.best) / refBest) * 100).toFixed(1)}% | ${reached.length}/${SEEDS} | ${reached.length === 0 ? `> ${BUDGET}` : median(reached)} | ${p} |`);
  }
  const lmbTo = methods['lm-bench'].to95.map((x) => x ?? BUDGET + 1);
  const rndTo = randomLong.map((x) => x ?? HORIZON + 1);
  out();
  out(`Random search run on to ${HORIZON} trials reaches 95% of the reference after a median ${median(rndTo)} trials (per seed: ${randomLong.map((x) => x ?? `>${HORIZON}`).join(', ')}); lm-bench after ${median(lmbTo)} (per seed: ${methods['lm-bench'].to95.map((x) => x ?? `>${BUDGET}`).join(', ')}), i.e. ${(median(rndTo) / median(lmbTo)).toFixed(1)}× fewer trials (a seed that never got there counts as one past its budget).`);
  out();
  out(`Pruning check: of ${RAW} points drawn from the whole grid ignoring every rule, ${rawPruned} are pruned; ${rawServed.length} started and served every request, and ${rawLost.length} of those are pruned (a pruned point that works would be a lost configuration). The best of the ${RAW} (${rawBest.toFixed(0)} tok/s/GPU) is ${rawBestKept ? 'kept' : 'NOT kept'} by the pruned space.`);
  out();
  out(`Per seed, best goodput: ${Object.entries(methods).map(([n, m]) => `${n} [${m.best.map((v) => v.toFixed(0)).join(', ')}]`).join('; ')}.`);
}
mkdirSync(join(PROJECT_ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(join(PROJECT_ROOT, 'bench', 'results', 'tune.md'), `${lines.join('\n')}\n`);
