import { Slo, type BenchmarkResult, type ServerConfig, type Trial } from '../../domain/index.js';
import { merit, sloConstraints } from '../objectives.js';
import { targetsOf, type TargetValues } from '../../surrogate/targets.js';
import { configKey, type KeyDeployment } from '../sampler.js';
import { diversePicks, layoutOf, saturatedRun, simulatedSearch, type SimSearch, type SimSearchOptions, type SimulatedCandidate } from './search.js';
import { pMeetsUnderError, residualPosterior, type ResidualPosterior } from './residual.js';

/** The SLO limits divided by the measured residual of their metric, rounded to 10% steps (so searches are reused). */
export function simulatorSlo(slo: Slo, residual: ResidualPosterior): Slo {
  const out: Record<string, unknown> = { ...slo };
  for (const c of sloConstraints(slo)) {
    const step = Math.round((residual[c.target]?.mean ?? 0) / Math.log(1.1));
    out[c.key] = c.limitMs / 1.1 ** step;
  }
  return Slo.parse(out);
}

/**
 * The simulated candidates re-read through what has been measured: each metric moved by the
 * residual's posterior mean, P(meets the SLOs) from its predictive spread, ranked by expected
 * goodput (the search's merit, corrected: throughput per GPU or tokens per joule, × P(meets)); those in
 * `taken` left out (its keys resolved on `opts.deployment` when given, as `configKey` makes them); a
 * layout in `opts.byLayout` corrected by its own runs.
 */
export function rankCorrected(
  search: SimSearch,
  global: ResidualPosterior,
  slo: Slo,
  taken: ReadonlySet<string>,
  opts: { readonly byLayout?: ReadonlyMap<string, ResidualPosterior>; readonly deployment?: KeyDeployment } = {},
): { candidate: SimulatedCandidate; expected: number; pMeets: number }[] {
  const constraints = sloConstraints(slo);
  const ranked: { candidate: SimulatedCandidate; expected: number; pMeets: number }[] = [];
  for (const c of search.simulated) {
    if (c.result === null || taken.has(configKey(c.config, opts.deployment))) continue;
    // A layout measured already is corrected by its own runs; others by all of them.
    const residual = opts.byLayout?.get(layoutOf(c.config)) ?? global;
    const t = search.rule.target;
    const v = c.values[t];
    if (v === undefined) continue;
    const p = saturatedRun(c.result) ? 0 : pMeetsUnderError(c.values, constraints, residual);
    const corrected = v * Math.exp(residual[t]?.mean ?? 0);
    ranked.push({ candidate: c, expected: merit({ [t]: corrected }, search.rule) * p, pMeets: p });
  }
  return ranked.sort((a, b) => b.expected - a.expected);
}

/**
 * The simulator as a study's guide until trees can be trained: one simulated search of the space for
 * the study's deployment and workload, read two ways. The initial design takes diverse picks from its
 * Pareto set; after that, until the surrogate has enough runs for trees, proposals are the simulated
 * candidates re-ranked through the residual (measured ÷ simulated) of every trial measured so far, each
 * measured configuration simulated once for the comparison. So an 8-trial study is model-guided from
 * its second or third trial, and a wrong simulator is corrected by the first measurement.
 */
/** `taken`: configKeys on the guide's context (`configKey(config, context)`). */
export interface SimulatorGuide {
  design(k: number, taken: ReadonlySet<string>): Promise<ServerConfig[]>;
  propose(k: number, trials: readonly Trial[], taken: ReadonlySet<string>): Promise<ServerConfig[]>;
}

export function simulatorGuide(opts: Omit<SimSearchOptions, 'exclude'>): SimulatorGuide {
  // One search per SLO as the simulator should see it: the study's, then moved by the measured residual
  // (a server 40% slower than simulated on TTFT must be simulated at 1/1.4 of the limit), in 10% steps.
  const searches = new Map<string, SimSearch>();
  const searchFor = (slo: Slo): SimSearch => {
    const key = JSON.stringify(Object.entries(slo).sort());
    let s = searches.get(key);
    if (s === undefined) {
      s = simulatedSearch({ ...opts, slo, rng: opts.rng.fork(`search-${searches.size}`) });
      searches.set(key, s);
    }
    return s;
  };
  const get = (): SimSearch => searchFor(opts.slo);
  const simulatedOf = new Map<string, TargetValues | null>();
  const simulatedValues = (config: ServerConfig): TargetValues | null => {
    const key = configKey(config, opts.context);
    if (!simulatedOf.has(key)) {
      const hit = get().simulated.find((c) => configKey(c.config, opts.context) === key);
      const r: BenchmarkResult | null = hit !== undefined ? hit.result : opts.simulate(config);
      simulatedOf.set(key, r === null || r.completed === 0 ? null : targetsOf(r, opts.context.gpuCount));
    }
    return simulatedOf.get(key) ?? null;
  };
  return {
    design(k, taken) {
      // Over-pick by what is taken, so the spread is the same one a fresh study would get.
      const picks = diversePicks(get(), k + taken.size).filter((c) => !taken.has(configKey(c.config, opts.context)));
      return Promise.resolve(picks.slice(0, k).map((c) => c.config));
    },
    propose(k, trials, taken) {
      const pairs: { simulated: TargetValues; measured: TargetValues; layout: string }[] = [];
      for (const t of trials) {
        if (t.state !== 'complete' || t.result === null) continue;
        const simulated = simulatedValues(t.config);
        if (simulated !== null) pairs.push({ simulated, measured: targetsOf(t.result, opts.context.gpuCount), layout: layoutOf(t.config) });
      }
      const residual = residualPosterior(pairs);
      const byLayout = new Map<string, ResidualPosterior>();
      for (const layout of new Set(pairs.map((p) => p.layout))) byLayout.set(layout, residualPosterior(pairs.filter((p) => p.layout === layout)));
      const search = pairs.length === 0 ? get() : searchFor(simulatorSlo(opts.slo, residual));
      const ranked = rankCorrected(search, residual, opts.slo, taken, { byLayout, deployment: opts.context }).filter((r) => r.expected > 0);
      return Promise.resolve(ranked.slice(0, k).map((r) => r.candidate.config));
    },
  };
}
