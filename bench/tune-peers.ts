// Peers side by side (issue 14): lm-bench, uniform random search, vLLM auto_tune's grid and Optuna's TPE
// sampler (Debian's python3-optuna, driven over JSON lines; benchmark only) tune the same simulated
// deployments at budgets 4, 8, 15 and 30, against a "world" that is not lm-bench's prior: the simulator
// with efficiencies moved by about the simulator's measured error against real vLLM (below), and its
// step-time noise. Also: the mismatched-workload case (the study is given chat.yaml, the server sees
// prompts three times longer) and the empty-database recommendation. Writes bench/results/peers.md.
//
//   node --import tsx bench/tune-peers.ts [--seeds 5] [--reference 1500] [--budgets 4,8,15,30] [--cases all|quick] [--only 1,2,3,0]
// (--only: deployments by number, 0 = the mismatched-workload case; partial runs write peers-partial.md)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { simulatedAnswer } from '../src/advise/simulated-answer.js';
import { defaultCatalog, PROJECT_ROOT } from '../src/catalog/index.js';
import { checkSlo, StudySpec, Workload, type BenchmarkResult, type KnobValue, type ServerConfig, type SimProfile, type Trial } from '../src/domain/index.js';
import { DEFAULT_OBJECTIVES } from '../src/optimize/objectives.js';
import { priorSimulator } from '../src/calibration/prior-simulator.js';
import { initialDesignSize } from '../src/optimize/surrogate-sampler.js';
import { loadSpace } from '../src/space/index.js';
import { openStore } from '../src/store/index.js';
import { createExecutor } from '../src/targets/executor.js';
import type { Executor } from '../src/targets/types.js';
import type { TargetSpec } from '../src/targets/spec.js';
import type { TrialInput, TrialOutcome } from '../src/targets/types.js';
import { trialFailure } from '../src/tune/failure-book.js';
import { featureContext, runStudy } from '../src/tune/study-runner.js';
import { createRng } from '../src/util/rng.js';
import { loadYamlFile } from '../src/util/yaml.js';
import { optunaAvailable, optunaTpe, type OptunaKnob } from './lib/optuna-peer.js';
import { median } from './lib/stats.js';

const { values: argv } = parseArgs({ options: { seeds: { type: 'string' }, reference: { type: 'string' }, budgets: { type: 'string' }, cases: { type: 'string' }, candidates: { type: 'string' }, only: { type: 'string' } } });
const SEEDS = Number(argv.seeds ?? 5);
const REFERENCE = Number(argv.reference ?? 1500);
const BUDGETS = (argv.budgets ?? '4,8,15,30').split(',').map(Number);
const MAX_BUDGET = Math.max(...BUDGETS);
/** Candidates the surrogate sampler scores per proposal (the product default is 100,000; fewer keep the bench to minutes). */
const CANDIDATES = Number(argv.candidates ?? 20_000);

const catalog = defaultCatalog();
const spacePath = join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml');
const space = loadSpace(spacePath);
const chat = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload);

interface Deployment {
  readonly name: string;
  readonly gpu: string;
  readonly gpus: number;
  readonly model: string;
  readonly slo: Record<string, number>;
}
const DEPLOYMENTS: Deployment[] = [
  { name: 'Llama-3.1-8B, 1×H100-SXM, chat', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', slo: { ttft_p99_ms: 350, itl_p99_ms: 50 } },
  // A100 has no fp8: in the world no configuration meets the chat SLO (350 ms / 50 ms), and the few that
  // meet 700 ms / 80 ms do so on some noise seeds only; 40% of the space meets 1000 ms / 80 ms.
  { name: 'Llama-3.1-8B, 2×A100-80GB, chat (TTFT p99 ≤ 1000 ms, ITL p99 ≤ 80 ms)', gpu: 'A100-80GB', gpus: 2, model: 'llama-3.1-8b', slo: { ttft_p99_ms: 1000, itl_p99_ms: 80 } },
  // 64 users of 70B on 4 GPUs cannot meet the chat SLO (350 ms p99 TTFT); this asks for 1.5 s and 80 ms.
  { name: 'Llama-3.1-70B, 4×H200, chat (TTFT p99 ≤ 1500 ms, ITL p99 ≤ 80 ms)', gpu: 'H200', gpus: 4, model: 'llama-3.1-70b', slo: { ttft_p99_ms: 1500, itl_p99_ms: 80 } },
];

/**
 * The world the tuners measure: the default profile with its efficiencies moved against the prior,
 * by about the simulator's measured error (docs/calibration.md: ~20% on throughput, ~35% on TTFT):
 * GEMMs and weight streaming 12-15% slower, 40% more per-step and front-end overhead.
 */
function worldProfile(gpu: string): SimProfile {
  const p = catalog.profileFor(catalog.gpu(gpu));
  return {
    ...p,
    eta_weights: p.eta_weights * 0.85,
    mfu_bf16: p.mfu_bf16 * 0.88,
    mfu_fp8: p.mfu_fp8 * 0.88,
    step_fixed_ms: p.step_fixed_ms * 1.4,
    layer_fixed_us: p.layer_fixed_us * 1.4,
    frontend_ms: p.frontend_ms * 1.4,
  };
}

function specFor(d: Deployment, seed: number, budget: number, name: string, workload: Workload = chat): StudySpec {
  return StudySpec.parse({
    name,
    space: spacePath,
    hardware: { gpu: catalog.gpu(d.gpu).id, count: d.gpus },
    model: d.model,
    workload: { ...workload, slo: d.slo },
    slo: d.slo,
    objectives: [...DEFAULT_OBJECTIVES],
    target: '{"kind":"sim"}',
    seed,
    budget_trials: budget,
    budget_hours: null,
    parallel: 1,
  });
}

/** Goodput per GPU of a measured result under the SLOs; 0 when it missed them or refused requests. */
function goodputOf(spec: StudySpec, r: BenchmarkResult | null): number {
  if (r === null || r.failed > 0) return 0;
  return checkSlo(spec.slo, r).every((c) => c.ok) ? r.output_throughput / spec.hardware.count : 0;
}

interface Curve {
  /** Goodput of each trial in order. */
  readonly goodputs: number[];
  /** Whether each trial failed to start. */
  readonly failedToStart: boolean[];
  /** The configuration of each trial. */
  readonly configs: ServerConfig[];
}

/** What a user would deploy after k trials: the configuration with the best measured goodput (null if none met the SLOs). */
function answerAt(c: Curve, k: number): ServerConfig | null {
  let at = -1;
  let g = 0;
  c.goodputs.slice(0, k).forEach((v, i) => {
    if (v > g) {
      g = v;
      at = i;
    }
  });
  return at < 0 ? null : (c.configs[at] ?? null);
}

/**
 * A configuration's goodput without the winner's curse: the mean over the same 3 fresh noise seeds for
 * every configuration (common random numbers), memoised per world and workload.
 */
function trueGoodput(ex: Executor, spec: StudySpec, memo: Map<string, Promise<number>>): (config: ServerConfig | null) => Promise<number> {
  return (config) => {
    if (config === null) return Promise.resolve(0);
    const key = JSON.stringify(Object.entries(config).sort());
    let hit = memo.get(key);
    if (hit === undefined) {
      hit = Promise.all([1, 2, 3].map(async (s) => {
        const o = await measure(ex, spec, config, 700_000 + s);
        return o.status === 'ok' ? goodputOf(spec, o.result) : 0;
      })).then((gs) => gs.reduce((a, b) => a + b, 0) / gs.length);
      memo.set(key, hit);
    }
    return hit;
  };
}
const trialsTo = (c: Curve, target: number): number | null => {
  let b = 0;
  for (let i = 0; i < c.goodputs.length; i++) {
    b = Math.max(b, c.goodputs[i] ?? 0);
    if (b >= target) return i + 1;
  }
  return null;
};

async function measure(ex: Executor, spec: StudySpec, config: ServerConfig, seed: number, workload = spec.workload): Promise<TrialOutcome> {
  const input: TrialInput = { trial_id: seed, study: spec.name, seed, config, workload, hardware: spec.hardware, model: spec.model, slo: spec.slo };
  return ex.run(input);
}

function curveOfTrials(spec: StudySpec, trials: readonly Trial[]): Curve {
  return {
    goodputs: trials.map((t) => (t.state === 'complete' ? goodputOf(spec, t.result) : 0)),
    failedToStart: trials.map((t) => t.state === 'failed' && t.started === false),
    configs: trials.map((t) => t.config),
  };
}

async function lmBench(d: Deployment, world: TargetSpec, seed: number, budget: number, workloads: { readonly given?: Workload; readonly real?: Workload } = {}): Promise<{ curve: Curve; trials: Trial[] }> {
  const workload = workloads.given;
  const realWorkload = workloads.real;
  const spec = specFor(d, seed, budget, `lmb-${seed}-${budget}`, workload);
  const store = openStore(':memory:');
  const { study } = await runStudy({
    store,
    catalog,
    space,
    spec,
    target: world,
    now: Date.now,
    keepSurrogate: false,
    candidates: CANDIDATES,
    ...(realWorkload === undefined ? {} : { measure: (input: TrialInput, ex: Executor) => ex.run({ ...input, workload: realWorkload }) }),
  });
  const trials = study.trials();
  return { curve: curveOfTrials(realWorkload === undefined ? spec : { ...spec, workload: realWorkload }, trials), trials };
}

async function randomSearch(d: Deployment, world: TargetSpec, seed: number): Promise<Curve> {
  const spec = specFor(d, seed, MAX_BUDGET, `random-${seed}`);
  const store = openStore(':memory:');
  const { study } = await runStudy({ store, catalog, space, spec, target: world, now: Date.now, keepSurrogate: false, sampler: 'random' });
  return curveOfTrials(spec, study.trials());
}

/**
 * vLLM auto_tune's search: max_num_seqs × max_num_batched_tokens, everything else at vLLM's defaults;
 * replicas filling the GPUs when the model fits on one (bf16 weights under 80% of its memory), else one
 * server across all of them, as a user would set auto_tune's fixed TP.
 */
function autoTuneGrid(d: Deployment): ServerConfig[] {
  const fitsOne = catalog.model(d.model).params_b * 2 < 0.8 * catalog.gpu(d.gpu).memory_gb;
  const parallel = fitsOne ? { tensor_parallel_size: 1, data_parallel_size: d.gpus } : { tensor_parallel_size: d.gpus, data_parallel_size: 1 };
  const grid: ServerConfig[] = [];
  for (const s of [64, 128, 256, 512]) for (const b of [512, 1024, 2048, 4096, 8192, 16384]) if (b >= s) grid.push({ ...parallel, max_num_seqs: s, max_num_batched_tokens: b });
  return grid;
}

async function gridSearch(ex: Executor, d: Deployment, seed: number): Promise<Curve> {
  const spec = specFor(d, seed, MAX_BUDGET, `grid-${seed}`);
  const goodputs: number[] = [];
  const failedToStart: boolean[] = [];
  const configs = autoTuneGrid(d).slice(0, MAX_BUDGET);
  for (const [i, config] of configs.entries()) {
    const out = await measure(ex, spec, config, seed * 1000 + i);
    goodputs.push(out.status === 'ok' ? goodputOf(spec, out.result) : 0);
    failedToStart.push(out.status === 'failed' && !out.started);
  }
  return { goodputs, failedToStart, configs };
}

/** Optuna TPE over the 12 raw knobs (every value the space file lists), a failed start scored 0. */
async function optuna(ex: Executor, d: Deployment, seed: number): Promise<Curve> {
  const spec = specFor(d, seed, MAX_BUDGET, `optuna-${seed}`);
  const ctx = featureContext(spec, catalog);
  const bound = space.bind(ctx);
  const knobs: OptunaKnob[] = space.knobs
    .map((k, i) => ({ name: k.name, choices: (bound.options[i] ?? []).filter((v): v is KnobValue => v !== undefined) }))
    .filter((k) => k.choices.length > 1);
  const goodputs: number[] = [];
  const failedToStart: boolean[] = [];
  const configs: ServerConfig[] = [];
  let i = 0;
  await optunaTpe({
    knobs,
    seed,
    budget: MAX_BUDGET,
    evaluate: async (config) => {
      const c = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== null)) as ServerConfig;
      configs.push(c);
      const out = await measure(ex, spec, c, seed * 1000 + i++);
      const g = out.status === 'ok' ? goodputOf(spec, out.result) : 0;
      goodputs.push(g);
      failedToStart.push(out.status === 'failed' && !out.started);
      return g;
    },
  });
  return { goodputs, failedToStart, configs };
}

/** The sample's ten best configurations by one measurement each (to be re-measured without the winner's curse). */
async function referenceTop(ex: Executor, d: Deployment, workload: Workload = chat): Promise<ServerConfig[]> {
  const spec = specFor(d, 0, 1, 'ref', workload);
  const ctx = featureContext(spec, catalog);
  const configs = space.sample(REFERENCE, createRng(12345), ctx);
  const gs = await Promise.all(configs.map(async (c, i) => {
    const out = await measure(ex, spec, c, 900_000 + i);
    return out.status === 'ok' ? goodputOf(spec, out.result) : 0;
  }));
  return [...configs.keys()].sort((a, b) => (gs[b] ?? 0) - (gs[a] ?? 0)).slice(0, 10).map((i) => configs[i] as ServerConfig);
}

const lines: string[] = [];
const out = (s = ''): void => {
  lines.push(s);
  console.log(s);
};
const pct = (x: number): string => x.toFixed(2);

out('# Tuners side by side on the simulator');
out();
out(`Command: \`node --import tsx bench/tune-peers.ts --seeds ${SEEDS} --reference ${REFERENCE} --budgets ${BUDGETS.join(',')} --candidates ${CANDIDATES}\` (${new Date().toISOString().slice(0, 10)}, 2-core machine).`);
out();
out(
  "The world every tuner measures is the simulator with its efficiencies moved away from lm-bench's prior by about the simulator's measured error against real vLLM (GEMMs and weight streaming 12–15% slower, per-step and front-end overhead 40% higher), with its step-time noise; lm-bench's prior is the default profile. " +
    `Goodput = output tokens/s per GPU of a run meeting the SLOs with every request served (0 otherwise). A method's answer after b trials is the configuration with its best measured goodput in those trials (what a user would deploy); its score is that configuration's mean goodput over 3 fresh noise seeds, the same seeds for every configuration, as a fraction of the reference optimum: the best such mean among the ${REFERENCE}-point sample's 10 best and every method's answers (so no method gains from a lucky draw). ` +
    `Random search, the auto_tune grid (max_num_seqs {64…512} × max_num_batched_tokens {512…16384}, other knobs at vLLM defaults, replicas filling the GPUs when the model fits on one) and Optuna TPE (${optunaAvailable() ? 'python3-optuna, TPESampler(seed) with its defaults over the 12 raw knobs, a configuration that fails scored 0' : 'NOT AVAILABLE on this machine: install python3-optuna'}) run ${MAX_BUDGET} trials once per seed, read at each budget; lm-bench runs one study per budget (its initial design is a quarter of the budget). ${SEEDS} seeds; medians over seeds, min in brackets.`,
);

const quick = argv.cases === 'quick';
const ex = createExecutor({ kind: 'sim' }, 2);
const summary: { deployment: string; budget: number; lmb: number; lmbMin: number }[] = [];
const coldSummary: { deployment: string; fraction: number }[] = [];
try {
  // --only 2,3 runs those deployments (1-based) and skips the mismatched-workload case.
  const only = argv.only === undefined ? null : new Set(argv.only.split(',').map(Number));
  for (const d of quick ? DEPLOYMENTS.slice(0, 1) : DEPLOYMENTS.filter((_, i) => only === null || only.has(i + 1))) {
    const t0 = Date.now();
    const world: TargetSpec = { kind: 'sim', profile: worldProfile(d.gpu), profile_source: 'bench world' };
    const wex = createExecutor(world, 2);
    try {
      const truth = trueGoodput(wex, specFor(d, 0, 1, 'truth'), new Map());
      const refTop = await referenceTop(wex, d);
      const curves: Record<string, Curve[]> = { 'lm-bench': [], random: [], 'auto_tune grid': [], 'Optuna TPE': [] };
      const lmbByBudget = new Map<number, Curve[]>();
      const lmbFails: { after: number; failedAfter: number }[] = [];
      for (let seed = 1; seed <= SEEDS; seed++) {
        for (const b of BUDGETS) {
          const { curve, trials } = await lmBench(d, world, seed, b);
          lmbByBudget.set(b, [...(lmbByBudget.get(b) ?? []), curve]);
          if (b === MAX_BUDGET) curves['lm-bench']?.push(curve);
          // Failed starts once the first failure of the same class has been seen.
          const seen = new Set<string>();
          let after = 0;
          let failedAfter = 0;
          for (const t of trials) {
            const cls = trialFailure(t)?.class;
            if (seen.size > 0) {
              after++;
              if (t.state === 'failed' && t.started === false && cls !== undefined && seen.has(cls)) failedAfter++;
            }
            if (cls !== undefined) seen.add(cls);
          }
          lmbFails.push({ after, failedAfter });
        }
        curves['random']?.push(await randomSearch(d, world, seed));
        curves['auto_tune grid']?.push(await gridSearch(wex, d, seed));
        if (optunaAvailable()) curves['Optuna TPE']?.push(await optuna(wex, d, seed));
      }
      const answers: ServerConfig[] = [];
      for (const cs of Object.values(curves)) for (const c of cs) for (const b of BUDGETS) answers.push(...[answerAt(c, b)].filter((x): x is ServerConfig => x !== null));
      for (const cs of lmbByBudget.values()) for (const c of cs) answers.push(...[answerAt(c, c.goodputs.length)].filter((x): x is ServerConfig => x !== null));
      const refSample = Math.max(0, ...(await Promise.all(refTop.map(truth))));
      const refBest = Math.max(refSample, ...(await Promise.all(answers.map(truth))));
      out();
      out(`## ${d.name}`);
      out();
      out(`Reference optimum ${refBest.toFixed(0)} tok/s/GPU (the ${REFERENCE}-point sample's best alone: ${refSample.toFixed(0)}). (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
      out();
      out(`| method | ${BUDGETS.map((b) => `${b} trials`).join(' | ')} | trials to 95% (median) | failed to start (of ${MAX_BUDGET}×${SEEDS}) |`);
      out(`| --- | ${BUDGETS.map(() => '---').join(' | ')} | --- | --- |`);
      for (const [name, cs] of Object.entries(curves)) {
        if (cs.length === 0) continue;
        const cells: string[] = [];
        for (const b of BUDGETS) {
          const fr = await Promise.all((name === 'lm-bench' ? (lmbByBudget.get(b) ?? []) : cs).map(async (c) => (await truth(answerAt(c, b))) / refBest));
          if (name === 'lm-bench') summary.push({ deployment: d.name, budget: b, lmb: median(fr), lmbMin: Math.min(...fr) });
          cells.push(`${pct(median(fr))} (${pct(Math.min(...fr))})`);
        }
        const to95 = cs.map((c) => trialsTo(c, 0.95 * refBest));
        const reached = to95.filter((x): x is number => x !== null);
        const fails = cs.reduce((s, c) => s + c.failedToStart.filter(Boolean).length, 0);
        out(`| ${name} | ${cells.join(' | ')} | ${reached.length === 0 ? `> ${MAX_BUDGET}` : `${median(to95.map((x) => x ?? MAX_BUDGET + 1))} (${reached.length}/${cs.length} seeds)`} | ${fails} |`);
      }
      const after = lmbFails.reduce((s, x) => s + x.after, 0);
      const failedAfter = lmbFails.reduce((s, x) => s + x.failedAfter, 0);
      out();
      out(`lm-bench's initial design per budget: ${BUDGETS.map((b) => `${b} → ${initialDesignSize(b)}`).join(', ')} trials (vLLM's defaults included). Failed starts of a class already seen, over every lm-bench study: ${failedAfter} of ${after} trials after a first failure (${after === 0 ? '–' : ((failedAfter / after) * 100).toFixed(1)}%).`);

      // Empty database: the simulator's answer (default profile), measured in the world.
      const spec = specFor(d, 0, 1, 'cold');
      const cold = simulatedAnswer({
        question: { gpu: spec.hardware.gpu, gpus: d.gpus, model: d.model, workload: spec.workload, workloadRef: 'chat.yaml', slo: spec.slo, candidates: 20_000, seed: 0, keepPrecision: false },
        space,
        catalog,
        simulator: priorSimulator(null, catalog, { hardware: spec.hardware, model: d.model, workload: spec.workload, slo: spec.slo }),
      });
      const coldG = (await truth(cold.best?.config ?? null)) / refBest;
      out();
      out(`Empty database (\`lm-bench recommend\` answers from the simulator, default profile): its pick, measured in the world, reaches ${pct(coldG)} of the reference optimum; predicted P(meets SLOs) ${cold.best === null ? '–' : cold.best.p_meets_slo.toFixed(2)}; ${cold.measure_next.length} measurements suggested.`);
      coldSummary.push({ deployment: d.name, fraction: coldG });
    } finally {
      await wex.close();
    }
  }

  if (!quick && (only === null || only.has(0))) {
    // The mismatched workload: the study is given chat.yaml; the server sees prompts three times as long.
    // Prompts three times longer cannot meet 350 ms p99 TTFT in the world; 8% of the space meets 700 ms / 80 ms.
    const d: Deployment = { ...(DEPLOYMENTS[0] as Deployment), slo: { ttft_p99_ms: 700, itl_p99_ms: 80 } };
    const longer: Workload = { ...chat, input_len: { dist: 'lognormal', mean: 768, std: 768, min: 12, max: 3072 } };
    const world: TargetSpec = { kind: 'sim', profile: worldProfile(d.gpu), profile_source: 'bench world' };
    const wex = createExecutor(world, 2);
    try {
      const truth = trueGoodput(wex, specFor(d, 0, 1, 'truth-long', longer), new Map());
      const refTop = await referenceTop(wex, d, longer);
      const fr: number[] = [];
      const lost: number[] = [];
      const rules: string[] = [];
      for (let seed = 1; seed <= SEEDS; seed++) {
        const { curve, trials } = await lmBench(d, world, seed, 15, { given: chat, real: longer });
        fr.push(await truth(answerAt(curve, 15)));
        const byClass = new Map<string, number>();
        for (const t of trials) {
          const c = trialFailure(t)?.class;
          if (c !== undefined) byClass.set(c, (byClass.get(c) ?? 0) + 1);
        }
        lost.push(Math.max(0, ...byClass.values()));
        rules.push(`seed ${seed}: ${[...byClass.entries()].map(([c, n]) => `${c} ×${n}`).join(', ') || 'no failure'}`);
      }
      const refBest = Math.max(...(await Promise.all(refTop.map(truth))), ...fr);
      out();
      out('## Mismatched workload: the study is given chat.yaml, the server sees prompts 3× longer (8B, 1×H100, TTFT p99 ≤ 700 ms, ITL p99 ≤ 80 ms)');
      out();
      out(`Reference optimum on the longer prompts ${refBest.toFixed(0)} tok/s/GPU. lm-bench in 15 trials: median ${pct(median(fr.map((x) => x / refBest)))} of it (min ${pct(Math.min(...fr.map((x) => x / refBest)))}); most trials lost to one failure class per seed: ${lost.join(', ')} (goal < 3). Failures per seed: ${rules.join('; ')}.`);
    } finally {
      await wex.close();
    }
  }
} finally {
  await ex.close();
}
if (summary.length > 0) {
  out();
  out("## Against the goals (issues 14 and 30)");
  out();
  const at = (b: number): typeof summary => summary.filter((x) => x.budget === b);
  // Only the budgets this run measured: an empty list is not a goal met.
  if (at(4).length > 0) out(`- 4 trials, median ≥ 0.95 on every deployment (issue 30): ${at(4).map((x) => `${pct(x.lmb)} (min ${pct(x.lmbMin)})`).join(', ')} (${at(4).every((x) => x.lmb >= 0.95) ? 'met' : 'missed'}).`);
  if (at(8).length > 0) out(`- 8 trials, median ≥ 0.90 on every deployment: ${at(8).map((x) => pct(x.lmb)).join(', ')} (${at(8).every((x) => x.lmb >= 0.9) ? 'met' : 'missed'}).`);
  if (at(15).length > 0) out(`- 15 trials, median ≥ 0.97 and no seed below 0.70: ${at(15).map((x) => `${pct(x.lmb)} (min ${pct(x.lmbMin)})`).join(', ')} (${at(15).every((x) => x.lmb >= 0.97 && x.lmbMin >= 0.7) ? 'met' : 'missed'}).`);
  if (coldSummary.length > 0) out(`- Empty database ≥ 0.85: ${coldSummary.map((x) => pct(x.fraction)).join(', ')} (${coldSummary.every((x) => x.fraction >= 0.85) ? 'met' : 'missed'}).`);
}
mkdirSync(join(PROJECT_ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(join(PROJECT_ROOT, 'bench', 'results', quick || argv.only !== undefined ? 'peers-partial.md' : 'peers.md'), `${lines.join('\n')}\n`);
