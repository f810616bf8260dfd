import type { Catalog } from '../../catalog/index.js';
import type { KnobValue, ServerConfig, StudySpec, Trial } from '../../domain/index.js';
import { historyRunsOf } from '../../advise/answer.js';
import {
  buildFeatureRow,
  datasetFromStore,
  DEFAULT_SURROGATE_SPEC,
  featureNames,
  heldOutOf,
  loadSurrogate,
  permutationImportance,
  predictSurrogate,
  selectSurrogate,
  SURROGATE_KIND,
  toFeatureMatrix,
  type FeatureContext,
  type KnobEncoder,
  type Surrogate,
  type TargetName,
  type TrainingRow,
} from '../../surrogate/index.js';
import { PARITY_TARGETS } from '../../surrogate/validate.js';
import { logInterval, recommend } from '../../optimize/recommend.js';
import { spaceEncoder, spaceSource } from '../../optimize/space-source.js';
import type { SearchSpace } from '../../space/index.js';
import type { Store } from '../../store/store.js';
import type { Rng } from '../../util/rng.js';
import type { ModelAnalysis, ParityPair, PartialDependence, Predicted, PredictedCandidate } from './types.js';

/**
 * The surrogate's part of the report, from the model the study saved (its slot: refitted each round,
 * cross-validated when the study ended), or else the newest saved model covering the study's GPU and
 * model: the report never fits one of its own.
 *
 * Parity and importance are the saved model's held-out figures when it was validated (the k-fold pairs
 * and permutation importance stored with it); a model saved mid-study (the study was stopped before
 * its end) is shown on its own training rows, and the report says so. Intervals use the calibration
 * saved with the model.
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
  /** Candidates the predicted front is chosen from. */
  readonly candidates?: number;
}

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

/** The model's parity pairs on its own training rows (no fit: predictions of the saved model). */
function inSample(s: Surrogate, rows: readonly TrainingRow[]): ParityPair[] {
  const measured = rows.filter((r) => r.started);
  if (measured.length === 0) return [];
  const { x, baselines } = matrix(measured, s.featureNames.length);
  const p = predictSurrogate(s, x, baselines);
  const out: ParityPair[] = [];
  for (const t of PARITY_TARGETS) {
    const d = p.targets[t];
    if (d === undefined) continue;
    measured.forEach((r, i) => {
      const a = r.targets[t];
      if (a === undefined) return;
      const iv = logInterval(d, i, p.draws, s.intervalScale?.[t] ?? 1);
      out.push({ target: t, measured: a, predicted: iv.mean, low: iv.low, high: iv.high });
    });
  }
  return out;
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

export function analyzeModel(opts: ModelAnalysisOptions): ModelAnalysis {
  const encoder = spaceEncoder(opts.space);
  const { gpu } = opts.spec.hardware;
  const info = selectSurrogate(opts.store.listModels(SURROGATE_KIND), { gpu, model: opts.spec.model, study: opts.spec.name, schema: featureNames(encoder) });
  if (info === null) {
    return {
      available: false,
      reason: `no saved surrogate covers ${opts.spec.model} on ${gpu}: the store held fewer than ${DEFAULT_SURROGATE_SPEC.minRows} measured runs when the study ran, so no model-based plot (importance, partial dependence, parity, predicted points) is drawn`,
    };
  }
  const { record, surrogate } = loadSurrogate(opts.store, info);
  const validated = record.metadata['validated'] === true;
  let parity: ParityPair[];
  let importance: Record<string, number>;
  if (validated) {
    parity = heldOutOf(record);
    const imp = record.metadata['importance'];
    importance = typeof imp === 'object' && imp !== null ? (imp as Record<string, number>) : {};
  } else {
    const ds = datasetFromStore(opts.store, opts.catalog, encoder, { gpu, model: opts.spec.model });
    parity = inSample(surrogate, ds.rows);
    importance = permutationImportance(surrogate, ds.rows, opts.rng.fork('perm'));
  }
  const mape: Partial<Record<TargetName, number>> = {};
  for (const t of PARITY_TARGETS) {
    const ps = parity.filter((p) => p.target === t);
    if (ps.length > 0) mape[t] = ps.reduce((sum, p) => sum + Math.abs(p.predicted - p.measured) / p.measured, 0) / ps.length;
  }
  const num = (k: string): number => (typeof record.metadata[k] === 'number' ? (record.metadata[k]) : 0);
  const study = record.metadata['study'];

  const ctx = opts.context;
  const measuredConfigs = opts.measured.map((m) => m.config);
  const trialPred = predictConfigs(surrogate, measuredConfigs, ctx, encoder);
  const trialPredictions: Record<number, Predicted> = {};
  opts.measured.forEach((m, i) => (trialPredictions[m.trial.number] = trialPred.predicted[i] ?? {}));

  const historyRuns = historyRunsOf(record, { gpu, gpus: opts.spec.hardware.count, model: opts.spec.model });
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
    numericsChanges: (c) => opts.space.numericsChanges(c),
  });
  // recommend() predicts only the targets it ranks by; the plot also colours by memory, so every target is predicted again.
  const full = predictConfigs(surrogate, rec.pareto.map((p) => p.config), ctx, encoder).predicted;
  const predictedFront: PredictedCandidate[] = rec.pareto.map((p, i) => ({ config: p.config, predicted: { ...full[i], ...p.predicted }, pStart: p.p_start, pMeetsSlo: p.p_meets_slo }));

  let recommendedPredicted: PredictedCandidate | null = null;
  if (opts.recommended !== null) {
    const r = predictConfigs(surrogate, [opts.recommended], ctx, encoder);
    recommendedPredicted = { config: opts.recommended, predicted: r.predicted[0] ?? {}, pStart: r.pStart[0] ?? 0, pMeetsSlo: Number.NaN };
  }

  // The three knobs that matter most, each swept over its grid in this context.
  const bound = opts.space.bind(ctx);
  // A knob the surrogate gives no importance has nothing to show; a value no measured configuration
  // could take under the space's rules (tensor_parallel_size 8 on one GPU) is not plotted.
  const ranked = Object.entries(importance).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).slice(0, 3);
  const base = measuredConfigs.slice(0, 40);
  const pds: PartialDependence[] = [];
  for (const [knob] of ranked) {
    const k = opts.space.knobs.findIndex((x) => x.name === knob);
    const values = (bound.options[k] ?? []).filter((v): v is KnobValue => v !== undefined && base.some((c) => opts.space.isFeasible({ ...c, [knob]: v }, ctx).ok));
    if (values.length < 2 || base.length === 0) continue;
    pds.push(partialDependence(surrogate, { knob, values, base }, ctx, encoder));
  }
  return {
    available: true,
    modelId: record.id,
    savedBy: typeof study === 'string' ? study : null,
    rows: num('rows'),
    measuredRows: num('measured'),
    parityMethod: validated ? 'cross_validation' : 'in_sample',
    folds: validated ? num('folds') : 0,
    parity,
    mape,
    importance,
    partialDependence: pds,
    pdTarget: PD_TARGET,
    predictedFront,
    trialPredictions,
    recommendedPredicted,
    trust: { level: rec.trust.level, reasons: rec.trust.reasons },
    rule: rec.rule,
  };
}
