import type { Rng } from '../util/rng.js';
import { parseXgbModel, predictEnsemble, type FeatureMatrix, type TreeEnsemble } from './tree-eval.js';
import { trainBooster, type XgbParams } from './xgb.js';

/**
 * A bootstrap ensemble of XGBoost regressors (or classifiers) for one target. Each member is trained
 * on its own resample of the rows, so the members' disagreement is the model's uncertainty: the
 * acquisition function reads the members as draws, `recommend` reads their mean and spread.
 *
 * Boosters leave WebAssembly as soon as they are trained: the saved XGBoost binary model is parsed
 * into a typed-array tree ensemble (tree-eval.ts) and the booster is freed, so no WebAssembly memory
 * is held and prediction in bulk is plain JS over Float32Arrays.
 */
export interface EnsembleSpec {
  readonly members: number;
  readonly xgb: Partial<XgbParams>;
}

export interface Ensemble {
  /** XGBoost binary model of each member (what the store keeps). */
  readonly memberBytes: readonly Uint8Array[];
  readonly members: readonly TreeEnsemble[];
}

/** Row indices of `members` bootstrap resamples (with replacement) of n rows. */
export function bootstrapIndices(n: number, members: number, rng: Rng): number[][] {
  return Array.from({ length: members }, (_, m) => {
    if (members === 1) return [...Array(n).keys()];
    const r = rng.fork(`bootstrap-${m}`);
    return Array.from({ length: n }, () => r.int(n));
  });
}

export async function fitEnsemble(
  x: readonly (readonly number[])[],
  y: readonly number[],
  spec: EnsembleSpec,
  samples: readonly (readonly number[])[],
): Promise<Ensemble> {
  const memberBytes: Uint8Array[] = [];
  for (let m = 0; m < spec.members; m++) {
    const rows = samples[m] ?? [...x.keys()];
    const booster = await trainBooster(
      rows.map((i) => x[i] ?? []),
      rows.map((i) => y[i] ?? 0),
      { ...spec.xgb, seed: (spec.xgb.seed ?? 0) + m },
    );
    try {
      memberBytes.push(booster.saveBytes());
    } finally {
      booster.free();
    }
  }
  return ensembleFromBytes(memberBytes);
}

export function ensembleFromBytes(memberBytes: readonly Uint8Array[]): Ensemble {
  return { memberBytes, members: memberBytes.map((b) => parseXgbModel(b)) };
}

/** Member predictions, row-major (row * members + m). */
export function predictDraws(e: Ensemble, x: FeatureMatrix): Float64Array {
  const k = e.members.length;
  const out = new Float64Array(x.rows * k);
  const col = new Float64Array(x.rows);
  e.members.forEach((member, m) => {
    predictEnsemble(member, x, col);
    for (let i = 0; i < x.rows; i++) out[i * k + m] = col[i] ?? 0;
  });
  return out;
}

/** Mean and standard deviation across members, per row. */
export function summarizeDraws(draws: Float64Array, members: number): { mean: Float64Array; std: Float64Array } {
  const rows = draws.length / members;
  const mean = new Float64Array(rows);
  const std = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let m = 0; m < members; m++) s += draws[i * members + m] ?? 0;
    const mu = s / members;
    let v = 0;
    for (let m = 0; m < members; m++) v += ((draws[i * members + m] ?? 0) - mu) ** 2;
    mean[i] = mu;
    std[i] = members > 1 ? Math.sqrt(v / (members - 1)) : 0;
  }
  return { mean, std };
}
