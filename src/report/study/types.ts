import type { KnobValue, ServerConfig, Study, Trial } from '../../domain/index.js';
import type { Interval } from '../../optimize/recommend.js';
import type { KeyDeployment } from '../../optimize/sampler.js';
import type { TargetName } from '../../surrogate/targets.js';
import type { PruneReport } from '../../space/index.js';
import type { StudySummary } from '../../tune/summary.js';
import type { StudyExplanation } from '../../tune/explain-study.js';

/**
 * What the study report is drawn from, as plain data: everything the store, the surrogate and the
 * simulator have to say about one study, gathered once by `analyzeStudy` (analysis.ts). The plot
 * data builders (data/*.ts) read only this, so they are pure and tested without a model or a store.
 */
export const PLOT_KINDS = ['pareto_ttft', 'pareto_itl', 'pareto_energy', 'energy_trade', 'history', 'importance', 'partial_dependence', 'parity', 'latency_cdf'] as const;
export type PlotKind = (typeof PLOT_KINDS)[number];

export function isPlotKind(s: string): s is PlotKind {
  return (PLOT_KINDS as readonly string[]).includes(s);
}

export type Predicted = Partial<Record<TargetName, Interval>>;

/** A configuration the surrogate proposes but nobody measured (the predicted Pareto set). */
export interface PredictedCandidate {
  readonly config: ServerConfig;
  readonly predicted: Predicted;
  readonly pStart: number;
  readonly pMeetsSlo: number;
}

export interface ParityPair {
  readonly target: TargetName;
  readonly measured: number;
  readonly predicted: number;
  readonly low: number;
  readonly high: number;
}

export interface PartialDependence {
  readonly knob: string;
  /** One point per grid value of the knob, in grid order: the mean prediction over the measured configs with the knob set to `value`. */
  readonly points: readonly { readonly value: KnobValue; readonly mean: number; readonly low: number; readonly high: number }[];
}

export type ModelAnalysis =
  | { readonly available: false; readonly reason: string }
  | {
      readonly available: true;
      /** The saved model the report reads, and the study that saved it (null: \`lm-bench surrogate train\`). */
      readonly modelId: number;
      readonly savedBy: string | null;
      /** Rows the surrogate was fitted on (store history for this GPU and model) and how many of them were measured. */
      readonly rows: number;
      readonly measuredRows: number;
      /** `cross_validation`: held-out predictions of a k-fold split; `in_sample`: the final model on its own training rows. */
      readonly parityMethod: 'cross_validation' | 'in_sample';
      readonly folds: number;
      readonly parity: readonly ParityPair[];
      /** Mean absolute percentage error per target over `parity` (a fraction). */
      readonly mape: Partial<Record<TargetName, number>>;
      /** Per knob: rise in held-out (or in-sample) MAPE when its columns are shuffled. */
      readonly importance: Readonly<Record<string, number>>;
      readonly partialDependence: readonly PartialDependence[];
      readonly pdTarget: TargetName;
      readonly predictedFront: readonly PredictedCandidate[];
      /** Predictions for each measured trial, by trial number. */
      readonly trialPredictions: Readonly<Record<number, Predicted>>;
      readonly recommendedPredicted: PredictedCandidate | null;
      readonly trust: { readonly level: 'ok' | 'thin'; readonly reasons: readonly string[] };
      /** The rule the predicted pick follows (the same words as \`lm-bench recommend\`). */
      readonly rule: string;
    };

export interface LatencySeries {
  readonly label: string;
  readonly trial: number;
  /** `sim_records`: per-request latencies from re-simulating the trial (same seed, so the same records); `result_stats`: the percentiles the measured result carries. */
  readonly source: 'sim_records' | 'result_stats';
  /** Sorted samples (sim_records) or quantile points (result_stats) in ms. */
  readonly ttft: readonly { readonly ms: number; readonly q: number }[];
  readonly itl: readonly { readonly ms: number; readonly q: number }[];
}

export interface StudyAnalysis {
  readonly study: Study;
  readonly trials: readonly Trial[];
  /** The study's GPU and model: configurations are grouped as vLLM resolves them there (`configKey`), as the summary groups them. */
  readonly deployment: KeyDeployment;
  readonly summary: StudySummary;
  /** Each trial's effective configuration (unset knobs at vLLM's defaults for this context), by trial number. */
  readonly effectiveConfigs: Readonly<Record<number, ServerConfig>>;
  /**
   * The study the history is compared with. One found in the store is a random search of the same
   * deployment and SLOs; one named with --baseline may be neither, and the report must not say it is.
   */
  readonly baseline: { readonly name: string; readonly trials: readonly Trial[]; readonly random: boolean; readonly sameDeployment: boolean } | null;
  readonly model: ModelAnalysis;
  readonly prune: PruneReport | null;
  readonly latency: readonly LatencySeries[];
  readonly targetKind: string;
  /** The measured pick simplified to the flags that matter, and why each (tune/explain-study.ts); null when not computed. */
  readonly explanation: StudyExplanation | null;
}
