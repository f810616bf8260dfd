import { meetsSlo, type BenchmarkResult, type ServerConfig, type Slo, type Trial } from '../domain/index.js';
import { configKey, type KeyDeployment } from './sampler.js';

/**
 * Measurement noise, repeats and ties. A study may measure one configuration more than once (a
 * re-measurement, `remeasure` origin): the configuration's figure is then the mean of its
 * measurements. Two configurations are tied when their mean output throughputs differ by less than
 * twice the standard error of the difference, SE = σ · sqrt(m₁²/n₁ + m₂²/n₂) with σ the relative
 * run-to-run noise. σ comes from the study's own repeats (pooled relative deviations from each
 * configuration's mean) shrunk toward DEFAULT_NOISE_REL, which counts as NOISE_PRIOR_DOF degrees of
 * freedom, so one lucky pair of repeats cannot declare the study noiseless. 3% is what short load runs
 * of one server vary by run to run (lm-bench's own repeats of the same configuration, and the 228–239
 * tok/s spread of the re-measurements that raised this question): with one run each, candidates within
 * about 8.5% of each other are not told apart; with three each, about 5%.
 *
 * What is compared is the study's figure of merit (`Ranking`): output throughput by default, joules
 * per output token for a study that minimises energy. The same relative noise applies to either
 * (J/token is the GPUs' power over that throughput, and the power varies less run to run than the
 * throughput does).
 */
export const DEFAULT_NOISE_REL = 0.03;
export const NOISE_PRIOR_DOF = 2;
/** Standard errors a difference must exceed to count as real (a two-sided test at about 95%). */
export const TIE_Z = 2;
/** Measurements of one configuration beyond which re-measuring it buys little (the SE falls as 1/√n). */
export const MAX_MEASUREMENTS = 3;
/** At most this share of a study's budget goes to re-measurements (at least one trial). */
export const REMEASURE_SHARE = 0.25;

/** What ranks configurations: a measured result's figure (null when it lacks one) and which way is better. */
export interface Ranking {
  readonly score: (r: BenchmarkResult) => number | null;
  readonly direction: 'maximize' | 'minimize';
}

export const BY_THROUGHPUT: Ranking = Object.freeze({ score: (r: BenchmarkResult) => r.output_throughput, direction: 'maximize' as const });

export interface ConfigGroup {
  readonly key: string;
  readonly config: ServerConfig;
  /** The configuration's finished trials, in order; the first names the group. */
  readonly trials: readonly Trial[];
  /** Its measured (complete) trials. */
  readonly measured: readonly Trial[];
  /** Mean output throughput of the measured trials (0 when none). */
  readonly meanThroughput: number;
  /** Mean of the ranking's figure over the measured trials that have it (null when none has). */
  readonly meanScore: number | null;
  /** The ranking's figure of each measured trial that has it (what the noise is estimated from). */
  readonly scores: readonly number[];
  /** Every trial of it finished measured and met the SLOs (lost requests counted). */
  readonly feasible: boolean;
}

export interface Noise {
  readonly rel: number;
  /** Degrees of freedom from repeats (0: the default alone). */
  readonly dof: number;
  readonly source: 'default' | 'repeats';
}

export interface Ties {
  /** The best configuration and those within noise of it, best first (their groups). */
  readonly groups: readonly ConfigGroup[];
  readonly noise: Noise;
}

const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/**
 * A trial a stopped or killed controller left running, failed as stale when the study resumed and run
 * again as a new trial (store `requeueStaleTrials`): it says nothing of its configuration and spent no
 * budget.
 */
export function orphaned(t: Pick<Trial, 'state' | 'attrs' | 'failure_reason'>): boolean {
  return t.state === 'failed' && (t.attrs['stale'] === true || (t.failure_reason ?? '').startsWith('stale'));
}

/**
 * Finished trials grouped by configuration, in order of first appearance (as resolved on `deployment`
 * when given: `configKey`). Orphans are left out: a crash mid-run made a configuration "failed once",
 * and its re-run, however good, was never recommended.
 */
export function configGroups(trials: readonly Trial[], slo: Slo, ranking: Ranking = BY_THROUGHPUT, deployment?: KeyDeployment): ConfigGroup[] {
  const byKey = new Map<string, Trial[]>();
  for (const t of trials) {
    if ((t.state !== 'complete' && t.state !== 'failed') || orphaned(t)) continue;
    const k = configKey(t.config, deployment);
    const g = byKey.get(k);
    if (g === undefined) byKey.set(k, [t]);
    else g.push(t);
  }
  return [...byKey.entries()].map(([key, ts]) => {
    const measured = ts.filter((t) => t.state === 'complete' && t.result !== null);
    const scores = measured.map((t) => ranking.score(t.result as BenchmarkResult)).filter((x): x is number => x !== null && Number.isFinite(x));
    return {
      key,
      config: (ts[0] as Trial).config,
      trials: ts,
      measured,
      meanThroughput: mean(measured.map((t) => t.result?.output_throughput ?? 0)),
      meanScore: scores.length === 0 ? null : mean(scores),
      scores,
      // A configuration that failed or missed once is not one to recommend on its better runs.
      feasible: measured.length === ts.length && measured.every((t) => t.result !== null && meetsSlo(slo, t.result)),
    };
  });
}

/** The relative run-to-run noise, from the repeats there are, shrunk toward the default. */
export function estimateNoise(groups: readonly ConfigGroup[]): Noise {
  let ss = 0;
  let dof = 0;
  for (const g of groups) {
    const m = g.meanScore;
    if (g.scores.length < 2 || m === null || m <= 0) continue;
    for (const x of g.scores) ss += (x / m - 1) ** 2;
    dof += g.scores.length - 1;
  }
  if (dof === 0) return { rel: DEFAULT_NOISE_REL, dof: 0, source: 'default' };
  const rel = Math.sqrt((ss + NOISE_PRIOR_DOF * DEFAULT_NOISE_REL ** 2) / (dof + NOISE_PRIOR_DOF));
  return { rel, dof, source: 'repeats' };
}

/** Whether two configurations' mean figures are within the noise of each other (never when one has none). */
export function withinNoise(a: ConfigGroup, b: ConfigGroup, noise: Noise): boolean {
  if (a.meanScore === null || b.meanScore === null) return false;
  const se = noise.rel * Math.sqrt(a.meanScore ** 2 / Math.max(1, a.scores.length) + b.meanScore ** 2 / Math.max(1, b.scores.length));
  return Math.abs(a.meanScore - b.meanScore) <= TIE_Z * se;
}

/**
 * The feasible configurations by their mean figure, best first; those whose runs lack the figure (a
 * run without power, when energy ranks) follow, by throughput.
 */
export function rankFeasible(groups: readonly ConfigGroup[], ranking: Ranking = BY_THROUGHPUT): ConfigGroup[] {
  const sign = ranking.direction === 'maximize' ? 1 : -1;
  return groups
    .filter((g) => g.feasible && g.measured.length > 0)
    .sort((a, b) => {
      if (a.meanScore === null || b.meanScore === null) return a.meanScore === b.meanScore ? b.meanThroughput - a.meanThroughput : a.meanScore === null ? 1 : -1;
      return sign * (b.meanScore - a.meanScore);
    });
}

/** The best feasible configuration and every one within noise of it; null when fewer than two are tied. */
export function findTies(trials: readonly Trial[], slo: Slo, ranking: Ranking = BY_THROUGHPUT, deployment?: KeyDeployment): Ties | null {
  const groups = configGroups(trials, slo, ranking, deployment);
  const noise = estimateNoise(groups);
  const ranked = rankFeasible(groups, ranking);
  const best = ranked[0];
  if (best === undefined) return null;
  const tied = ranked.filter((g) => g === best || withinNoise(best, g, noise));
  return tied.length < 2 ? null : { groups: tied, noise };
}

/**
 * The configuration to measure again, or null: when the best measured configurations are tied, the
 * tied one measured fewest times (the leader first among equals), while it has fewer than
 * MAX_MEASUREMENTS, none of it is running, and re-measurements have not used their share of the budget.
 */
export function remeasureCandidate(trials: readonly Trial[], slo: Slo, budgetTrials: number, ranking: Ranking = BY_THROUGHPUT, deployment?: KeyDeployment): { config: ServerConfig; tied: number[] } | null {
  const spent = trials.filter((t) => t.origin === 'remeasure').length;
  if (spent >= Math.max(1, Math.floor(budgetTrials * REMEASURE_SHARE))) return null;
  const ties = findTies(trials, slo, ranking, deployment);
  if (ties === null) return null;
  const pending = new Set(trials.filter((t) => t.state === 'running' || t.state === 'waiting').map((t) => configKey(t.config, deployment)));
  const open = ties.groups.filter((g) => g.measured.length < MAX_MEASUREMENTS && !pending.has(g.key));
  if (open.length === 0) return null;
  // The leader first among equals: `ties.groups` is ranked best first, and the sort is stable.
  const pick = [...open].sort((a, b) => a.measured.length - b.measured.length)[0] as ConfigGroup;
  return { config: pick.config, tied: ties.groups.map((g) => (g.trials[0] as Trial).number) };
}
