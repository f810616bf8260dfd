import { stringify } from 'yaml';
import type { Interval, ModelSpec, Objective, ParetoMember, Recommendation, RecommendedConfig, ServerConfig, Slo, StudyObjective } from '../domain/index.js';
import { vllmServeArgs } from '../domain/server-config.js';
import { featureNames, type FeatureContext, type KnobEncoder } from '../surrogate/features.js';
import { LmBenchError } from '../errors.js';
import { modelsTarget, type Surrogate } from '../surrogate/surrogate.js';
import type { TargetName } from '../surrogate/targets.js';
import type { Rng } from '../util/rng.js';
import { logMeanSd, probabilityMeetsSloWidened, selectBatch } from './acquisition.js';
import { scoreCandidates } from './candidates.js';
import { assertNever } from '../errors.js';
import { DEFAULT_OBJECTIVES, objectiveTarget, pickRule, referencePoint, sloConstraints, studyObjectiveOf, type PickRule } from './objectives.js';
import { dominates, paretoFront } from './pareto.js';
import type { CandidateSource } from './samplers.js';

/**
 * The recommendation core, pure so the CLI and the HTTP service share it: score a large sample of the
 * pruned space with the trained surrogate, keep the candidates likely to start and to meet the SLOs,
 * and return the best by a stated rule (`RULE`), the Pareto set it came from (each member saying why
 * it was not picked when it beats the pick on the predicted means), the best configuration that keeps
 * the checkpoint's numerics, the vLLM command line and config file, and a plain verdict on whether
 * the history is enough to trust it.
 */
export interface RecommendInput {
  readonly surrogate: Surrogate;
  readonly context: FeatureContext;
  readonly encoder: KnobEncoder;
  readonly source: CandidateSource;
  readonly slo: Slo;
  readonly objectives?: readonly Objective[];
  /** What the pick is for (default: what `objectives` stand for, objectives.ts `studyObjectiveOf`). */
  readonly objective?: StudyObjective;
  /** Measured runs for this GPU and model (the trust rule reads it). */
  readonly historyRuns: number;
  /** Cross-validated MAPE of output throughput, when the model was validated. */
  readonly validationMape?: number | null;
  readonly rng: Rng;
  readonly candidates?: number;
  readonly keep?: number;
  /** A floor on P(meets the SLOs) for the recommended configuration (default 0.9). */
  readonly minPMeetsSlo?: number;
  /** `knob=value` of each knob whose value changes the model's numerics (`SearchSpace.numericsChanges`). */
  readonly numericsChanges?: (config: ServerConfig) => string[];
  /** The feature schema the caller expects (checked against the model's; a mismatch means retrain). */
  readonly schema?: readonly string[];
}

// The answer's shapes are the public API's zod schemas (domain/recommendation.ts); re-exported for the callers here.
export type { Interval, ParetoMember, Recommendation, RecommendedConfig } from '../domain/recommendation.js';

export const MIN_TRUSTED_RUNS = 20;
export const DEFAULT_MIN_P_MEETS_SLO = 0.9;

/**
 * The rule `recommend` applies, in the words every output prints beside the pick. `energyUnknown`: the
 * objective was joules per token but the model predicts no energy (its runs carried no power figure).
 */
export function recommendationRule(minP: number, objective: StudyObjective = 'goodput', energyUnknown = false): string {
  const among = `among configurations with P(starts) ≥ 0.5 and P(meets the SLOs) ≥ ${minP}`;
  const throughput = `the highest lower bound (mean − 2σ) of predicted output throughput per GPU ${among}; lower bounds within ${TIE * 100}% of it tie, and among those the one the others do not beat on the predicted means`;
  switch (objective) {
    case 'goodput':
      return throughput;
    case 'usd_per_mtok':
      return `the fewest dollars per million output tokens, which at one GPU type's price per GPU-hour is ${throughput} (the cost is stated beside it)`;
    case 'tokens_per_joule':
      if (energyUnknown) return `joules per output token asked for, but the model predicts no energy (none of its runs carried a power figure), so: ${throughput}`;
      return `the lowest upper bound (mean + 2σ) of predicted joules per output token (all the deployment's GPUs) ${among}; upper bounds within ${TIE * 100}% of it tie, and among those the one the others do not beat on the predicted means`;
    default:
      return assertNever(objective, 'objective');
  }
}

const MAX_TRUSTED_MAPE = 0.2;

/**
 * Row i's interval from its k ensemble draws (row-major): geometric mean and ±2σ on log scale, σ widened
 * by the calibration `scale` saved with the model.
 */
export function logInterval(draws: Float64Array, i: number, k: number, scale = 1): Interval {
  const { mu, sd: memberSd } = logMeanSd(draws, i, k);
  const sd = memberSd * scale;
  return { mean: Math.exp(mu), low: Math.exp(mu - 2 * sd), high: Math.exp(mu + 2 * sd) };
}

/** `vllm serve --config` YAML: the CLI's long option names as keys (dashes), the model included. */
export function vllmConfigYaml(model: ModelSpec, config: ServerConfig): string {
  const doc: Record<string, unknown> = { model: model.hf_name };
  for (const [k, v] of Object.entries(config) as [string, unknown][]) {
    if (v === undefined || (k === 'quantization' && v === 'none')) continue;
    doc[k.replaceAll('_', '-')] = v;
  }
  return stringify(doc);
}

/** Candidates whose throughput lower bound is within this fraction of the best one's tie with it. */
const TIE = 0.01;

/** One scored pool ranked by the rule: who qualifies, the pick, and how to describe a candidate. */
interface Ranked {
  readonly scored: ReturnType<typeof scoreCandidates>;
  readonly qualifying: readonly number[];
  readonly best: number | undefined;
  /** Minimization vector of the objectives on the predicted means, per qualifying index. */
  readonly point: ReadonlyMap<number, readonly number[]>;
  /** The rule's conservative bound per qualifying index: the low end for a figure to maximise, the high end for one to minimise. */
  readonly bound: ReadonlyMap<number, number>;
  readonly tpMean: ReadonlyMap<number, number>;
  readonly describe: (i: number) => RecommendedConfig;
}

/** How a pool is ranked: the Pareto axes, the targets predicted, the SLO floor and the pick's rule. */
interface PoolRanking {
  readonly objectives: readonly Objective[];
  readonly targets: readonly TargetName[];
  readonly minP: number;
  readonly rule: PickRule;
}

function rankPool(pool: readonly ServerConfig[], input: RecommendInput, how: PoolRanking): Ranked {
  const { objectives, targets, minP, rule } = how;
  const constraints = sloConstraints(input.slo);
  const scored = scoreCandidates(pool, [{}], {
    surrogate: input.surrogate,
    context: input.context,
    encoder: input.encoder,
    constraints,
    targets,
    keep: input.keep ?? 3000,
    rule,
  });
  const p = scored.predictions;
  // Intervals widened by the validation's calibration, so ±2σ means ~95% of held-out values.
  const scaleOf = (t: TargetName): number => input.surrogate.intervalScale?.[t] ?? 1;
  // The probability the answer prints and the rule's floor reads: on the same widened spread as the intervals.
  const pSlo = probabilityMeetsSloWidened(p, constraints, scaleOf);
  const changes = input.numericsChanges ?? (() => []);
  const describe = (i: number): RecommendedConfig => {
    const predicted: Partial<Record<TargetName, Interval>> = {};
    for (const [t, d] of Object.entries(p.targets) as [TargetName, Float64Array][]) predicted[t] = logInterval(d, i, p.draws, scaleOf(t));
    const config = scored.configs[i] ?? {};
    return { config, predicted, p_start: p.pStart[i] ?? 0, p_meets_slo: pSlo[i] ?? 0, numerics_changes: changes(config) };
  };
  const tp = p.targets.output_throughput_per_gpu;
  const qualifying: number[] = [];
  // P(meets SLO) carries P(keeps up) where there are SLOs; without them a configuration that falls behind
  // the load still does not qualify (its TTFT was learned from runs that kept up).
  for (let i = 0; i < p.count; i++) if ((p.pStart[i] ?? 0) >= 0.5 && (pSlo[i] ?? 0) >= minP && (p.pSustain?.[i] ?? 1) >= 0.5) qualifying.push(i);
  const meanOf = (arr: Float64Array | undefined, i: number): number => (arr === undefined ? 0 : logInterval(arr, i, p.draws).mean);
  // Conservative ranking: the pessimistic end of the rule's interval decides (the low end of throughput,
  // the high end of joules per token), so a guess does not beat a sure thing. `better` > 0: a beats b.
  const fig = p.targets[rule.target];
  const maximize = rule.direction === 'maximize';
  const bound = new Map(qualifying.map((i) => [i, fig === undefined ? 0 : maximize ? logInterval(fig, i, p.draws, scaleOf(rule.target)).low : logInterval(fig, i, p.draws, scaleOf(rule.target)).high]));
  const figMean = new Map(qualifying.map((i) => [i, meanOf(fig, i)]));
  const better = (m: ReadonlyMap<number, number>, a: number, b: number): number => (maximize ? 1 : -1) * ((m.get(a) ?? 0) - (m.get(b) ?? 0));
  const tpMean = new Map(qualifying.map((i) => [i, meanOf(tp, i)]));
  const point = new Map(
    qualifying.map((i) => [
      i,
      objectives.map((o) => {
        const v = meanOf(p.targets[objectiveTarget(o.name)], i);
        return o.direction === 'maximize' ? -v : v;
      }),
    ]),
  );
  qualifying.sort((a, b) => better(bound, b, a));
  // Trees give many candidates the same bounds: among those tied with the top bound, the pick is one no
  // other tied candidate beats on the predicted means (the best figure, then the least latency).
  const top = bound.get(qualifying[0] ?? -1) ?? 0;
  const tied = qualifying.filter((i) => (maximize ? (bound.get(i) ?? 0) >= top * (1 - TIE) : (bound.get(i) ?? 0) <= top * (1 + TIE)));
  const undominated = tied.filter((i) => !tied.some((j) => j !== i && dominates(point.get(j) ?? [], point.get(i) ?? [])));
  undominated.sort((a, b) => better(figMean, b, a) || (point.get(a)?.[1] ?? 0) - (point.get(b)?.[1] ?? 0));
  return { scored, qualifying, best: undominated[0], point, bound, tpMean, describe };
}

export function recommend(input: RecommendInput): Recommendation {
  const expected = input.schema ?? featureNames(input.encoder);
  if (expected.join('\u0000') !== input.surrogate.featureNames.join('\u0000')) {
    throw new LmBenchError('LMB_ERR_MODEL_NOT_TRAINED', 'the trained model was fitted on another feature schema (search space or lm-bench changed); run `lm-bench surrogate train` again');
  }
  const objectives = input.objectives ?? DEFAULT_OBJECTIVES;
  const constraints = sloConstraints(input.slo);
  const objective = input.objective ?? studyObjectiveOf({ objectives });
  // A model whose runs carried no power cannot rank by energy: the rule says so and ranks by throughput.
  const energyUnknown = objective === 'tokens_per_joule' && !modelsTarget(input.surrogate, 'energy_per_output_token_j');
  const rule = pickRule(energyUnknown ? 'goodput' : objective);
  const targets = [
    ...new Set<TargetName>(['output_throughput_per_gpu', 'output_throughput', 'ttft_p99_ms', 'itl_p99_ms', 'tpot_p99_ms', 'energy_per_output_token_j', ...objectives.map((o) => objectiveTarget(o.name)), ...constraints.map((c) => c.target)]),
  ].filter((t) => modelsTarget(input.surrogate, t));
  const minP = input.minPMeetsSlo ?? DEFAULT_MIN_P_MEETS_SLO;
  const changes = input.numericsChanges ?? (() => []);
  const pool = input.source.sample(input.candidates ?? 20_000, input.rng.fork('recommend'));
  const how: PoolRanking = { objectives, targets, minP, rule };
  const r = rankPool(pool, input, how);
  const { best, describe } = r;
  const bestRec = best === undefined ? null : describe(best);
  // The precision-keeping alternative gets a pass of its own: fp8 candidates would crowd it out of the
  // physics stage's cut of the whole pool.
  let precisionKeeping: RecommendedConfig | null = null;
  if (bestRec !== null && bestRec.numerics_changes.length > 0) {
    const kept = rankPool(pool.filter((c) => changes(c).length === 0), input, how);
    precisionKeeping = kept.best === undefined ? null : kept.describe(kept.best);
  }
  const frontIdx = paretoFront(r.qualifying.map((i) => r.point.get(i) ?? [])).map((j) => r.qualifying[j] ?? 0);
  // The pick is always listed: it may sit off the means' front (a surer, slightly lower point).
  if (best !== undefined && !frontIdx.includes(best)) frontIdx.push(best);
  const fmtBound = (i: number): string => {
    const v = r.bound.get(i) ?? 0;
    return rule.direction === 'maximize' ? `its throughput lower bound is ${v.toFixed(0)} tok/s/GPU` : `its upper bound is ${v.toPrecision(3)} J/token`;
  };
  const boundOfBest = (i: number): string => {
    const v = r.bound.get(i) ?? 0;
    return rule.direction === 'maximize' ? v.toFixed(0) : v.toPrecision(3);
  };
  const pareto: ParetoMember[] = frontIdx
    .sort((a, b) => (r.tpMean.get(b) ?? 0) - (r.tpMean.get(a) ?? 0))
    .slice(0, 25)
    .map((i) => {
      const beats = best !== undefined && i !== best && dominates(r.point.get(i) ?? [], r.point.get(best) ?? []);
      const note = beats ? `better on the predicted means but less certain: ${fmtBound(i)} against the recommendation's ${boundOfBest(best)}` : null;
      return { ...describe(i), recommended: i === best, note };
    });
  const { scored } = r;
  const p = scored.predictions;
  const reasons: string[] = [];
  if (input.historyRuns < MIN_TRUSTED_RUNS) reasons.push(`only ${input.historyRuns} measured runs for this GPU and model (fewer than ${MIN_TRUSTED_RUNS})`);
  if (input.validationMape !== undefined && input.validationMape !== null && input.validationMape > MAX_TRUSTED_MAPE) {
    reasons.push(`cross-validated throughput error is ${(input.validationMape * 100).toFixed(0)}% (above ${MAX_TRUSTED_MAPE * 100}%)`);
  }
  if (best === undefined) reasons.push(`no candidate is predicted to start and meet the SLOs with probability ≥ ${minP}`);
  let runNext: ServerConfig[] = [];
  if (reasons.length > 0) {
    const picks = selectBatch(p, { objectives, constraints, front: [], ref: referencePoint(objectives, constraints, []) }, {
      q: 4,
      poolSize: 300,
      encoded: scored.encoded,
      dims: scored.dims,
      minDistance: 0.5,
    });
    runNext = picks.map((k) => scored.configs[k.index] ?? {});
  }
  return {
    rule: recommendationRule(minP, objective, energyUnknown),
    best: bestRec,
    precision_keeping: precisionKeeping,
    pareto,
    vllm_args: bestRec === null ? null : vllmServeArgs(input.context.model.hf_name, bestRec.config),
    vllm_config_yaml: bestRec === null ? null : vllmConfigYaml(input.context.model, bestRec.config),
    trust: { level: reasons.length === 0 ? 'ok' : 'thin', reasons, run_next: runNext },
    candidates_scored: scored.screened,
  };
}
