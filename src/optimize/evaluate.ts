import { meetsSlo, type ServerConfig, type Slo } from '../domain/index.js';
import type { FeatureContext, KnobEncoder } from '../surrogate/features.js';
import { modelsTarget, type Surrogate } from '../surrogate/surrogate.js';
import { targetsOf, TARGET_NAMES, type TargetName, type TargetValues } from '../surrogate/targets.js';
import { probabilityMeetsSloWidened } from './acquisition.js';
import { scoreCandidates } from './candidates.js';
import { pMeetsUnderError, saturatedRun } from './sim-search/index.js';
import { sloConstraints } from './objectives.js';
import type { PriorSimulator } from '../calibration/prior-simulator.js';
import { logInterval, type Interval, type RecommendedConfig } from './recommend.js';
import type { Evaluate, Evaluation } from './simplify.js';

/**
 * The ways a configuration outside a search's pool is judged when an answer is simplified and
 * explained (simplify.ts): by the trained surrogate (predicted means; it "meets the SLOs" as the
 * recommendation rule counts it, P ≥ the rule's floor), or by one simulated run (the answer that has
 * no history). Each evaluation is memoised by configuration: the simplification and the attribution
 * path ask for many of the same ones.
 */
function memoised(judge: (configs: readonly ServerConfig[]) => (Evaluation | null)[]): Evaluate {
  const seen = new Map<string, Evaluation | null>();
  const keyOf = (c: ServerConfig): string => JSON.stringify(Object.entries(c).sort(([a], [b]) => (a < b ? -1 : 1)));
  return (configs) => {
    const missing = configs.filter((c) => !seen.has(keyOf(c)));
    const unique = [...new Map(missing.map((c) => [keyOf(c), c])).values()];
    if (unique.length > 0) judge(unique).forEach((e, i) => seen.set(keyOf(unique[i] as ServerConfig), e));
    return configs.map((c) => seen.get(keyOf(c)) ?? null);
  };
}

export interface SurrogateJudgeInput {
  readonly surrogate: Surrogate;
  readonly context: FeatureContext;
  readonly encoder: KnobEncoder;
  readonly slo: Slo;
  /** The recommendation's floor on P(meets the SLOs). */
  readonly minPMeetsSlo: number;
}

export interface SurrogateJudge {
  readonly evaluate: Evaluate;
  /** One configuration as a recommendation describes it: intervals, P(starts), P(meets the SLOs). */
  readonly describe: (config: ServerConfig) => RecommendedConfig;
}

export function surrogateJudge(input: SurrogateJudgeInput & { readonly numericsChanges: (c: ServerConfig) => string[] }): SurrogateJudge {
  const constraints = sloConstraints(input.slo);
  const targets = TARGET_NAMES.filter((t) => modelsTarget(input.surrogate, t));
  // P(meets the SLOs) as the recommendation states and gates it: on the intervals' widened spread.
  const scaleOf = (t: TargetName): number => input.surrogate.intervalScale?.[t] ?? 1;
  const score = (configs: readonly ServerConfig[]) => scoreCandidates([], configs, { surrogate: input.surrogate, context: input.context, encoder: input.encoder, constraints, targets, keep: configs.length });
  const describe = (config: ServerConfig): RecommendedConfig => {
    const p = score([config]).predictions;
    const predicted: Partial<Record<TargetName, Interval>> = {};
    for (const [t, d] of Object.entries(p.targets) as [TargetName, Float64Array][]) predicted[t] = logInterval(d, 0, p.draws, scaleOf(t));
    return { config, predicted, p_start: p.pStart[0] ?? 0, p_meets_slo: probabilityMeetsSloWidened(p, constraints, scaleOf)[0] ?? 0, numerics_changes: input.numericsChanges(config) };
  };
  const evaluate = memoised((configs) => {
    const p = score(configs).predictions;
    const pSlo = probabilityMeetsSloWidened(p, constraints, scaleOf);
    return configs.map((_, i) => {
      if ((p.pStart[i] ?? 0) < 0.5) return null;
      const values: TargetValues = {};
      for (const [t, d] of Object.entries(p.targets) as [TargetName, Float64Array][]) values[t] = logInterval(d, i, p.draws).mean;
      return { values, meetsSlo: (pSlo[i] ?? 0) >= input.minPMeetsSlo && (p.pSustain?.[i] ?? 1) >= 0.5, source: 'predicted' };
    });
  });
  return { evaluate, describe };
}

/**
 * `minPMeetsSlo`: a simulated run that meets the SLOs still counts as missing them when the simulator's
 * measured error leaves it less likely than this to meet them on the real server (sim-search/residual.ts
 * `pMeetsUnderError`): a revert must not trade the pick's margin for a flag fewer.
 */
export function simulatorEvaluate(simulator: PriorSimulator, slo: Slo, gpuCount: number, minPMeetsSlo = 0): Evaluate {
  const constraints = sloConstraints(slo);
  return memoised((configs) =>
    configs.map((c) => {
      const r = simulator.simulate(c);
      if (r === null) return null;
      const values = targetsOf(r, gpuCount);
      return { values, meetsSlo: !saturatedRun(r) && meetsSlo(slo, r) && pMeetsUnderError(values, constraints, {}, r) >= minPMeetsSlo, source: 'simulated' };
    }),
  );
}
