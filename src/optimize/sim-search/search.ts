import { meetsSlo as meetsSloOf, type BenchmarkResult, type KnobValue, type Objective, type ServerConfig, type Slo, type StudyObjective } from '../../domain/index.js';
import { contextFeatures, featureNames, type FeatureContext, type KnobEncoder } from '../../surrogate/features.js';
import { priorSurrogate } from '../../surrogate/prior.js';
import { saturatedResult, targetsOf, type TargetName, type TargetValues } from '../../surrogate/targets.js';
import type { Rng } from '../../util/rng.js';
import { pMeetsUnderError } from './residual.js';
import { probabilityMeetsSlo } from '../acquisition.js';
import { scoreCandidates } from '../candidates.js';
import { merit, objectiveTarget, objectiveVector, pickRule, sloConstraints, studyObjectiveOf, type Constraint, type PickRule } from '../objectives.js';
import { paretoFront } from '../pareto.js';
import { configKey } from '../sampler.js';
import type { CandidateSource } from '../samplers.js';

/**
 * A search on the simulator alone: what the tuner's initial design and a recommendation with no
 * history stand on. The physics model screens a large sample of the pruned space (expected goodput:
 * ideal throughput × P(meets the SLOs) under the simulator's measured error), a diverse top of it is
 * run through the discrete-event simulator (`simulate`, passed in: the caller picks the profile and
 * the time it may take), and the simulated runs that meet the SLOs form a Pareto set. "Goodput" here is
 * the objective's figure of merit (objectives.ts `merit`): throughput per GPU, or output tokens per
 * joule when the study minimises energy, counted only under the SLOs.
 */
export interface SimSearchOptions {
  readonly source: CandidateSource;
  readonly context: FeatureContext;
  readonly encoder: KnobEncoder;
  readonly slo: Slo;
  readonly objectives: readonly Objective[];
  /** What the search ranks by (default: what `objectives` stand for, objectives.ts `studyObjectiveOf`). */
  readonly objective?: StudyObjective;
  /** One simulated run of a configuration, or null when the simulator refuses to start it. */
  readonly simulate: (config: ServerConfig) => BenchmarkResult | null;
  readonly rng: Rng;
  /** Candidates the physics stage screens (default 20,000). */
  readonly candidates?: number;
  /** Candidates run through the simulator (default 24). */
  readonly simulateTop?: number;
  /**
   * Extra simulated runs for a local search after the screened top (default 0): the best candidate of
   * each parallel layout, then the best not yet expanded, has each one-step neighbour simulated
   * (`source.neighbours`), keeping what improves expected goodput.
   */
  readonly refine?: number;
  /** configKeys on `context` (`configKey(config, context)`) not to simulate again (trials already run). */
  readonly exclude?: ReadonlySet<string>;
}

export interface SimulatedCandidate {
  readonly config: ServerConfig;
  readonly result: BenchmarkResult | null;
  readonly values: TargetValues;
  readonly meetsSlo: boolean;
  /** Output tokens/s per GPU when the simulated run meets the SLOs, else 0. */
  readonly goodputPerGpu: number;
  /** The objective's figure of merit (objectives.ts `merit`) when the run meets the SLOs, else 0. */
  readonly merit: number;
  readonly encoded: readonly number[];
}

export interface SimSearch {
  /** Every simulated candidate, in the physics stage's order. */
  readonly simulated: SimulatedCandidate[];
  /** Indices into `simulated` of the Pareto set among those meeting the SLOs. */
  readonly front: number[];
  readonly screened: number;
  /** The rule the search ranked by. */
  readonly rule: PickRule;
}

/**
 * The simulated run's queue grew without bound (sim/saturation.ts): the configuration cannot sustain
 * the offered load, so it meets no SLO and has no chance of meeting them under the simulator's error
 * either, whatever its latency percentiles say.
 */
export const saturatedRun = (r: BenchmarkResult | null | undefined): boolean => r !== null && r !== undefined && saturatedResult(r);

/** The parallel layout of a configuration (TP × DP, expert parallel): the knob that moves everything else. */
export function layoutOf(c: ServerConfig): string {
  return `tp${c.tensor_parallel_size ?? 1}×dp${c.data_parallel_size ?? 1}${c.enable_expert_parallel === true ? '+ep' : ''}`;
}

/**
 * The knobs a layout's defaults keep from a candidate (its parallel layout and its numerics), with vLLM's
 * own value of each: a knob at it is left out, so the anchor of TP 1 in the checkpoint's precision is
 * `{}`, the key of a study's defaults trial, and is never run twice.
 */
const LAYOUT_AND_PRECISION: Readonly<Record<'tensor_parallel_size' | 'data_parallel_size' | 'enable_expert_parallel' | 'quantization' | 'kv_cache_dtype', KnobValue>> = {
  tensor_parallel_size: 1,
  data_parallel_size: 1,
  enable_expert_parallel: false,
  quantization: 'none',
  kv_cache_dtype: 'auto',
};

/**
 * vLLM's defaults in a candidate's parallel layout and precision. The screen samples the space, and
 * at a few dozen simulated runs it can miss the plainest configuration of a layout (70B on 4×H200:
 * TP4 with fp8 weights and every other knob at vLLM's default beat the TP2×DP2 pick by a fifth in the
 * bench's world, and was simulated on one search seed in two), so each layout the screen rates well
 * has its defaults run in the sample's place, and the local search can start from them.
 */
export function layoutDefaults(c: ServerConfig): ServerConfig {
  return Object.fromEntries(Object.entries(LAYOUT_AND_PRECISION).flatMap(([k, vllm]) => {
    const v = c[k as keyof typeof LAYOUT_AND_PRECISION];
    return v === undefined || v === vllm ? [] : [[k, v]];
  }));
}

/** Euclidean distance between two encoded configurations (the encoder's space). */
export const encodedDistance = (a: readonly number[], b: readonly number[]): number => Math.sqrt(a.reduce((s, x, i) => s + (x - (b[i] ?? 0)) ** 2, 0));

export function simulatedSearch(opts: SimSearchOptions): SimSearch {
  const constraints = sloConstraints(opts.slo);
  const rule = pickRule(opts.objective ?? studyObjectiveOf({ objectives: opts.objectives }));
  const targets = [...new Set<TargetName>(['output_throughput_per_gpu', rule.target, ...opts.objectives.map((o) => objectiveTarget(o.name)), ...constraints.map((c) => c.target)])];
  const pool = opts.source.sample(opts.candidates ?? 20_000, opts.rng.fork('sim-search'));
  const prior = priorSurrogate([], featureNames(opts.encoder));
  const scored = scoreCandidates(pool, [], { surrogate: prior, context: opts.context, encoder: opts.encoder, constraints, targets, keep: 2000, rule, ...(opts.exclude === undefined ? {} : { exclude: opts.exclude }) });
  const p = scored.predictions;
  const pMeets = probabilityMeetsSlo(p, constraints);
  const fig = p.targets[rule.target];
  const expected = scored.configs.map((_, i) => {
    let mean = 0;
    for (let s = 0; s < p.draws; s++) mean += merit({ [rule.target]: fig?.[i * p.draws + s] ?? 0 }, rule) / p.draws;
    return mean * (pMeets[i] ?? 0) * (p.pStart[i] ?? 0);
  });
  // Where the expected merits tie (above all at 0, when the prior expects nothing to meet the SLOs),
  // the candidate predicted nearest to them goes first: its worst SLO figure ÷ limit over the draws. A
  // question nothing meets then simulates what comes nearest, and its nearest misses (advise/nearest.ts)
  // are near, not whatever the pool's order left.
  const nearness = scored.configs.map((_, i) => {
    let worst = 0;
    for (let s = 0; s < p.draws; s++) {
      let w = 0;
      for (const c of constraints) {
        const v = p.targets[c.target]?.[i * p.draws + s] ?? Number.NaN;
        // A figure the prior lacks counts as far as can be (Math.max would carry NaN into the sort).
        w = Math.max(w, Number.isNaN(v) ? Number.POSITIVE_INFINITY : v / c.limitMs);
      }
      worst += w / p.draws;
    }
    return worst;
  });
  // (One the prior expects not to start is no near miss: those that start go first.)
  const starts = (i: number): number => ((p.pStart[i] ?? 0) >= 0.5 ? 1 : 0);
  const order = [...scored.configs.keys()].sort((a, b) => (expected[b] ?? 0) - (expected[a] ?? 0) || starts(b) - starts(a) || (nearness[a] ?? 0) - (nearness[b] ?? 0));
  const vec = (i: number): number[] => Array.from(scored.encoded.subarray(i * scored.dims, (i + 1) * scored.dims));
  // A diverse top: the best expected goodput first, then no two closer than half a grid step's
  // worth of encoded distance (the acquisition's own batch rule), so one region cannot take it all.
  const want = opts.simulateTop ?? 24;
  const picked: number[] = [];
  // Every parallel layout the physics model rates within half of the best gets a share first (a few
  // candidates each): the physics model's ranking between layouts is its least certain part, and one
  // layout would otherwise take the whole list (70B on 4 GPUs: all 40 at TP2×DP2).
  const topExpected = expected[order[0] ?? 0] ?? 0;
  const layouts = new Map<string, number[]>();
  for (const i of order) {
    if ((expected[i] ?? 0) < 0.5 * topExpected || topExpected <= 0) break;
    const l = layoutOf(scored.configs[i] as ServerConfig);
    layouts.set(l, [...(layouts.get(l) ?? []), i]);
  }
  const share = Math.max(2, Math.floor(want / 4 / Math.max(1, layouts.size)));
  for (const members of layouts.values()) {
    for (const i of members) {
      if (picked.filter((j) => layoutOf(scored.configs[j] as ServerConfig) === layoutOf(scored.configs[i] as ServerConfig)).length >= share || picked.length >= want) break;
      if (picked.some((j) => encodedDistance(vec(i), vec(j)) < 0.5)) continue;
      picked.push(i);
    }
  }
  for (const minDistance of [0.5, 0]) {
    for (const i of order) {
      if (picked.length >= want) break;
      // Past the candidates expected to qualify the diverse pass stops, unless none is: then it goes on
      // through the nearest that are expected to start, spread out as well.
      if ((expected[i] ?? 0) <= 0 && minDistance > 0 && (topExpected > 0 || starts(i) === 0)) break;
      if (picked.includes(i) || picked.some((j) => encodedDistance(vec(i), vec(j)) < minDistance)) continue;
      picked.push(i);
    }
  }
  const run = (config: ServerConfig, encoded: readonly number[]): SimulatedCandidate => {
    const result = opts.simulate(config);
    const values = result === null || result.completed === 0 || result.failed > 0 ? {} : targetsOf(result, opts.context.gpuCount);
    // A run whose queue grew without bound cannot sustain the load: its percentiles grew with the run.
    // Judged on the run's own statistics (a p90 limit on its p90), as a measured run is (summary.ts).
    const meetsSlo = result !== null && !saturatedRun(result) && Object.keys(values).length > 0 && meetsSloOf(opts.slo, result);
    return { config, result, values, meetsSlo, goodputPerGpu: meetsSlo ? (values.output_throughput_per_gpu ?? 0) : 0, merit: meetsSlo ? merit(values, rule) : 0, encoded };
  };
  // vLLM's defaults of the best-rated layouts (a quarter of the runs at most) take the place of the
  // diverse top's last members, so `simulateTop` stays the number of runs; one the top already holds
  // (the same configuration once completed), one already run, or one the source's rules refuse is skipped.
  const anchorKeys = new Set<string>(opts.exclude ?? []);
  const proposed = [...layouts.values()].map((members) => layoutDefaults(scored.configs[members[0] as number] as ServerConfig));
  const startable = opts.source.startable?.(proposed) ?? proposed.map(() => true);
  const anchors: { config: ServerConfig; encoded: readonly number[] }[] = [];
  for (const [i, config] of proposed.entries()) {
    if (anchors.length >= Math.floor(want / 4)) break;
    const encoded = opts.source.encode(config);
    if (startable[i] !== true || anchorKeys.has(configKey(config, opts.context)) || picked.some((j) => encodedDistance(encoded, vec(j)) === 0)) continue;
    anchorKeys.add(configKey(config, opts.context));
    anchors.push({ config, encoded });
  }
  const top = picked.slice(0, Math.max(0, want - anchors.length));
  const simulated: SimulatedCandidate[] = [...top.map((i) => run(scored.configs[i] as ServerConfig, vec(i))), ...anchors.map((a) => run(a.config, a.encoded))];
  localSearch(simulated, opts, constraints, rule, run);
  const meeting = simulated.map((c, i) => ({ c, i })).filter((x) => x.c.meetsSlo && objectiveVector(x.c.values, opts.objectives).every(Number.isFinite));
  const front = paretoFront(meeting.map((x) => objectiveVector(x.c.values, opts.objectives))).map((k) => meeting[k]?.i ?? 0);
  return { simulated, front, screened: scored.screened, rule };
}

/**
 * Coordinate steps from the best simulated candidates (the screened top is a sample: 70B on 4×H200
 * screened 32 candidates and left the best TP4 one at a CUDA-graph capture size that pads its ITL
 * close to the SLO, where one step more meets it with room to spare). Each round takes the best
 * not-yet-expanded candidate of every parallel layout (the physics model ranks layouts least surely)
 * and simulates their one-step neighbours in turns, until `refine` runs are spent or no candidate
 * meeting the SLOs is left to expand; a neighbour that improves on its seed is the next round's seed.
 * A seed's neighbours go in the order `physicsOrder` gives. Appends to `simulated`.
 */
function localSearch(simulated: SimulatedCandidate[], opts: SimSearchOptions, constraints: readonly Constraint[], rule: PickRule, run: (c: ServerConfig, encoded: readonly number[]) => SimulatedCandidate): void {
  const budget = opts.refine ?? 0;
  const neighboursOf = opts.source.neighbours?.bind(opts.source);
  if (budget <= 0 || neighboursOf === undefined) return;
  const value = (c: SimulatedCandidate): number => c.merit * pMeetsUnderError(c.values, constraints, {}, c.result);
  const seen = new Set([...simulated.map((c) => configKey(c.config, opts.context)), ...(opts.exclude ?? [])]);
  const expanded = new Set<string>();
  let spent = 0;
  while (spent < budget) {
    const bestOfLayout = new Map<string, SimulatedCandidate>();
    for (const c of simulated) {
      if (value(c) <= 0 || expanded.has(configKey(c.config, opts.context))) continue;
      const l = layoutOf(c.config);
      const held = bestOfLayout.get(l);
      if (held === undefined || value(c) > value(held)) bestOfLayout.set(l, c);
    }
    const seeds = [...bestOfLayout.values()].sort((a, b) => value(b) - value(a));
    if (seeds.length === 0) return;
    for (const s of seeds) expanded.add(configKey(s.config, opts.context));
    const queues = seeds.map((s) => physicsOrder(s.config, neighboursOf(s.config).filter((c) => !seen.has(configKey(c, opts.context))), opts.context, constraints, rule));
    for (let turn = 0; spent < budget && queues.some((q) => turn < q.length); turn++) {
      for (const q of queues) {
        const config = q[turn];
        if (config === undefined || spent >= budget || seen.has(configKey(config, opts.context))) continue;
        seen.add(configKey(config, opts.context));
        simulated.push(run(config, opts.source.encode(config)));
        spent++;
      }
    }
  }
}

/**
 * Neighbours the physics model tells apart from their seed first, best ideal figure first (slack for
 * SLOs their ideal latency already breaks, as the screen does); then the rest in knob order. Most
 * neighbours of a good configuration change nothing the workload feels (max_num_seqs above the users
 * there are, a memory fraction when the KV cache is not the limit); simulating those first would spend
 * the runs on copies of the seed.
 */
function physicsOrder(seed: ServerConfig, neighbours: readonly ServerConfig[], ctx: FeatureContext, constraints: readonly Constraint[], rule: PickRule): ServerConfig[] {
  const base = contextFeatures(seed, ctx).baselines;
  const scored = neighbours.map((config, i) => {
    const b = contextFeatures(config, ctx).baselines;
    const differs = (Object.keys(b) as TargetName[]).some((t) => Math.abs(b[t] - base[t]) > 1e-6 * Math.max(1, Math.abs(base[t])));
    const slack = constraints.reduce((s, c) => (b[c.target] > c.limitMs ? s * 0.01 : s), 1);
    return { config, i, differs, ideal: merit(b, rule) * slack };
  });
  return scored.sort((a, b) => Number(b.differs) - Number(a.differs) || (a.differs ? b.ideal - a.ideal : 0) || a.i - b.i).map((x) => x.config);
}

/**
 * `k` configurations spread over the simulated Pareto set: the best goodput (the objective's merit)
 * first, then each the one farthest (in the encoder's space) from those already picked, so a study's
 * first trials probe different regions the simulator rates well; when the front is smaller than `k`,
 * the best of the rest by goodput fill it.
 */
export function diversePicks(search: SimSearch, k: number): SimulatedCandidate[] {
  const byGoodput = (a: SimulatedCandidate, b: SimulatedCandidate): number => b.merit - a.merit;
  const front = search.front.map((i) => search.simulated[i] as SimulatedCandidate).sort(byGoodput);
  const out: SimulatedCandidate[] = [];
  const first = front[0];
  if (first !== undefined) out.push(first);
  // Then the best of each other parallel layout the simulator rates within 30% of the best: the
  // simulator's error is largest between layouts (communication, per-replica overheads), and no
  // later proposal can learn a layout that was never measured.
  const seenLayouts = new Set(out.map((c) => layoutOf(c.config)));
  for (const c of [...search.simulated].sort(byGoodput)) {
    if (out.length >= k || first === undefined) break;
    if (c.merit < 0.7 * first.merit) break;
    if (seenLayouts.has(layoutOf(c.config))) continue;
    seenLayouts.add(layoutOf(c.config));
    out.push(c);
  }
  while (out.length < k && out.length < front.length) {
    let best: SimulatedCandidate | null = null;
    let bestD = -1;
    for (const c of front) {
      if (out.includes(c)) continue;
      const d = Math.min(...out.map((o) => encodedDistance(o.encoded, c.encoded)));
      if (d > bestD) {
        bestD = d;
        best = c;
      }
    }
    if (best === null) break;
    out.push(best);
  }
  for (const c of [...search.simulated].sort(byGoodput)) {
    if (out.length >= k) break;
    if (!out.includes(c) && c.result !== null) out.push(c);
  }
  return out;
}
