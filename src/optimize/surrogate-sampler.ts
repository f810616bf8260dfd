import { lostBreaks, type BenchmarkResult, type ServerConfig, type Trial } from '../domain/index.js';
import type { FeatureContext, KnobEncoder } from '../surrogate/features.js';
import type { Surrogate } from '../surrogate/surrogate.js';
import { targetsOf, type TargetName } from '../surrogate/targets.js';
import { selectBatch } from './acquisition.js';
import { scoreCandidates } from './candidates.js';
import { meetsConstraints, objectiveTarget, type Constraint, objectiveVector, pickRule, referencePoint, sloConstraints, studyObjectiveOf } from './objectives.js';
import { hypervolume } from './hypervolume.js';
import { paretoFront } from './pareto.js';
import { configKey, type Proposal, type Sampler, type SamplerContext } from './sampler.js';
import { spaceFilling, type CandidateSource } from './samplers.js';

/**
 * The model-based sampler: vLLM's defaults first (the baseline every tuner reports against), then the
 * simulator's best configurations for the deployment (the initial design, at most a quarter of the
 * budget), then batches chosen by constrained EHVI over ≥ 100k candidates from the pruned space plus
 * local mutations around the current front, scored by the surrogate: the simulator prior corrected by
 * every measured run until there are enough runs for trees.
 */
export interface SurrogateSamplerOptions {
  readonly source: CandidateSource;
  readonly context: FeatureContext;
  readonly encoder: KnobEncoder;
  /** A surrogate for the current history (fitted or loaded by the caller), or null when there is none yet. */
  readonly model: (trials: readonly Trial[]) => Promise<Surrogate | null>;
  readonly candidates?: number;
  /** Candidates kept by the physics stage for the ensemble. */
  readonly keep?: number;
  /** Local mutations around the front in all (space.mutate costs ~0.4 ms each, so they are budgeted). */
  readonly mutations?: number;
  /**
   * The simulator's best configurations for the study (sim-search/search.ts `diversePicks`): `k` of them, none
   * in `taken`. Without it the initial design is space filling.
   */
  readonly initialDesign?: (k: number, taken: ReadonlySet<string>) => Promise<ServerConfig[]>;
  /**
   * Proposals while the surrogate is still the simulator prior (too few runs for trees): the simulated
   * candidates re-ranked through the measured residual (sim-search/guide.ts). What it cannot fill, EHVI does.
   */
  readonly priorProposals?: (k: number, trials: readonly Trial[], taken: ReadonlySet<string>) => Promise<ServerConfig[]>;
}

export const SURROGATE_SAMPLER_DEFAULTS = Object.freeze({ candidates: 100_000, keep: 4000, mutations: 400 });

/**
 * Trials of the initial design (vLLM's defaults included) for a budget: a quarter of it, at least
 * one. The rest is model-guided, from the simulator prior on (model/prior.ts), so an 8-trial study
 * spends 2 trials before the model picks and a 4-trial study 1.
 */
export function initialDesignSize(budgetTrials: number): number {
  return Math.max(1, Math.floor(budgetTrials / 4));
}

/**
 * Measured runs ordered by how near they came to the SLOs: the worst SLO's log-ratio of the measured
 * figure to its limit, least first (the latest first among equals). A figure the run lacks is infinitely far.
 */
export function nearestToSlo(measured: readonly Trial[], constraints: readonly Constraint[], gpus: number): Trial[] {
  const worst = (t: Trial): number => {
    if (t.result === null) return Number.POSITIVE_INFINITY;
    const values = targetsOf(t.result, gpus);
    let w = Number.NEGATIVE_INFINITY;
    for (const c of constraints) {
      const v = values[c.target];
      w = Math.max(w, v === undefined || !(v > 0) ? Number.POSITIVE_INFINITY : Math.log(v / c.limitMs));
    }
    return w;
  };
  const keyed = measured.map((t, i) => ({ t, i, w: worst(t) }));
  return keyed.sort((a, b) => (a.w === b.w ? b.i - a.i : a.w - b.w)).map((k) => k.t);
}

export function surrogateSampler(opts: SurrogateSamplerOptions): Sampler {
  const o = { ...SURROGATE_SAMPLER_DEFAULTS, ...opts };
  return {
    name: 'surrogate',
    async propose(ctx: SamplerContext, n: number): Promise<Proposal[]> {
      const out: Proposal[] = [];
      // What the study holds and what this batch has proposed so far (defaults, design, prior picks), as
      // vLLM resolves them on the study's deployment: vLLM's defaults spelled out are the defaults.
      const takenKeys = (): Set<string> => new Set([...ctx.trials.map((t) => configKey(t.config, o.context)), ...out.map((p) => configKey(p.config, o.context))]);
      // Picks made from a search run earlier: a failure rule learned since may rule some out (the source knows them).
      const stillStartable = (configs: readonly ServerConfig[], k: number): ServerConfig[] => {
        const ok = o.source.startable?.(configs) ?? configs.map(() => true);
        return configs.filter((_, i) => ok[i] === true).slice(0, k);
      };
      // vLLM's defaults first, when they can start at all (the study runner skips them the same way; a
      // 120B model's defaults on one GPU of eight, say, have no room for a KV cache).
      if (ctx.trials.length === 0 && o.source.startable?.([{}])[0] !== false) out.push({ config: {}, origin: 'default' });
      const designLeft = Math.min(n - out.length, initialDesignSize(ctx.study.spec.budget_trials) - ctx.trials.length - out.length);
      if (designLeft > 0 && o.initialDesign !== undefined) {
        for (const config of stillStartable(await o.initialDesign(designLeft + 4, takenKeys()), designLeft)) out.push({ config, origin: 'simulated' });
        if (out.length >= n) return out.slice(0, n);
      }
      const surrogate = await o.model(ctx.trials);
      if (surrogate?.prior !== undefined && o.priorProposals !== undefined) {
        const want = n - out.length;
        for (const config of stillStartable(await o.priorProposals(want + 8, ctx.trials, takenKeys()), want)) out.push({ config, origin: 'surrogate', attrs: { guided_by: 'simulator_residual' } });
        if (out.length >= n) return out.slice(0, n);
      }
      if (surrogate === null) {
        const existing = [...ctx.trials.map((t) => t.config), ...out.map((p) => p.config)];
        for (const config of spaceFilling(o.source, existing, n - out.length, ctx.rng.fork('fill'), { deployment: o.context })) out.push({ config, origin: 'space_filling' });
        return out.slice(0, n);
      }
      const spec = ctx.study.spec;
      const constraints = sloConstraints(spec.slo);
      const targets = [...new Set<TargetName>([...spec.objectives.map((x) => objectiveTarget(x.name)), ...constraints.map((c) => c.target)])];
      const measured = ctx.trials.filter((t) => t.state === 'complete' && t.result !== null);
      // A run whose lost requests break an SLO is not feasible, however good its surviving requests look.
      // A run lacking an objective (no energy figure) cannot be placed on the front it would improve.
      const feasible = measured.filter(
        (t) =>
          lostBreaks(spec.slo, t.result as BenchmarkResult).length === 0 &&
          meetsConstraints(targetsOf(t.result as BenchmarkResult, spec.hardware.count), constraints) &&
          objectiveVector(targetsOf(t.result as BenchmarkResult, spec.hardware.count), spec.objectives).every(Number.isFinite),
      );
      const pts = feasible.map((t) => objectiveVector(targetsOf(t.result as BenchmarkResult, spec.hardware.count), spec.objectives));
      const frontTrials = paretoFront(pts).map((i) => feasible[i] as Trial);
      // Nothing feasible yet: the local moves start from the runs nearest the SLOs (the worst SLO's measured
      // ratio to its limit), where the last three runs, however far off, took the study nowhere under
      // SLOs nothing had met.
      const seeds = frontTrials.length > 0 ? frontTrials : nearestToSlo(measured, constraints, spec.hardware.count).slice(0, 3);
      const mutations: ServerConfig[] = [];
      const perSeed = Math.max(1, Math.floor(o.mutations / Math.max(1, seeds.length)));
      seeds.forEach((t, k) => {
        const r = ctx.rng.fork(`mutate-${k}`);
        // Chains of one-step moves: each mutation starts from the previous one half of the time.
        let from = t.config;
        for (let m = 0; m < perSeed; m++) {
          const next = o.source.mutate(from, r);
          mutations.push(next);
          from = m % 2 === 0 ? next : t.config;
        }
      });
      const taken = takenKeys();
      const dedupe = (cs: readonly ServerConfig[]): ServerConfig[] => {
        const seen = new Set<string>();
        return cs.filter((c) => {
          const k = configKey(c, o.context);
          if (taken.has(k) || seen.has(k)) return false;
          seen.add(k);
          return true;
        });
      };
      const local = dedupe(mutations);
      for (const c of local) taken.add(configKey(c, o.context));
      // The pool is distinct already; tried and local configurations are dropped among the survivors only.
      const pool = o.source.sample(o.candidates, ctx.rng.fork('candidates'));
      const scored = scoreCandidates(pool, local, { surrogate, context: o.context, encoder: o.encoder, constraints, targets, keep: o.keep, exclude: taken, rule: pickRule(studyObjectiveOf(spec)) });
      const ref = referencePoint(spec.objectives, constraints, pts);
      const frontPts = paretoFront(pts).map((i) => pts[i] ?? []);
      // The loop's stopping rule reads EHVI relative to the current front's hypervolume.
      const hv = frontPts.length > 0 ? hypervolume(frontPts, ref) : 0;
      const picks = selectBatch(
        scored.predictions,
        { objectives: spec.objectives, constraints, front: frontPts, ref },
        { q: n - out.length, poolSize: 400, encoded: scored.encoded, dims: scored.dims, minDistance: 0.5, nearness: surrogate.prior === undefined },
      );
      for (const p of picks) {
        out.push({
          config: scored.configs[p.index] ?? {},
          origin: 'surrogate',
          attrs: { ehvi: p.ehvi, ehvi_rel: p.fallback || hv <= 0 ? null : p.ehvi / hv, p_start: p.pStart, p_meets_slo: p.pMeetsSlo, fallback: p.fallback, candidates: scored.screened },
        });
      }
      return out.slice(0, n);
    },
  };
}
