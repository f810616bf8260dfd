import { LmBenchError } from '../errors.js';
import type { Rng } from '../util/rng.js';
import { bootstrapIndices, ensembleFromBytes, fitEnsemble, predictDraws, type Ensemble } from './ensemble.js';
import { PRIOR_MEMBERS, SIMULATOR_LOG_SD, unitQuantiles } from './simulator-spread.js';
import { TARGET_NAMES, type TargetName, type TargetValues } from './targets.js';
import type { FeatureMatrix } from './tree-eval.js';
import type { XgbParams } from './xgb.js';

/**
 * The surrogate: one bootstrap ensemble per target, all members of index m trained on the same
 * resample (so member m is one coherent draw across targets), plus two classifiers: feasibility (did the
 * configuration start) and sustain (did it keep up with the workload's arrivals: a run whose queue grew
 * without bound has latency figures set by how long it ran, which the regressors never see; targets.ts).
 * Regressors learn log(measured ÷ physics baseline); predictions multiply back.
 */
export interface TrainingRow {
  readonly x: readonly number[];
  readonly baselines: Readonly<Record<TargetName, number>>;
  readonly targets: TargetValues;
  readonly started: boolean;
  /** The run could not sustain its load (metrics/saturation.ts); absent: it did, or nothing says otherwise. */
  readonly saturated?: boolean;
}

export interface SurrogateSpec {
  readonly members: number;
  readonly xgb: Partial<XgbParams>;
  readonly feasibilityMembers: number;
  readonly targets: readonly TargetName[];
  /** Fewest rows with a value before a target gets a model. */
  readonly minRows: number;
}

export const DEFAULT_SURROGATE_SPEC: SurrogateSpec = Object.freeze({
  members: 5,
  xgb: { rounds: 120, maxDepth: 5, eta: 0.1, subsample: 0.9, colsampleBytree: 0.9 },
  feasibilityMembers: 1,
  targets: TARGET_NAMES,
  minRows: 8,
});

/** A probability per configuration: learned, or one value where the history holds a single class. */
export type Classifier = { readonly kind: 'constant'; readonly p: number } | { readonly kind: 'model'; readonly ensemble: Ensemble };
export type Feasibility = Classifier;

export interface Surrogate {
  readonly featureNames: readonly string[];
  /** Draws per prediction: the ensembles' members, or PRIOR_MEMBERS for one-member ensembles (drawsOf). */
  readonly members: number;
  readonly targets: Partial<Record<TargetName, Ensemble>>;
  readonly feasibility: Feasibility;
  /** P(keeps up with the load | started); absent on models saved before it existed: 1. */
  readonly sustain?: Classifier;
  /**
   * Per target, the factor that widens the ensemble's log-scale σ so ±2σ covers 95% of held-out
   * values (bootstrap members agree more than the truth varies); set from k-fold validation, else 1.
   */
  readonly intervalScale?: Partial<Record<TargetName, number>>;
  /**
   * Targets priced by the simulator prior alone (prior.ts): member m predicts baseline × exp(offset[m]).
   * Used where a target has no trained ensemble (too few measured runs); never persisted.
   */
  readonly offsets?: Partial<Record<TargetName, readonly number[]>>;
  /** Set on a prior surrogate: the posterior of each target's offset (what its answers are labelled with). */
  readonly prior?: Partial<Record<TargetName, { readonly mean: number; readonly sd: number; readonly rows: number }>>;
}

/** Whether the surrogate predicts `t` at all (a trained ensemble or the simulator prior). */
export function modelsTarget(s: Surrogate, t: TargetName): boolean {
  return s.targets[t] !== undefined || s.offsets?.[t] !== undefined;
}

/**
 * A row that measured figures: it started and has a target. A run that started and broke under its
 * load (every request failed, a run-time OOM) teaches the classifiers only and counts toward no
 * threshold of measured runs, or a history of crashes would pass for one to train trees on.
 */
export const measuredRow = (r: TrainingRow): boolean => r.started && Object.keys(r.targets).length > 0;

export async function fitSurrogate(
  rows: readonly TrainingRow[],
  featureNames: readonly string[],
  spec: SurrogateSpec,
  rng: Rng,
): Promise<Surrogate> {
  const measured = rows.filter(measuredRow).length;
  if (measured < spec.minRows) {
    throw new LmBenchError('LMB_ERR_HISTORY_TOO_THIN', `${measured} measured runs; at least ${spec.minRows} are needed to train`, {
      details: { measured, needed: spec.minRows },
    });
  }
  const started = rows.filter((r) => r.started);
  const samples = bootstrapIndices(started.length, spec.members, rng.fork('targets'));
  const targets: Partial<Record<TargetName, Ensemble>> = {};
  for (const t of spec.targets) {
    const keep = started.map((r) => r.targets[t] !== undefined);
    if (keep.filter(Boolean).length < spec.minRows) continue;
    const x: (readonly number[])[] = [];
    const y: number[] = [];
    const remap = new Int32Array(started.length).fill(-1);
    started.forEach((r, i) => {
      const v = r.targets[t];
      if (v === undefined) return;
      remap[i] = x.length;
      x.push(r.x);
      y.push(Math.log(v) - Math.log(r.baselines[t]));
    });
    const memberRows = samples.map((s) => s.map((i) => remap[i] ?? -1).filter((i) => i >= 0));
    targets[t] = await fitEnsemble(x, y, { members: spec.members, xgb: spec.xgb }, memberRows);
  }
  const feasibility = await fitClassifier(rows, (r) => r.started, spec, rng.fork('feasibility'));
  const sustain = await fitClassifier(started, (r) => r.saturated !== true, spec, rng.fork('sustain'));
  return { featureNames, members: drawsOf(spec.members), targets, feasibility, sustain };
}

/**
 * Draws a surrogate whose ensembles have `members` members predicts with. One member has no spread, so
 * its ±2σ would be zero-width and every P(meets the SLOs) 0 or 100%: such an ensemble is read as
 * PRIOR_MEMBERS draws about its one tree, spread by the simulator's own error (`oneMemberSpread`),
 * which k-fold validation then widens where the held-out runs say it is still too narrow.
 */
const drawsOf = (members: number): number => (members === 1 ? PRIOR_MEMBERS : members);

/** Log offsets of the draws about a one-member ensemble's prediction of `t`. */
function oneMemberSpread(t: TargetName, draws: number): number[] {
  return unitQuantiles(draws).map((q) => SIMULATOR_LOG_SD[t] * q);
}

/** A bootstrap ensemble of logistic trees on `label`, or a constant where every row has the same label. */
async function fitClassifier(rows: readonly TrainingRow[], label: (r: TrainingRow) => boolean, spec: SurrogateSpec, rng: Rng): Promise<Classifier> {
  const labels = rows.map((r) => (label(r) ? 1 : 0));
  const positives = labels.reduce<number>((a, b) => a + b, 0);
  if (positives === rows.length || positives === 0) return { kind: 'constant', p: positives === 0 ? 0 : 1 };
  const fm = Math.max(1, spec.feasibilityMembers);
  const ensemble = await fitEnsemble(
    rows.map((r) => r.x),
    labels,
    { members: fm, xgb: { ...spec.xgb, objective: 'binary:logistic' } },
    bootstrapIndices(rows.length, fm, rng),
  );
  return { kind: 'model', ensemble };
}

export interface SurrogatePrediction {
  readonly count: number;
  readonly draws: number;
  /** Natural-scale draws per target, row-major (i * draws + s). */
  readonly targets: Partial<Record<TargetName, Float64Array>>;
  readonly pStart: Float64Array;
  /** P(keeps up with the load), for a configuration that starts. */
  readonly pSustain: Float64Array;
}

/**
 * Predicts every modelled target for a feature matrix. `baselines[t][i]` is row i's physics estimate
 * of target t (from features.ts).
 */
export function predictSurrogate(
  s: Surrogate,
  x: FeatureMatrix,
  baselines: Readonly<Partial<Record<TargetName, Float64Array>>>,
  only?: readonly TargetName[],
): SurrogatePrediction {
  if (x.cols !== s.featureNames.length) {
    throw new LmBenchError('LMB_ERR_INTERNAL', `surrogate expects ${s.featureNames.length} features, got ${x.cols}`);
  }
  const out: Partial<Record<TargetName, Float64Array>> = {};
  for (const t of only ?? ([...new Set([...Object.keys(s.targets), ...Object.keys(s.offsets ?? {})])] as TargetName[])) {
    const e = s.targets[t];
    const base = baselines[t];
    const off = s.offsets?.[t];
    if (e === undefined && off !== undefined && base !== undefined) {
      const k = s.members;
      const d = new Float64Array(x.rows * k);
      for (let i = 0; i < x.rows; i++) for (let m = 0; m < k; m++) d[i * k + m] = (base[i] ?? 1) * Math.exp(off[m] ?? 0);
      out[t] = d;
      continue;
    }
    if (e === undefined || base === undefined) continue;
    const d = predictDraws(e, x);
    const k = e.members.length;
    if (k === 1 && s.members > 1) {
      const spread = oneMemberSpread(t, s.members);
      const wide = new Float64Array(x.rows * s.members);
      for (let i = 0; i < x.rows; i++) {
        const b = (base[i] ?? 1) * Math.exp(d[i] ?? 0);
        for (let m = 0; m < s.members; m++) wide[i * s.members + m] = b * Math.exp(spread[m] ?? 0);
      }
      out[t] = wide;
      continue;
    }
    for (let i = 0; i < x.rows; i++) {
      const b = base[i] ?? 1;
      for (let m = 0; m < k; m++) d[i * k + m] = b * Math.exp(d[i * k + m] ?? 0);
    }
    out[t] = d;
  }
  return { count: x.rows, draws: s.members, targets: out, pStart: classifierP(s.feasibility, x), pSustain: classifierP(s.sustain ?? ALWAYS, x) };
}

const ALWAYS: Classifier = { kind: 'constant', p: 1 };

/** The classifier's probability per row: the mean of its members. */
function classifierP(c: Classifier, x: FeatureMatrix): Float64Array {
  const p = new Float64Array(x.rows);
  if (c.kind === 'constant') return p.fill(c.p);
  const d = predictDraws(c.ensemble, x);
  const k = c.ensemble.members.length;
  for (let i = 0; i < x.rows; i++) {
    let sum = 0;
    for (let m = 0; m < k; m++) sum += d[i * k + m] ?? 0;
    p[i] = sum / k;
  }
  return p;
}

/* ------------------------------------------------------------------ persistence */

interface SurrogateJson {
  readonly format: 'lm-bench-surrogate/1';
  readonly featureNames: readonly string[];
  readonly members: number;
  readonly targets: Partial<Record<TargetName, string[]>>;
  /** `pStart`: the key models were first saved with. */
  readonly feasibility: ClassifierJson<'pStart'>;
  readonly sustain?: ClassifierJson<'p'>;
  readonly intervalScale?: Partial<Record<TargetName, number>>;
}

/** A classifier as saved: its constant under `K`, or its members' XGBoost models. */
type ClassifierJson<K extends string> = ({ kind: 'constant' } & Record<K, number>) | { kind: 'model'; members: string[] };

const b64 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
const unb64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'));

/** The blob the store keeps: the feature schema and every member's XGBoost binary model. */
export function serializeSurrogate(s: Surrogate): Uint8Array {
  const json: SurrogateJson = {
    format: 'lm-bench-surrogate/1',
    featureNames: s.featureNames,
    members: s.members,
    targets: Object.fromEntries(Object.entries(s.targets).map(([t, e]) => [t, e.memberBytes.map(b64)])),
    feasibility: classifierToJson(s.feasibility, 'pStart'),
    ...(s.sustain === undefined ? {} : { sustain: classifierToJson(s.sustain, 'p') }),
    ...(s.intervalScale === undefined ? {} : { intervalScale: s.intervalScale }),
  };
  return new TextEncoder().encode(JSON.stringify(json));
}

export function deserializeSurrogate(blob: Uint8Array): Surrogate {
  let json: SurrogateJson;
  try {
    json = JSON.parse(new TextDecoder().decode(blob)) as SurrogateJson;
  } catch (err) {
    throw new LmBenchError('LMB_ERR_INTERNAL', 'stored surrogate is not valid JSON', { cause: err });
  }
  if (json.format !== 'lm-bench-surrogate/1') throw new LmBenchError('LMB_ERR_INTERNAL', `unknown surrogate format ${String(json.format)}`);
  const targets: Partial<Record<TargetName, Ensemble>> = {};
  for (const [t, members] of Object.entries(json.targets) as [TargetName, string[]][]) targets[t] = ensembleFromBytes(members.map(unb64));
  const feasibility = classifierFromJson(json.feasibility, 'pStart');
  const sustain = json.sustain === undefined ? undefined : classifierFromJson(json.sustain, 'p');
  return {
    featureNames: json.featureNames,
    // Models saved with one member before they were read as spread draws get the same reading.
    members: drawsOf(json.members),
    targets,
    feasibility,
    ...(sustain === undefined ? {} : { sustain }),
    ...(json.intervalScale === undefined ? {} : { intervalScale: json.intervalScale }),
  };
}

function classifierToJson<K extends string>(c: Classifier, key: K): ClassifierJson<K> {
  return c.kind === 'constant' ? ({ kind: 'constant', [key]: c.p } as ClassifierJson<K>) : { kind: 'model', members: c.ensemble.memberBytes.map(b64) };
}

function classifierFromJson<K extends string>(j: ClassifierJson<K>, key: K): Classifier {
  return j.kind === 'constant' ? { kind: 'constant', p: (j as Record<K, number>)[key] } : { kind: 'model', ensemble: ensembleFromBytes(j.members.map(unb64)) };
}
