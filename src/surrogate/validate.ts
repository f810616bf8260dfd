import { KNOB_NAMES } from '../domain/server-config.js';
import type { Rng } from '../util/rng.js';
import { summarizeDraws } from './ensemble.js';
import { fitSurrogate, predictSurrogate, type Surrogate, type SurrogateSpec, type TrainingRow } from './surrogate.js';
import type { TargetName } from './targets.js';
import { toFeatureMatrix, type FeatureMatrix } from './tree-eval.js';

/**
 * Validation of the surrogate: held-out error (MAPE and R² per target), k-fold cross-validation and
 * permutation importance per knob (Optuna's importance analogue, measured on held-out rows).
 */
export interface TargetScore {
  readonly n: number;
  /** Mean absolute percentage error, as a fraction (0.08 = 8%). */
  readonly mape: number;
  /** Coefficient of determination on the natural scale. */
  readonly r2: number;
  /** Share of held-out values inside the ensemble's ±2σ (log-scale) interval. */
  readonly coverage: number;
}

/** One held-out value beside its prediction (geometric mean of the members, ±2σ calibrated). */
export interface HeldOutPair {
  readonly target: TargetName;
  readonly measured: number;
  readonly predicted: number;
  readonly low: number;
  readonly high: number;
}

/** The targets whose held-out pairs are kept with a validated model (the report's parity plot). */
export const PARITY_TARGETS: readonly TargetName[] = ['output_throughput_per_gpu', 'ttft_p99_ms', 'itl_p99_ms'];

export interface ValidationReport {
  readonly folds: number;
  readonly rows: number;
  readonly targets: Partial<Record<TargetName, TargetScore>>;
  /** Feasibility classifier accuracy on held-out rows (null when every run started). */
  readonly feasibility_accuracy: number | null;
  /** Sustain classifier accuracy on held-out started rows (null when no run saturated). */
  readonly sustain_accuracy: number | null;
  /** Per knob: mean rise in held-out MAPE across targets when the knob's columns are shuffled. */
  readonly importance: Record<string, number>;
  /** Per target, the σ factor that makes ±2σ cover 95% of held-out values (≥ 1). */
  readonly interval_scale: Partial<Record<TargetName, number>>;
  /** Held-out pairs of the PARITY_TARGETS, intervals widened by `interval_scale`. */
  readonly held_out: readonly HeldOutPair[];
}

export function scoreTarget(pred: readonly number[], actual: readonly number[], within?: readonly boolean[]): TargetScore {
  const n = actual.length;
  if (n === 0) return { n: 0, mape: Number.NaN, r2: Number.NaN, coverage: Number.NaN };
  let ape = 0;
  let mean = 0;
  for (let i = 0; i < n; i++) {
    ape += Math.abs((pred[i] ?? 0) - (actual[i] ?? 0)) / Math.abs(actual[i] ?? 1);
    mean += (actual[i] ?? 0) / n;
  }
  let ssRes = 0;
  let ssTot = 0;
  for (let i = 0; i < n; i++) {
    ssRes += ((pred[i] ?? 0) - (actual[i] ?? 0)) ** 2;
    ssTot += ((actual[i] ?? 0) - mean) ** 2;
  }
  const coverage = within === undefined ? Number.NaN : within.filter(Boolean).length / n;
  return { n, mape: ape / n, r2: ssTot > 0 ? 1 - ssRes / ssTot : Number.NaN, coverage };
}

interface Collected {
  pred: number[];
  actual: number[];
  /** σ of the ensemble on log scale, per held-out value. */
  sd: number[];
  within: boolean[];
  /** |log actual − mean| ÷ σ of the ensemble, per held-out value. */
  z: number[];
}

function matrixAndBaselines(rows: readonly TrainingRow[], cols: number): { x: FeatureMatrix; baselines: Partial<Record<TargetName, Float64Array>> } {
  const x = toFeatureMatrix(rows.map((r) => r.x), cols);
  const baselines: Partial<Record<TargetName, Float64Array>> = {};
  for (const t of Object.keys(rows[0]?.baselines ?? {}) as TargetName[]) baselines[t] = Float64Array.from(rows, (r) => r.baselines[t]);
  return { x, baselines };
}

/** How often a surrogate's two classifiers call rows right: starts (all rows) and keeps up (the started ones). */
export interface ClassifierTally {
  feasRight: number;
  feasTotal: number;
  /** A row that did not start was seen: feasibility has something to score. */
  anyFailed: boolean;
  sustainRight: number;
  sustainTotal: number;
  /** A started row that saturated was seen: keep-up has something to score. */
  anySaturated: boolean;
}

const emptyTally = (): ClassifierTally => ({ feasRight: 0, feasTotal: 0, anyFailed: false, sustainRight: 0, sustainTotal: 0, anySaturated: false });

/** Adds `rows`, judged by `s` at P ≥ 0.5, to `tally` (a fresh one by default) and returns it. */
export function tallyClassifiers(s: Surrogate, rows: readonly TrainingRow[], tally: ClassifierTally = emptyTally()): ClassifierTally {
  const { x, baselines } = matrixAndBaselines(rows, s.featureNames.length);
  const { pStart, pSustain } = predictSurrogate(s, x, baselines, []);
  rows.forEach((row, i) => {
    if (!row.started) tally.anyFailed = true;
    tally.feasTotal++;
    if ((pStart[i] ?? 0) >= 0.5 === row.started) tally.feasRight++;
    if (!row.started) return;
    if (row.saturated === true) tally.anySaturated = true;
    tally.sustainTotal++;
    if ((pSustain[i] ?? 1) >= 0.5 === (row.saturated !== true)) tally.sustainRight++;
  });
  return tally;
}

/** The tally's keep-up accuracy, or null when no started row saturated. */
export const sustainAccuracy = (t: ClassifierTally): number | null => (t.anySaturated && t.sustainTotal > 0 ? t.sustainRight / t.sustainTotal : null);

/** Held-out scores of a trained surrogate on rows it did not see; optionally collects into `acc`. */
export function evaluateSurrogate(
  s: Surrogate,
  test: readonly TrainingRow[],
  acc: Partial<Record<TargetName, Collected>> = {},
): Partial<Record<TargetName, TargetScore>> {
  const measured = test.filter((r) => r.started);
  if (measured.length === 0) return {};
  const { x, baselines } = matrixAndBaselines(measured, s.featureNames.length);
  const p = predictSurrogate(s, x, baselines);
  for (const [t, draws] of Object.entries(p.targets) as [TargetName, Float64Array][]) {
    const logDraws = draws.map((v) => Math.log(v));
    const { mean, std } = summarizeDraws(logDraws, p.draws);
    const c = (acc[t] ??= { pred: [], actual: [], sd: [], within: [], z: [] });
    measured.forEach((r, i) => {
      const a = r.targets[t];
      if (a === undefined) return;
      const mu = mean[i] ?? 0;
      const sd = std[i] ?? 0;
      c.pred.push(Math.exp(mu));
      c.actual.push(a);
      c.sd.push(sd);
      c.within.push(Math.abs(Math.log(a) - mu) <= 2 * sd * (s.intervalScale?.[t] ?? 1));
      c.z.push(Math.abs(Math.log(a) - mu) / Math.max(sd, 1e-9));
    });
  }
  return Object.fromEntries(Object.entries(acc).map(([t, c]) => [t, scoreTarget(c.pred, c.actual, c.within)]));
}

function meanMape(s: Surrogate, rows: readonly TrainingRow[], x: FeatureMatrix, baselines: Partial<Record<TargetName, Float64Array>>): number {
  const p = predictSurrogate(s, x, baselines);
  let total = 0;
  let count = 0;
  for (const [t, draws] of Object.entries(p.targets) as [TargetName, Float64Array][]) {
    rows.forEach((r, i) => {
      const a = r.targets[t];
      if (a === undefined) return;
      let m = 0;
      for (let k = 0; k < p.draws; k++) m += Math.log(draws[i * p.draws + k] ?? 1) / p.draws;
      total += Math.abs(Math.exp(m) - a) / a;
      count++;
    });
  }
  return count > 0 ? total / count : 0;
}

/** Columns of each knob in the feature schema (`knob_<encoded name>` starts with the knob's name). */
export function knobColumns(featureNames: readonly string[]): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  featureNames.forEach((f, j) => {
    if (!f.startsWith('knob_')) return;
    // Encoded names are `name`, `log2(name)` or `name=category` (src/space/encode.ts).
    const enc = f.slice(5).replace(/^log2\((.*)\)$/, '$1').split('=')[0] ?? '';
    const knob = [...KNOB_NAMES].sort((a, b) => b.length - a.length).find((k) => enc === k) ?? enc;
    (out[knob] ??= []).push(j);
  });
  return out;
}

export function permutationImportance(s: Surrogate, test: readonly TrainingRow[], rng: Rng): Record<string, number> {
  const measured = test.filter((r) => r.started);
  if (measured.length < 2) return {};
  const { x, baselines } = matrixAndBaselines(measured, s.featureNames.length);
  const base = meanMape(s, measured, x, baselines);
  const out: Record<string, number> = {};
  for (const [knob, cols] of Object.entries(knobColumns(s.featureNames))) {
    const data = Float32Array.from(x.data);
    const perm = [...Array(x.rows).keys()];
    for (let i = perm.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [perm[i], perm[j]] = [perm[j] ?? 0, perm[i] ?? 0];
    }
    for (let i = 0; i < x.rows; i++) for (const c of cols) data[i * x.cols + c] = x.data[(perm[i] ?? 0) * x.cols + c] ?? 0;
    out[knob] = meanMape(s, measured, { rows: x.rows, cols: x.cols, data }, baselines) - base;
  }
  return out;
}

/** 95th percentile of the standardized held-out errors ÷ 2, capped to [1, 50]. */
function intervalScales(acc: Partial<Record<TargetName, Collected>>): Partial<Record<TargetName, number>> {
  const out: Partial<Record<TargetName, number>> = {};
  for (const [t, c] of Object.entries(acc) as [TargetName, Collected][]) {
    const z = c.z.filter(Number.isFinite).sort((a, b) => a - b);
    if (z.length === 0) continue;
    const q95 = z[Math.min(z.length - 1, Math.floor(0.95 * z.length))] ?? 2;
    out[t] = Math.min(50, Math.max(1, q95 / 2));
  }
  return out;
}

/** Fits one surrogate (in-process, or in a worker pool: src/workers/pool.ts). */
export type FitFn = (rows: readonly TrainingRow[], featureNames: readonly string[], spec: SurrogateSpec, rng: Rng) => Promise<Surrogate>;

/**
 * Seeded k-fold cross-validation: held-out scores per target, feasibility accuracy and knob
 * importance. Fold fits are started together, so a worker pool fits them in parallel.
 */
export async function crossValidate(
  rows: readonly TrainingRow[],
  featureNames: readonly string[],
  spec: SurrogateSpec,
  opts: { readonly folds: number; readonly rng: Rng; readonly fit?: FitFn },
): Promise<ValidationReport> {
  const fit = opts.fit ?? fitSurrogate;
  const order = [...rows.keys()];
  const r = opts.rng.fork('folds');
  for (let i = order.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [order[i], order[j]] = [order[j] ?? 0, order[i] ?? 0];
  }
  const k = Math.max(2, Math.min(opts.folds, rows.length));
  const splits = Array.from({ length: k }, (_, f) => {
    const testIdx = new Set(order.filter((_, i) => i % k === f));
    return { train: rows.filter((_, i) => !testIdx.has(i)), test: rows.filter((_, i) => testIdx.has(i)) };
  });
  const models = await Promise.all(splits.map((sp, f) => fit(sp.train, featureNames, spec, opts.rng.fork(`fold-${f}`))));
  const acc: Partial<Record<TargetName, Collected>> = {};
  const importanceSum: Record<string, number> = {};
  const tally = emptyTally();
  let targets: Partial<Record<TargetName, TargetScore>> = {};
  splits.forEach(({ test }, f) => {
    const s = models[f];
    if (s === undefined) return;
    targets = evaluateSurrogate(s, test, acc);
    for (const [knob, v] of Object.entries(permutationImportance(s, test, opts.rng.fork(`perm-${f}`)))) {
      importanceSum[knob] = (importanceSum[knob] ?? 0) + v / k;
    }
    tallyClassifiers(s, test, tally);
  });
  const intervalScale = intervalScales(acc);
  const heldOut: HeldOutPair[] = [];
  for (const t of PARITY_TARGETS) {
    const c = acc[t];
    if (c === undefined) continue;
    const scale = intervalScale[t] ?? 1;
    c.pred.forEach((p, i) => {
      const w = 2 * (c.sd[i] ?? 0) * scale;
      heldOut.push({ target: t, measured: c.actual[i] ?? 0, predicted: p, low: p * Math.exp(-w), high: p * Math.exp(w) });
    });
  }
  return {
    folds: k,
    rows: rows.length,
    targets,
    feasibility_accuracy: tally.anyFailed && tally.feasTotal > 0 ? tally.feasRight / tally.feasTotal : null,
    sustain_accuracy: sustainAccuracy(tally),
    importance: importanceSum,
    interval_scale: intervalScale,
    held_out: heldOut,
  };
}
