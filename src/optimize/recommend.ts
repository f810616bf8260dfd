import { stringify } from 'yaml';
import type { ModelSpec, Objective, ServerConfig, Slo } from '../domain/index.js';
import { vllmServeArgs } from '../domain/server-config.js';
import { featureNames, type FeatureContext, type KnobEncoder } from '../model/features.js';
import { LmBenchError } from '../errors.js';
import type { Surrogate } from '../model/surrogate.js';
import type { TargetName } from '../model/targets.js';
import type { Rng } from '../util/rng.js';
import { probabilityMeetsSlo, selectBatch } from './acquisition.js';
import { scoreCandidates } from './candidates.js';
import { DEFAULT_OBJECTIVES, objectiveTarget, referencePoint, sloConstraints } from './objectives.js';
import { paretoFront } from './pareto.js';
import type { CandidateSource } from './samplers.js';

/**
 * The recommendation core, pure so the CLI and the HTTP service share it: score a large sample of the
 * pruned space with the trained surrogate, keep the candidates likely to start and to meet the SLOs,
 * and return the best by predicted throughput per GPU, the Pareto set it came from, the vLLM command
 * line and config file, and a plain verdict on whether the history is enough to trust it.
 */
export interface RecommendInput {
  readonly surrogate: Surrogate;
  readonly context: FeatureContext;
  readonly encoder: KnobEncoder;
  readonly source: CandidateSource;
  readonly slo: Slo;
  readonly objectives?: readonly Objective[];
  /** Measured runs for this GPU and model (the trust rule reads it). */
  readonly historyRuns: number;
  /** Cross-validated MAPE of output throughput, when the model was validated. */
  readonly validationMape?: number | null;
  readonly rng: Rng;
  readonly candidates?: number;
  readonly keep?: number;
  /** A floor on P(meets the SLOs) for the recommended configuration. */
  readonly minPMeetsSlo?: number;
  /** The feature schema the caller expects (checked against the model's; a mismatch means retrain). */
  readonly schema?: readonly string[];
}

export interface Interval {
  readonly mean: number;
  /** ±2σ of the ensemble on log scale, σ widened by the model's validated interval scale. */
  readonly low: number;
  readonly high: number;
}

export interface RecommendedConfig {
  readonly config: ServerConfig;
  readonly predicted: Partial<Record<TargetName, Interval>>;
  readonly pStart: number;
  readonly pMeetsSlo: number;
}

export interface Recommendation {
  readonly best: RecommendedConfig | null;
  readonly pareto: RecommendedConfig[];
  readonly vllmArgs: string[] | null;
  readonly vllmConfigYaml: string | null;
  readonly trust: {
    readonly level: 'ok' | 'thin';
    readonly reasons: string[];
    /** Configurations to measure next (constrained EHVI), when the history is thin or nothing qualifies. */
    readonly runNext: ServerConfig[];
  };
  readonly candidatesScored: number;
}

export const MIN_TRUSTED_RUNS = 20;
const MAX_TRUSTED_MAPE = 0.2;

/**
 * Row i's interval from its k ensemble draws (row-major): geometric mean and ±2σ on log scale, σ widened
 * by the calibration `scale` saved with the model.
 */
export function logInterval(draws: Float64Array, i: number, k: number, scale = 1): Interval {
  let mu = 0;
  for (let m = 0; m < k; m++) mu += Math.log(draws[i * k + m] ?? 1) / k;
  let v = 0;
  for (let m = 0; m < k; m++) v += (Math.log(draws[i * k + m] ?? 1) - mu) ** 2;
  const sd = (k > 1 ? Math.sqrt(v / (k - 1)) : 0) * scale;
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

export function recommend(input: RecommendInput): Recommendation {
  const expected = input.schema ?? featureNames(input.encoder);
  if (expected.join('\u0000') !== input.surrogate.featureNames.join('\u0000')) {
    throw new LmBenchError('LMB_ERR_MODEL_NOT_TRAINED', 'the trained model was fitted on another feature schema (search space or lm-bench changed); run `lm-bench model train` again');
  }
  const objectives = input.objectives ?? DEFAULT_OBJECTIVES;
  const constraints = sloConstraints(input.slo);
  const targets = [...new Set<TargetName>(['output_throughput_per_gpu', 'output_throughput', 'ttft_p99_ms', 'itl_p99_ms', 'tpot_p99_ms', ...objectives.map((o) => objectiveTarget(o.name)), ...constraints.map((c) => c.target)])].filter(
    (t) => input.surrogate.targets[t] !== undefined,
  );
  const pool = input.source.sample(input.candidates ?? 20_000, input.rng.fork('recommend'));
  const scored = scoreCandidates(pool, [{}], {
    surrogate: input.surrogate,
    context: input.context,
    encoder: input.encoder,
    constraints,
    targets,
    keep: input.keep ?? 3000,
  });
  const p = scored.predictions;
  // Intervals widened by the validation's calibration, so ±2σ means ~95% of held-out values.
  const scaleOf = (t: TargetName): number => input.surrogate.intervalScale?.[t] ?? 1;
  const pSlo = probabilityMeetsSlo(p, constraints);
  const describe = (i: number): RecommendedConfig => {
    const predicted: Partial<Record<TargetName, Interval>> = {};
    for (const [t, d] of Object.entries(p.targets) as [TargetName, Float64Array][]) predicted[t] = logInterval(d, i, p.draws, scaleOf(t));
    return { config: scored.configs[i] ?? {}, predicted, pStart: p.pStart[i] ?? 0, pMeetsSlo: pSlo[i] ?? 0 };
  };
  const minP = input.minPMeetsSlo ?? 0.8;
  const tp = p.targets.output_throughput_per_gpu;
  const qualifying: number[] = [];
  for (let i = 0; i < p.count; i++) if ((p.pStart[i] ?? 0) >= 0.5 && (pSlo[i] ?? 0) >= minP) qualifying.push(i);
  const meanOf = (arr: Float64Array | undefined, i: number): number => (arr === undefined ? 0 : logInterval(arr, i, p.draws).mean);
  // Conservative ranking: the low end of the throughput interval decides, so a guess does not beat a sure thing.
  const low = new Map(qualifying.map((i) => [i, tp === undefined ? 0 : logInterval(tp, i, p.draws, scaleOf('output_throughput_per_gpu')).low]));
  qualifying.sort((a, b) => (low.get(b) ?? 0) - (low.get(a) ?? 0));
  const best = qualifying[0];
  const pts = qualifying.map((i) =>
    objectives.map((o) => {
      const v = meanOf(p.targets[objectiveTarget(o.name)], i);
      return o.direction === 'maximize' ? -v : v;
    }),
  );
  const tpMean = new Map(qualifying.map((i) => [i, meanOf(tp, i)]));
  const pareto = paretoFront(pts)
    .map((j) => qualifying[j] ?? 0)
    .sort((a, b) => (tpMean.get(b) ?? 0) - (tpMean.get(a) ?? 0))
    .slice(0, 25)
    .map(describe);
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
  const bestRec = best === undefined ? null : describe(best);
  return {
    best: bestRec,
    pareto,
    vllmArgs: bestRec === null ? null : vllmServeArgs(input.context.model.hf_name, bestRec.config),
    vllmConfigYaml: bestRec === null ? null : vllmConfigYaml(input.context.model, bestRec.config),
    trust: { level: reasons.length === 0 ? 'ok' : 'thin', reasons, runNext },
    candidatesScored: scored.screened,
  };
}
