import { z } from 'zod';
import type { BenchmarkResult, Diagnosis, Hardware, ModelSpec, Study, StudySpec, Trial } from '../domain/index.js';
import { withDiagnosis } from '../diagnose/classify.js';
import { checkSlo, Cost, costOf, formatSloString, lostBreaks, meetsSlo, servableModel, servedModelWarning, ServerConfig, Slo, SLO_KEYS, sloField, StudyObjective, vllmServeArgs, type SloKey } from '../domain/index.js';
import { defaultCatalog } from '../catalog/index.js';
import { loadPrices, type Prices } from '../cost/prices.js';
import { goodputOutputTokS } from '../cost/result-cost.js';
import { measuredPickText, studyObjectiveOf } from '../optimize/objectives.js';
import { studyRanking } from '../optimize/study.js';
import { configGroups, estimateNoise, orphaned, rankFeasible, withinNoise, type ConfigGroup, type Noise } from '../optimize/repeats.js';
import { configKey } from '../optimize/sampler.js';
import { roundUpLimit } from '../optimize/nearest.js';
import { LOST_SHARE_LIMIT, trialRequests, type RequestCounts } from './lost-requests.js';
import { FAILURE_CLASS_TEXT, type FailureClass } from '../optimize/failure-classes.js';
import type { FailureRule } from '../optimize/failure-rules.js';
import { vllmConfigYaml } from '../optimize/recommend.js';
import { shellQuote } from '../util/shell.js';
import { trialFailure } from './failure-book.js';
import type { StopReason } from './loop.js';

/**
 * What a finished (or stopped) study says: every trial, the measured Pareto front, and the
 * recommendation — the SLO-feasible configuration best by the study's objective (the most output
 * throughput per GPU, or the fewest joules per output token), measured, not predicted (the mean of its
 * measurements when it was measured more than once) — beside vLLM's defaults on the same workload,
 * with its energy and, where the GPU has a price, its cost per million output tokens. Requests a run lost count against its SLO verdict (domain/slo.ts
 * `meetsSlo`) and are shown per trial. When other configurations are within measurement noise of the
 * best (optimize/repeats.ts), the summary names them as tied instead of claiming a single winner.
 */
export interface TrialSummary {
  readonly number: number;
  readonly state: Trial['state'];
  readonly origin: Trial['origin'];
  readonly config: ServerConfig;
  readonly meets_slo: boolean | null;
  /** Requests its run sent and lost (null when it ran no load); a trial that lost more than 5% failed. */
  readonly requests: RequestCounts | null;
  /** The first trial of the same configuration when this one measured it again; else null. */
  readonly repeat_of: number | null;
  readonly metrics: TrialMetrics | null;
  readonly failure_reason: string | null;
  /** The failure's class (failure-classes.ts), from what the target said; null when it did not fail. */
  readonly failure_class: FailureClass | null;
  /** Why a measured trial missed the SLOs or saturated (`none` when it did neither); null when not measured. */
  readonly diagnosis: Diagnosis | null;
}

/** A measured trial's figures; the study's JSON (`tune --json`, `GET /v1/studies/:id`) states them so. */
export const TrialMetrics = z.object({
  output_throughput: z.number(),
  output_throughput_per_gpu: z.number(),
  p99_ttft_ms: z.number(),
  p99_itl_ms: z.number(),
  p99_tpot_ms: z.number(),
  p99_e2el_ms: z.number(),
  gpu_memory_reserved_gib: z.number().nullable(),
  /** Joules per output token and average power of all the deployment's GPUs (null: the run had no power figure). */
  energy_per_output_token_j: z.number().nullable(),
  avg_power_w: z.number().nullable(),
});
export type TrialMetrics = z.infer<typeof TrialMetrics>;

/** The study's pick, measured: the schema is the type (issue 27 §1), as the service's answer declares it. */
export const StudyRecommendation = z.object({
  /** What the study optimised, and the rule that picked this configuration, in words. */
  objective: StudyObjective,
  rule: z.string(),
  trial: z.int(),
  config: ServerConfig,
  vllm_command: z.string(),
  vllm_config_yaml: z.string(),
  /**
   * Why the commands are not to be pasted as printed: a model read from a JSON file other than a
   * config.json is served as a placeholder to replace (domain/served-model.ts), as `recommend` prints it.
   */
  warnings: z.array(z.string()),
  /** Its metrics: the mean over its measurements (`measurements`) when it was measured more than once. */
  measured: TrialMetrics,
  /** The trials that measured this configuration. */
  measurements: z.array(z.int()),
  /**
   * Configurations within measurement noise of this one, each by its first trial with its mean
   * throughput: the pick is then one of a tie, not a winner. Empty when it stands clear.
   */
  tied_with: z.array(z.object({ trial: z.int(), measurements: z.int(), output_throughput: z.number(), energy_per_output_token_j: z.number().nullable() })),
  /**
   * `within_noise`: the gain over the defaults (on the study's figure) is smaller than the noise (null
   * when there is no gain to judge); `energy_per_output_token_change_pct`: the pick's J/token against
   * the defaults' (negative: fewer joules), when both runs had power figures.
   */
  vs_default: z.object({
    default_trial: z.int().nullable(),
    default_meets_slo: z.boolean().nullable(),
    throughput_gain_pct: z.number().nullable(),
    energy_per_output_token_change_pct: z.number().nullable(),
    within_noise: z.boolean().nullable(),
  }),
  /** The pick's GPUs at their price and that over its measured goodput (null: the GPU has no price). */
  cost: Cost.nullable(),
  /** `knob=value` of the knobs whose values change the model's numerics (fp8 weights or KV cache). */
  numerics_changes: z.array(z.string()),
  /**
   * When the pick changes numerics: the best measured trial meeting the SLOs that keeps the
   * checkpoint's precision, with its throughput relative to the pick; null when there is none.
   */
  precision_keeping: z.object({ trial: z.int(), config: ServerConfig, vllm_command: z.string(), measured: TrialMetrics, throughput_vs_pick_pct: z.number() }).nullable(),
});
export type StudyRecommendation = z.infer<typeof StudyRecommendation>;

/** One SLO limit against a configuration's measured figure (the mean over its measurements). */
export const MeasuredSloCheck = z.object({ slo: z.enum(SLO_KEYS), measured_ms: z.number(), limit_ms: z.number(), ratio: z.number(), met: z.boolean() });
export type MeasuredSloCheck = z.infer<typeof MeasuredSloCheck>;

/**
 * When no measured configuration met the SLOs: the one that came nearest, so the summary says how far
 * off the study's best came rather than only that nothing met them. Configurations are ranked as the
 * recommendation ranks them (their measurements' mean figures): one that sustained the load and lost no
 * more requests than the SLOs allow first, then one whose lost requests break an SLO, then one that
 * saturated (its percentiles only say how long it ran); within each, by the worst SLO's measured ÷ limit.
 * Its `vllm serve` line does not meet the SLOs (`meets_slo` is false): a starting point, not a pick.
 */
export const NearestMiss = z.object({
  /** The configuration's first measured trial. */
  trial: z.int(),
  /** The trials that measured this configuration (its figures are their mean). */
  measurements: z.array(z.int()),
  /** Trials of this configuration that failed (it then missed on those runs whatever its figures). */
  failed_trials: z.array(z.int()),
  config: ServerConfig,
  meets_slo: z.literal(false),
  vllm_command: z.string(),
  warnings: z.array(z.string()),
  measured: TrialMetrics,
  /** The largest measured ÷ limit over the SLO's latency limits (null: it sets none). */
  worst_ratio: z.number().nullable(),
  /** Every latency limit, the worst first. */
  checks: z.array(MeasuredSloCheck),
  /** A measurement's queue grew without bound: no SLO holds for it, whatever its percentiles read. */
  saturated: z.boolean(),
  /** The SLO keys its lost requests break on their own (domain/slo.ts `lostBreaks`), over its measurements. */
  lost_breaks: z.array(z.enum(SLO_KEYS)),
  /** The SLO its figures would meet (each missed limit raised to its figure, rounded up); null when saturated, losing requests, failed, or no latency limit is set. */
  would_meet: Slo.nullable(),
  /** In words: "trial 5 came nearest: p99 TTFT 212 ms against 1 ms (212×); p99 ITL met (31.0 ms of 50 ms)". */
  text: z.string(),
});
export type NearestMiss = z.infer<typeof NearestMiss>;

export interface StudySummary {
  readonly study: { readonly id: number; readonly name: string; readonly state: Study['state']; readonly spec: Study['spec'] };
  readonly stop_reason: StopReason | null;
  readonly trials: TrialSummary[];
  readonly front: number[];
  readonly recommendation: StudyRecommendation | null;
  /** No recommendation: the configuration that came nearest the SLOs (null: a pick, or nothing measured). */
  readonly nearest_miss: NearestMiss | null;
  /**
   * `failed`: trials that failed for a reason of their configuration's or the run's; `orphaned`: trials a
   * stopped or killed controller left running, failed as stale on resume and run again (repeats.ts `orphaned`).
   */
  readonly counts: { readonly complete: number; readonly failed: number; readonly failed_to_start: number; readonly orphaned: number; readonly feasible: number; readonly remeasured: number; readonly lost_requests: number };
  /** The relative run-to-run noise ties are judged by (optimize/repeats.ts): from repeats, or the default. */
  readonly noise: Noise;
  /** What failed and what was learned from it: failures per class and the rules they became. */
  readonly failures: { readonly by_class: Partial<Record<FailureClass, number[]>>; readonly rules: FailureRule[] };
}

function metricsOf(r: BenchmarkResult, gpus: number): NonNullable<TrialSummary['metrics']> {
  const e = r.energy;
  return {
    energy_per_output_token_j: e?.energy_per_output_token_j ?? null,
    avg_power_w: e?.avg_power_w ?? null,
    output_throughput: r.output_throughput,
    output_throughput_per_gpu: r.output_throughput / gpus,
    p99_ttft_ms: r.p99_ttft_ms,
    p99_itl_ms: r.p99_itl_ms,
    p99_tpot_ms: r.p99_tpot_ms,
    p99_e2el_ms: r.p99_e2el_ms,
    gpu_memory_reserved_gib: r.server_metrics?.gpu_memory_reserved_gib ?? null,
  };
}

export function summarizeStudy(opts: {
  readonly study: Study;
  readonly trials: readonly Trial[];
  readonly front: readonly Trial[];
  readonly model: ModelSpec;
  /**
   * The study's GPU: with it, configurations are told apart as vLLM resolves them on it (`configKey`), so
   * vLLM's defaults written out are grouped with `{}`; without it, as written.
   */
  readonly hardware?: Hardware;
  readonly stopReason: StopReason | null;
  /** The space's `numericsChanges`; without it, no configuration is taken to change numerics. */
  readonly numericsChanges?: (config: ServerConfig) => string[];
  /** Rules learned from this study's failures (failure-book.ts `studyRules`). */
  readonly rules?: readonly FailureRule[];
  /** GPU prices for the pick's cost (default: data/prices.yaml; null: leave the cost out). */
  readonly prices?: Prices | null;
}): StudySummary {
  const changes = opts.numericsChanges ?? (() => []);
  const { study, model } = opts;
  // The model as the printed commands serve it (domain/served-model.ts), as `recommend` prints it.
  const served = servableModel(model);
  const deployment = opts.hardware === undefined ? undefined : { hardware: opts.hardware, model };
  const gpus = study.spec.hardware.count;
  const firstOf = new Map<string, number>();
  const trials: TrialSummary[] = opts.trials.map((t) => {
    const key = configKey(t.config, deployment);
    const first = firstOf.get(key);
    if (first === undefined && (t.state === 'complete' || t.state === 'failed') && !orphaned(t)) firstOf.set(key, t.number);
    return {
      number: t.number,
      state: t.state,
      origin: t.origin,
      config: t.config,
      meets_slo: t.result === null ? null : meetsSlo(study.spec.slo, t.result),
      requests: trialRequests(t),
      repeat_of: t.origin === 'remeasure' && first !== undefined ? first : null,
      metrics: t.result === null ? null : metricsOf(t.result, gpus),
      failure_reason: t.failure_reason,
      failure_class: trialFailure(t)?.class ?? null,
      // Trials stored before runs carried a diagnosis get one from what their result holds.
      diagnosis: t.result === null ? null : (withDiagnosis(t.result, t.config, study.spec.slo).diagnosis ?? null),
    };
  });
  const byClass: Partial<Record<FailureClass, number[]>> = {};
  for (const t of trials) if (t.failure_class !== null) (byClass[t.failure_class] ??= []).push(t.number);
  const feasible = trials.filter((t) => t.state === 'complete' && t.meets_slo === true && t.metrics !== null);
  // Configurations, not trials, are ranked: repeats of one are averaged, and one that missed on any run is out.
  const ranking = studyRanking(study.spec);
  const objective = studyObjectiveOf(study.spec);
  const groups = configGroups(opts.trials, study.spec.slo, ranking, deployment);
  const noise = estimateNoise(groups);
  const ranked = rankFeasible(groups, ranking);
  const best = ranked[0];
  const firstNumber = (g: ConfigGroup): number => (g.trials[0] as Trial).number;
  const def = trials.find((t) => t.origin === 'default');
  const defGroup = def === undefined ? undefined : groups.find((g) => g.key === configKey(def.config, deployment));
  let recommendation: StudyRecommendation | null = null;
  if (best !== undefined) {
    const measured = meanMetrics(best.measured, gpus);
    const bestChanges = changes(best.config);
    const keeper = bestChanges.length === 0 ? undefined : ranked.find((g) => changes(g.config).length === 0);
    const defFeasible = defGroup !== undefined && defGroup.feasible && defGroup.measured.length > 0;
    const defTput = defFeasible ? defGroup.meanThroughput : null;
    const defMeasured = defGroup === undefined || defGroup.measured.length === 0 ? null : meanMetrics(defGroup.measured, gpus);
    const defJ = defMeasured?.energy_per_output_token_j ?? null;
    recommendation = {
      objective,
      rule: measuredPickText(objective),
      trial: firstNumber(best),
      config: best.config,
      vllm_command: shellQuote(['vllm', ...vllmServeArgs(served.hf_name, best.config)]),
      vllm_config_yaml: vllmConfigYaml(served, best.config),
      warnings: servedModelWarning(model),
      measured,
      measurements: best.measured.map((t) => t.number),
      tied_with: ranked
        .filter((g) => g !== best && withinNoise(best, g, noise))
        .map((g) => ({ trial: firstNumber(g), measurements: g.measured.length, output_throughput: g.meanThroughput, energy_per_output_token_j: meanMetrics(g.measured, gpus).energy_per_output_token_j })),
      vs_default: {
        // The defaults' first trial that says something of them: a crash's orphan was run again under another number.
        default_trial: defGroup === undefined ? (def?.number ?? null) : firstNumber(defGroup),
        default_meets_slo: defGroup === undefined || defGroup.measured.length === 0 ? (def?.meets_slo ?? null) : defGroup.feasible,
        throughput_gain_pct: defTput === null || defTput === 0 ? null : (measured.output_throughput / defTput - 1) * 100,
        energy_per_output_token_change_pct: defJ === null || defJ === 0 || measured.energy_per_output_token_j === null ? null : (measured.energy_per_output_token_j / defJ - 1) * 100,
        within_noise: defFeasible && defGroup !== best ? withinNoise(best, defGroup, noise) : null,
      },
      cost: pickCost(study.spec, best.measured, opts.prices),
      numerics_changes: bestChanges,
      precision_keeping:
        keeper === undefined
          ? null
          : {
              trial: firstNumber(keeper),
              config: keeper.config,
              vllm_command: shellQuote(['vllm', ...vllmServeArgs(served.hf_name, keeper.config)]),
              measured: meanMetrics(keeper.measured, gpus),
              throughput_vs_pick_pct: (keeper.meanThroughput / best.meanThroughput - 1) * 100,
            },
    };
  }
  return {
    study: { id: study.id, name: study.spec.name, state: study.state, spec: study.spec },
    stop_reason: opts.stopReason,
    trials,
    front: opts.front.map((t) => t.number),
    recommendation,
    nearest_miss: recommendation === null ? nearestMiss(groups, study.spec.slo, gpus, served.hf_name, servedModelWarning(model)) : null,
    counts: {
      complete: trials.filter((t) => t.state === 'complete').length,
      failed: opts.trials.filter((t) => t.state === 'failed' && !orphaned(t)).length,
      failed_to_start: opts.trials.filter((t) => t.state === 'failed' && t.started === false).length,
      orphaned: opts.trials.filter(orphaned).length,
      feasible: feasible.length,
      remeasured: trials.filter((t) => t.origin === 'remeasure').length,
      lost_requests: trials.reduce((n, t) => n + (t.requests?.lost ?? 0), 0),
    },
    noise,
    failures: { by_class: byClass, rules: [...(opts.rules ?? [])] },
  };
}

/** "p99 TTFT", "mean ITL": an SLO key as the summary names its figure. */
function sloLabel(key: SloKey): string {
  const { metric, stat } = sloField(key);
  return `${stat} ${metric.toUpperCase()}`;
}

/** A latency in ms at the precision a person reads it: 212, 31.0, 0.52. */
function msText(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toPrecision(2);
}

function nearestMissText(n: Omit<NearestMiss, 'text'>): string {
  const times = n.measurements.length > 1 ? ` (mean of trials ${n.measurements.join(', ')})` : '';
  const parts = n.checks.map((c) =>
    c.met ? `${sloLabel(c.slo)} met (${msText(c.measured_ms)} ms of ${c.limit_ms} ms)` : `${sloLabel(c.slo)} ${msText(c.measured_ms)} ms against ${c.limit_ms} ms (${c.ratio >= 10 ? c.ratio.toFixed(0) : c.ratio.toFixed(2)}×)`,
  );
  if (parts.length === 0) parts.push('the SLOs set no latency limit');
  if (n.saturated) parts.push('saturated: its queue grew without bound, so no SLO holds');
  if (n.lost_breaks.length > 0) parts.push(`the requests it lost break ${n.lost_breaks.join(', ')}`);
  if (n.failed_trials.length > 0) parts.push(`failed on trial${n.failed_trials.length === 1 ? '' : 's'} ${n.failed_trials.join(', ')}`);
  return `trial ${n.trial} came nearest${times}: ${parts.join('; ')}`;
}

/** The measured configuration nearest the SLOs (see `NearestMiss`), or null when none was measured. */
function nearestMiss(groups: readonly ConfigGroup[], slo: Slo, gpus: number, hfName: string, warnings: string[]): NearestMiss | null {
  const ranked = groups
    .filter((g) => g.measured.length > 0)
    .map((g) => {
      const results = g.measured.map((t) => t.result as BenchmarkResult);
      // Each limit against the mean of its figure over the measurements, as the recommendation states its figures.
      const perRun = results.map((r) => new Map(checkSlo(slo, r).map((c) => [c.key, c.valueMs])));
      const checks: MeasuredSloCheck[] = [];
      for (const key of SLO_KEYS) {
        const limit = slo[key];
        if (limit === undefined) continue;
        const values = perRun.map((m) => m.get(key) ?? Number.POSITIVE_INFINITY);
        // A figure its results lack cannot be stated (JSON has no infinity): that limit is left out.
        if (!values.every(Number.isFinite)) continue;
        const measured = values.reduce((a, b) => a + b, 0) / values.length;
        checks.push({ slo: key, measured_ms: measured, limit_ms: limit, ratio: measured / limit, met: measured <= limit });
      }
      checks.sort((a, b) => b.ratio - a.ratio);
      const saturated = results.some((r) => r.saturation?.saturated === true);
      const lost = new Set(results.flatMap((r) => lostBreaks(slo, r)));
      const failedTrials = g.trials.filter((t) => t.state === 'failed').map((t) => t.number);
      // A run that kept up first; one that lost too many requests, or a configuration that also failed, next.
      const rank = saturated ? 2 : lost.size > 0 || failedTrials.length > 0 ? 1 : 0;
      return { g, checks, saturated, lost: SLO_KEYS.filter((k) => lost.has(k)), failedTrials, rank, worst: checks[0]?.ratio ?? null };
    })
    .sort((a, b) => a.rank - b.rank || (a.worst ?? Number.POSITIVE_INFINITY) - (b.worst ?? Number.POSITIVE_INFINITY) || b.g.meanThroughput - a.g.meanThroughput || (a.g.measured[0] as Trial).number - (b.g.measured[0] as Trial).number);
  const best = ranked[0];
  if (best === undefined) return null;
  const { g } = best;
  // No latency limit to raise (or none that would do: saturated, losing requests, failing), or every limit
  // met on the mean while some run missed one: no SLO to offer.
  const wouldMeet = best.checks.length === 0 || best.checks.every((c) => c.met) || best.saturated || best.lost.length > 0 || best.failedTrials.length > 0 ? null : Object.fromEntries(best.checks.map((c) => [c.slo, c.met ? c.limit_ms : roundUpLimit(c.measured_ms)]));
  const n: Omit<NearestMiss, 'text'> = {
    // Named by a trial that has figures (its first trial may be one that failed).
    trial: (g.measured[0] as Trial).number,
    measurements: g.measured.map((t) => t.number),
    failed_trials: best.failedTrials,
    config: g.config,
    meets_slo: false,
    vllm_command: shellQuote(['vllm', ...vllmServeArgs(hfName, g.config)]),
    warnings,
    measured: meanMetrics(g.measured, gpus),
    worst_ratio: best.worst,
    checks: best.checks,
    saturated: best.saturated,
    lost_breaks: best.lost,
    would_meet: wouldMeet === null ? null : Slo.parse(wouldMeet),
  };
  return { ...n, text: nearestMissText(n) };
}

/** The nearest miss in lines: what it measured, the SLO it would meet, its command marked as missing them. */
export function formatNearestMiss(n: NearestMiss | null): string[] {
  if (n === null) return [];
  const lines = [`${n.text.charAt(0).toUpperCase()}${n.text.slice(1)}.`];
  if (n.would_meet !== null) lines.push(`  It would meet ${formatSloString(n.would_meet)}.`);
  lines.push('  Its command, which does NOT meet the SLOs (the nearest miss, not a recommendation):', `  ${n.vllm_command}`);
  for (const w of n.warnings) lines.push(`  Warning: ${w}`);
  return lines;
}

let defaultPrices: Prices | null | undefined;

/**
 * What the pick costs at the goodput it measured (the mean over its measurements): its GPUs at their
 * price per GPU-hour (the study's datasheet's own, else data/prices.yaml); null without a price.
 */
function pickCost(spec: StudySpec, measured: readonly Trial[], given: Prices | null | undefined): Cost | null {
  let prices = given;
  if (prices === undefined) {
    // Read once per process; a prices file that does not load leaves the cost out rather than the summary.
    if (defaultPrices === undefined) {
      try {
        defaultPrices = loadPrices(defaultCatalog());
      } catch {
        defaultPrices = null;
      }
    }
    prices = defaultPrices;
  }
  if (prices === null) return null;
  const hw = spec.hardware_spec ?? defaultCatalog().findGpu(spec.hardware.gpu);
  if (hw === null) return null;
  const price = prices.of(hw);
  if (price === null || measured.length === 0) return null;
  const goodput = measured.reduce((a, t) => a + goodputOutputTokS(t.result as BenchmarkResult), 0) / measured.length;
  return costOf(price.usdPerGpuHour, spec.hardware.count, goodput, price.source);
}

/** The mean of each metric over a configuration's measurements (one measurement: its own figures). */
function meanMetrics(measured: readonly Trial[], gpus: number): NonNullable<TrialSummary['metrics']> {
  const all = measured.map((t) => metricsOf(t.result as BenchmarkResult, gpus));
  const avg = (f: (m: NonNullable<TrialSummary['metrics']>) => number): number => all.reduce((a, m) => a + f(m), 0) / Math.max(1, all.length);
  const mem = all.map((m) => m.gpu_memory_reserved_gib).filter((x): x is number => x !== null);
  // An energy figure is the mean of the runs that had one (power is never why a run is lost).
  const meanOf = (f: (m: NonNullable<TrialSummary['metrics']>) => number | null): number | null => {
    const xs = all.map(f).filter((x): x is number => x !== null);
    return xs.length === 0 ? null : xs.reduce((a, x) => a + x, 0) / xs.length;
  };
  return {
    energy_per_output_token_j: meanOf((m) => m.energy_per_output_token_j),
    avg_power_w: meanOf((m) => m.avg_power_w),
    output_throughput: avg((m) => m.output_throughput),
    output_throughput_per_gpu: avg((m) => m.output_throughput_per_gpu),
    p99_ttft_ms: avg((m) => m.p99_ttft_ms),
    p99_itl_ms: avg((m) => m.p99_itl_ms),
    p99_tpot_ms: avg((m) => m.p99_tpot_ms),
    p99_e2el_ms: avg((m) => m.p99_e2el_ms),
    gpu_memory_reserved_gib: mem.length === 0 ? null : mem.reduce((a, b) => a + b, 0) / mem.length,
  };
}

/** "lost 2 of 48 requests", or '' when the run lost none (or ran no load). */
export function lostText(r: RequestCounts | null): string {
  return r === null || r.lost === 0 ? '' : `lost ${r.lost} of ${r.total} requests`;
}

/** The trials that lost requests, in lines (empty when none did). */
export function formatLost(s: StudySummary): string[] {
  const lossy = s.trials.filter((t) => (t.requests?.lost ?? 0) > 0);
  if (lossy.length === 0) return [];
  const lines = ['', `Requests lost (a trial losing more than ${LOST_SHARE_LIMIT * 100}% failed; fewer count as SLO misses):`];
  for (const t of lossy) lines.push(`  trial ${t.number}: ${lostText(t.requests)} (${t.state})`);
  return lines;
}

/** "What failed and what we learned from it", in lines (empty when nothing failed). */
export function formatFailures(f: StudySummary['failures']): string[] {
  const classes = Object.entries(f.by_class) as [FailureClass, number[]][];
  if (classes.length === 0) return [];
  const lines = ['', 'What failed and what we learned from it:'];
  for (const [cls, nums] of classes) lines.push(`  ${FAILURE_CLASS_TEXT[cls]}: ${nums.length === 1 ? 'trial' : 'trials'} ${nums.join(', ')}`);
  if (f.rules.length === 0) lines.push('  no rule on the knobs (these classes name no knob; the feasibility model learns from them)');
  for (const r of f.rules) lines.push(`  rule: ${r.text}`);
  return lines;
}

export function formatSummary(s: StudySummary): string {
  const lines: string[] = [];
  const sp = s.study.spec;
  lines.push(`Study "${s.study.name}": ${sp.model} on ${sp.hardware.count}× ${sp.hardware.gpu}, workload ${sp.workload.name}, stopped: ${s.stop_reason ?? s.study.state}`);
  const remeasured = s.counts.remeasured > 0 ? `, ${s.counts.remeasured} re-measurements` : '';
  const lost = s.counts.lost_requests > 0 ? `; ${s.counts.lost_requests} requests lost in all` : '';
  const orphans = s.counts.orphaned > 0 ? `; ${s.counts.orphaned} cut short by a stopped run and run again` : '';
  lines.push(`Trials: ${s.trials.length} (${s.counts.complete} measured, ${s.counts.failed} failed, ${s.counts.failed_to_start} of them failed to start; ${s.counts.feasible} meet the SLOs${remeasured}${lost}${orphans})`);
  const r = s.recommendation;
  if (r === null) {
    lines.push('No measured configuration met the SLOs: loosen them, add GPUs, or give the study more trials.');
    lines.push(...formatNearestMiss(s.nearest_miss ?? null));
    lines.push(...formatLost(s), ...formatFailures(s.failures));
    return lines.join('\n');
  }
  const m = r.measured;
  const noise = `±${(s.noise.rel * 100).toFixed(1)}% run-to-run noise, ${s.noise.source === 'repeats' ? `estimated from ${s.noise.dof} repeat(s)` : 'assumed: no repeats yet'}`;
  const times = r.measurements.length > 1 ? `mean of trials ${r.measurements.join(', ')}` : 'measured once';
  const energy = r.objective === 'tokens_per_joule';
  // What the tie is judged on: the study's figure.
  const figure = (tput: number, j: number | null): string => (energy ? `${j === null ? '–' : j.toPrecision(3)} J/token` : `${tput.toFixed(0)} tok/s`);
  lines.push('', `Rule: ${r.rule}.`);
  if (r.tied_with.length > 0) {
    // No single winner: the pick's lead is smaller than the noise of its measurements.
    lines.push('', `No single winner: within measurement noise (${noise}) of each other:`);
    lines.push(`  trial ${r.trial}: ${figure(m.output_throughput, m.energy_per_output_token_j)} (${times})`);
    for (const t of r.tied_with) lines.push(`  trial ${t.trial}: ${figure(t.output_throughput, t.energy_per_output_token_j)} (${t.measurements > 1 ? `mean of ${t.measurements} measurements` : 'measured once'})`);
    lines.push(`  Any of them will do; re-measure them (more trials) to tell them apart. The ${energy ? 'fewest joules' : 'highest mean'}, trial ${r.trial}:`, `  ${r.vllm_command}`);
  } else {
    lines.push('', `Recommended (trial ${r.trial}, ${times}; clear of the others beyond ${noise}):`, `  ${r.vllm_command}`);
  }
  for (const w of r.warnings) lines.push(`  Warning: ${w}`);
  lines.push(`  output ${m.output_throughput.toFixed(0)} tok/s (${m.output_throughput_per_gpu.toFixed(0)} per GPU), p99 TTFT ${m.p99_ttft_ms.toFixed(0)} ms, p99 ITL ${m.p99_itl_ms.toFixed(1)} ms, p99 TPOT ${m.p99_tpot_ms.toFixed(1)} ms`);
  if (m.energy_per_output_token_j !== null) {
    const perTokJ = m.energy_per_output_token_j;
    const change = r.vs_default.energy_per_output_token_change_pct;
    lines.push(`  energy ${perTokJ.toPrecision(3)} J per output token (${(1 / perTokJ).toPrecision(3)} tokens/J)${m.avg_power_w === null ? '' : `, ${m.avg_power_w.toFixed(0)} W for all its GPUs`}${change === null ? '' : `; ${change >= 0 ? '+' : ''}${change.toFixed(1)}% J/token against vLLM's defaults`}`);
  }
  if (r.cost !== null && r.cost.usd_per_million_output_tokens !== null) {
    lines.push(`  cost $${r.cost.usd_per_million_output_tokens.toFixed(3)} per million output tokens at its measured goodput ($${r.cost.usd_per_hour.toFixed(2)}/h; ${r.cost.price_source})`);
  }
  const v = r.vs_default;
  if (v.default_trial !== null) {
    const pct = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`;
    const jChange = v.energy_per_output_token_change_pct;
    // The noise verdict is on the study's own figure: J/token when it minimises energy.
    const gain =
      v.throughput_gain_pct === null
        ? ''
        : energy && jChange !== null
          ? `${pct(jChange)} J per output token, ${pct(v.throughput_gain_pct)} output throughput`
          : `${pct(v.throughput_gain_pct)} output throughput`;
    lines.push(
      v.default_meets_slo === true && v.throughput_gain_pct !== null
        ? `  vs vLLM defaults (trial ${v.default_trial}): ${v.within_noise === true ? `${gain}, within measurement noise: not a measured gain` : gain}`
        : `  vs vLLM defaults (trial ${v.default_trial}): the defaults ${v.default_meets_slo === false ? 'miss the SLOs' : 'did not run'}`,
    );
  } else {
    lines.push("  vs vLLM defaults: not measured (the search space's rules, or failures of earlier studies, say they cannot start on this deployment)");
  }
  if (r.numerics_changes.length > 0) {
    lines.push(`  changes the model's numerics: ${r.numerics_changes.join(', ')} (run with --keep-precision to rule that out)`);
    const k = r.precision_keeping;
    if (k === null) lines.push('  no measured configuration that keeps the checkpoint\'s precision met the SLOs');
    else {
      lines.push(`  best that keeps the checkpoint's precision (trial ${k.trial}): ${k.measured.output_throughput.toFixed(0)} tok/s (${k.throughput_vs_pick_pct.toFixed(1)}% vs the pick), p99 TTFT ${k.measured.p99_ttft_ms.toFixed(0)} ms`);
      lines.push(`    ${k.vllm_command}`);
    }
  }
  lines.push('', '  vllm serve --config:', ...r.vllm_config_yaml.trimEnd().split('\n').map((l) => `    ${l}`));
  lines.push('', `Pareto front (trial numbers): ${s.front.join(', ') || '–'}`);
  lines.push(...formatLost(s), ...formatFailures(s.failures));
  return lines.join('\n');
}
