import type { Catalog } from '../../catalog/index.js';
import type { KnobValue, ServerConfig, StudySpec, Trial } from '../../domain/index.js';
import { isLmBenchError } from '../../errors.js';
import {
  buildFeatureRow,
  datasetFromStore,
  DEFAULT_SURROGATE_SPEC,
  fitSurrogate,
  permutationImportance,
  predictSurrogate,
  toFeatureMatrix,
  type FeatureContext,
  type KnobEncoder,
  type Surrogate,
  type SurrogateSpec,
  type TargetName,
  type TrainingRow,
} from '../../model/index.js';
import { logInterval, recommend } from '../../optimize/recommend.js';
import { spaceEncoder, spaceSource } from '../../optimize/space-source.js';
import type { SearchSpace } from '../../space/index.js';
import type { Store } from '../../store/store.js';
import type { Rng } from '../../util/rng.js';
import type { ModelAnalysis, ParityPair, PartialDependence, Predicted, PredictedCandidate } from './types.js';

/**
 * The surrogate's part of the report. The tuning loop keeps its surrogate in memory only, so the report
 * refits one the same way (the store's history for the study's GPU and model, the default spec, a seed
 * from the study's): same data, same spec, so the same kind of model that chose the trials.
 *
 * Parity and importance come from a k-fold split when the history has at least 4 measured rows a fold
 * (held-out predictions: what the model does on configurations it has not seen); below that, from the
 * final model on its own rows, and the report says so. The k-fold errors also calibrate the intervals
 * (±2σ widened until it covers 95% of held-out values), as `lm-bench model train` does.
 */
export interface ModelAnalysisOptions {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly space: SearchSpace;
  readonly spec: StudySpec;
  readonly context: FeatureContext;
  /** Complete trials with their effective configurations (for predictions and partial dependence). */
  readonly measured: readonly { readonly trial: Trial; readonly config: ServerConfig }[];
  readonly recommended: ServerConfig | null;
  readonly rng: Rng;
  readonly surrogateSpec?: SurrogateSpec;
  readonly folds?: number;
  /** Candidates the predicted front is chosen from. */
  readonly candidates?: number;
}

export const PARITY_TARGETS: readonly TargetName[] = ['output_throughput_per_gpu', 'ttft_p99_ms', 'itl_p99_ms'];
const PD_TARGET: TargetName = 'output_throughput_per_gpu';

function matrix(rows: readonly TrainingRow[], cols: number): { x: ReturnType<typeof toFeatureMatrix>; baselines: Partial<Record<TargetName, Float64Array>> } {
  const baselines: Partial<Record<TargetName, Float64Array>> = {};
  for (const t of Object.keys(rows[0]?.baselines ?? {}) as TargetName[]) baselines[t] = Float64Array.from(rows, (r) => r.baselines[t]);
  return { x: toFeatureMatrix(rows.map((r) => r.x), cols), baselines };
}

/** Interval predictions for configurations in one context. */
export function predictConfigs(s: Surrogate, configs: readonly ServerConfig[], ctx: FeatureContext, encoder: KnobEncoder): { predicted: Predicted[]; pStart: Float64Array } {
  if (configs.length === 0) return { predicted: [], pStart: new Float64Array(0) };
  const rows = configs.map((c) => buildFeatureRow(c, ctx, encoder));
  const { x, baselines } = matrix(rows.map((r) => ({ x: r.row, baselines: r.baselines, targets: {}, started: true })), s.featureNames.length);
  const p = predictSurrogate(s, x, baselines);
  const predicted = configs.map((_, i) => {
    const out: Predicted = {};
    for (const [t, d] of Object.entries(p.targets) as [TargetName, Float64Array][]) out[t] = logInterval(d, i, p.draws, s.intervalScale?.[t] ?? 1);
    return out;
  });
  return { predicted, pStart: p.pStart };
}

interface HeldOut {
  readonly pairs: ParityPair[];
  readonly z: Partial<Record<TargetName, number[]>>;
}

function heldOut(s: Surrogate, test: readonly TrainingRow[], acc: HeldOut): void {
  const rows = test.filter((r) => r.started);
  if (rows.length === 0) return;
  const { x, baselines } = matrix(rows, s.featureNames.length);
  const p = predictSurrogate(s, x, baselines);
  for (const [t, d] of Object.entries(p.targets) as [TargetName, Float64Array][]) {
    rows.forEach((r, i) => {
      const a = r.targets[t];
      if (a === undefined) return;
      const iv = logInterval(d, i, p.draws, s.intervalScale?.[t] ?? 1);
      if (PARITY_TARGETS.includes(t)) acc.pairs.push({ target: t, measured: a, predicted: iv.mean, low: iv.low, high: iv.high });
      const sd = Math.log(iv.high / iv.mean) / 2;
      (acc.z[t] ??= []).push(Math.abs(Math.log(a / iv.mean)) / Math.max(sd, 1e-9));
    });
  }
}

function shuffled(n: number, rng: Rng): number[] {
  const order = [...Array(n).keys()];
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j] ?? 0, order[i] ?? 0];
  }
  return order;
}

interface PdInput {
  readonly knob: string;
  readonly values: readonly KnobValue[];
  readonly base: readonly ServerConfig[];
}

function partialDependence(s: Surrogate, pd: PdInput, ctx: FeatureContext, encoder: KnobEncoder): PartialDependence {
  const { knob, values, base } = pd;
  const points = values.map((value) => {
    const configs: ServerConfig[] = base.map((c) => ({ ...c, [knob]: value }));
    const rows = configs.map((c) => buildFeatureRow(c, ctx, encoder));
    const { x, baselines } = matrix(rows.map((r) => ({ x: r.row, baselines: r.baselines, targets: {}, started: true })), s.featureNames.length);
    const d = predictSurrogate(s, x, baselines, [PD_TARGET]).targets[PD_TARGET];
    const k = s.members;
    // Each ensemble member's average over the base configurations: the spread of those is the band.
    const perMember = Array.from({ length: k }, (_, m) => {
      let sum = 0;
      for (let i = 0; i < configs.length; i++) sum += d?.[i * k + m] ?? 0;
      return sum / Math.max(1, configs.length);
    });
    const mean = perMember.reduce((a, b) => a + b, 0) / Math.max(1, k);
    return { value, mean, low: Math.min(...perMember), high: Math.max(...perMember) };
  });
  return { knob, points };
}

export async function analyzeModel(opts: ModelAnalysisOptions): Promise<ModelAnalysis> {
  const sspec = opts.surrogateSpec ?? DEFAULT_SURROGATE_SPEC;
  const encoder = spaceEncoder(opts.space);
  const ds = datasetFromStore(opts.store, opts.catalog, encoder, { gpu: opts.spec.hardware.gpu, model: opts.spec.model });
  const measuredRows = ds.rows.filter((r) => r.started).length;
  if (measuredRows < sspec.minRows) {
    return { available: false, reason: `the store holds ${measuredRows} measured runs for ${opts.spec.model} on ${opts.spec.hardware.gpu}; the surrogate needs at least ${sspec.minRows}, so no model-based plot (importance, partial dependence, parity, predicted points) is drawn` };
  }
  let surrogate: Surrogate;
  try {
    surrogate = await fitSurrogate(ds.rows, ds.featureNames, sspec, opts.rng.fork('final'));
  } catch (err) {
    if (isLmBenchError(err, 'LMB_ERR_HISTORY_TOO_THIN')) return { available: false, reason: err.message };
    throw err;
  }
  const folds = Math.max(2, opts.folds ?? 3);
  const acc: HeldOut = { pairs: [], z: {} };
  let importance: Record<string, number> = {};
  let parityMethod: 'cross_validation' | 'in_sample';
  if (measuredRows >= folds * 4) {
    parityMethod = 'cross_validation';
    const order = shuffled(ds.rows.length, opts.rng.fork('folds'));
    const testOf = (f: number): Set<number> => new Set(order.filter((_, i) => i % folds === f));
    const models = await Promise.all(
      Array.from({ length: folds }, (_, f) => {
        const test = testOf(f);
        return fitSurrogate(ds.rows.filter((_, i) => !test.has(i)), ds.featureNames, sspec, opts.rng.fork(`fold-${f}`)).catch((err: unknown) => {
          if (isLmBenchError(err, 'LMB_ERR_HISTORY_TOO_THIN')) return null;
          throw err;
        });
      }),
    );
    models.forEach((m, f) => {
      if (m === null) return;
      const test = testOf(f);
      const rows = ds.rows.filter((_, i) => test.has(i));
      heldOut(m, rows, acc);
      for (const [knob, v] of Object.entries(permutationImportance(m, rows, opts.rng.fork(`perm-${f}`)))) importance[knob] = (importance[knob] ?? 0) + v / folds;
    });
    const intervalScale: Partial<Record<TargetName, number>> = {};
    for (const [t, z] of Object.entries(acc.z) as [TargetName, number[]][]) {
      const sorted = z.filter(Number.isFinite).sort((a, b) => a - b);
      if (sorted.length > 0) intervalScale[t] = Math.min(50, Math.max(1, (sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))] ?? 2) / 2));
    }
    surrogate = { ...surrogate, intervalScale };
  } else {
    parityMethod = 'in_sample';
    heldOut(surrogate, ds.rows, acc);
    importance = permutationImportance(surrogate, ds.rows, opts.rng.fork('perm'));
  }
  const mape: Partial<Record<TargetName, number>> = {};
  for (const t of PARITY_TARGETS) {
    const ps = acc.pairs.filter((p) => p.target === t);
    if (ps.length > 0) mape[t] = ps.reduce((s, p) => s + Math.abs(p.predicted - p.measured) / p.measured, 0) / ps.length;
  }

  const ctx = opts.context;
  const measuredConfigs = opts.measured.map((m) => m.config);
  const trialPred = predictConfigs(surrogate, measuredConfigs, ctx, encoder);
  const trialPredictions: Record<number, Predicted> = {};
  opts.measured.forEach((m, i) => (trialPredictions[m.trial.number] = trialPred.predicted[i] ?? {}));

  const historyRuns = ds.observations.filter((o, i) => ds.rows[i]?.started === true && o.hardware.count === opts.spec.hardware.count).length;
  const rec = recommend({
    surrogate,
    context: ctx,
    encoder,
    source: spaceSource(opts.space, ctx),
    slo: opts.spec.slo,
    objectives: opts.spec.objectives.filter((o) => o.name !== 'max_rate_under_slo'),
    historyRuns,
    validationMape: mape.output_throughput_per_gpu ?? null,
    rng: opts.rng.fork('recommend'),
    candidates: opts.candidates ?? 4000,
    keep: Math.min(1500, opts.candidates ?? 4000),
  });
  // recommend() predicts only the targets it ranks by; the plot also colours by memory, so every target is predicted again.
  const full = predictConfigs(surrogate, rec.pareto.map((p) => p.config), ctx, encoder).predicted;
  const predictedFront: PredictedCandidate[] = rec.pareto.map((p, i) => ({ config: p.config, predicted: { ...full[i], ...p.predicted }, pStart: p.pStart, pMeetsSlo: p.pMeetsSlo }));

  let recommendedPredicted: PredictedCandidate | null = null;
  if (opts.recommended !== null) {
    const r = predictConfigs(surrogate, [opts.recommended], ctx, encoder);
    recommendedPredicted = { config: opts.recommended, predicted: r.predicted[0] ?? {}, pStart: r.pStart[0] ?? 0, pMeetsSlo: Number.NaN };
  }

  // The three knobs that matter most, each swept over its grid in this context.
  const bound = opts.space.bind(ctx);
  const ranked = Object.entries(importance).sort((a, b) => b[1] - a[1]).slice(0, 3);
  const base = measuredConfigs.slice(0, 40);
  const pds: PartialDependence[] = [];
  for (const [knob] of ranked) {
    const k = opts.space.knobs.findIndex((x) => x.name === knob);
    const values = (bound.options[k] ?? []).filter((v): v is KnobValue => v !== undefined);
    if (values.length < 2 || base.length === 0) continue;
    pds.push(partialDependence(surrogate, { knob, values, base }, ctx, encoder));
  }
  return {
    available: true,
    rows: ds.rows.length,
    measuredRows,
    parityMethod,
    folds: parityMethod === 'cross_validation' ? folds : 0,
    parity: acc.pairs,
    mape,
    importance,
    partialDependence: pds,
    pdTarget: PD_TARGET,
    predictedFront,
    trialPredictions,
    recommendedPredicted,
    trust: { level: rec.trust.level, reasons: rec.trust.reasons },
  };
}
