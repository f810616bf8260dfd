import { PROFILE_BOUNDS, type ProfileParam, type SimProfile } from '../domain/index.js';

/**
 * Fitting a `SimProfile` to measured points. The loss is the mean over points of |ln(simulated /
 * measured)| for TTFT and TPOT, each divided by its tolerance, so a point off by the tolerance costs 1
 * whichever metric it is; an absolute (L1) loss, so that a few points the model cannot reproduce (a
 * protocol we could not pin down) do not drag every other point after them.
 *
 * The search is Levenberg–Marquardt on the logarithm of each parameter, made to minimise that L1 loss
 * by reweighting (IRLS: each residual weighted by 1 / max(|r|, 0.05) at the current point). One
 * iteration prices the current profile's Jacobian by forward differences (one profile per parameter)
 * and five damped steps, all in one batch, so a worker pool runs them in parallel; a step is taken only
 * when it lowers the loss. A parameter the points do not move has a zero column and stays where it
 * started; every parameter stays inside its plausible range (`PROFILE_BOUNDS`). Deterministic: the same points and start give the same fit on any machine. The caller
 * passes `evaluate`, so the same code fits on one thread in a test and on every core in `sim calibrate`.
 */
export interface MeasuredPoint {
  readonly ttftMs: number | null;
  readonly tpotMs: number | null;
  /** Relative weight of the point in the loss (1 by default). */
  readonly weight?: number;
}

export interface PredictedPoint {
  readonly ttftMs: number;
  readonly tpotMs: number;
}

/** Predictions of every point under each profile (in order); a point that fails to simulate is null. */
export type BatchEvaluator = (profiles: readonly SimProfile[]) => Promise<(PredictedPoint | null)[][]>;

export interface FitOptions {
  readonly start: SimProfile;
  readonly params: readonly ProfileParam[];
  readonly measured: readonly MeasuredPoint[];
  readonly evaluate: BatchEvaluator;
  /** Relative tolerances the two errors are scaled by (the goals: 25% TTFT, 12% TPOT). */
  readonly ttftTolerance?: number;
  readonly tpotTolerance?: number;
  readonly maxEvaluations?: number;
  readonly maxIterations?: number;
  readonly onProgress?: (p: { evaluations: number; iteration: number; loss: number }) => void;
}

export interface FitResult {
  readonly profile: SimProfile;
  readonly loss: number;
  readonly evaluations: number;
  readonly iterations: number;
}

/** A point simulated as failing costs this much (in tolerances). */
const FAILED_POINT_LOSS = 20;
/** Forward-difference step, in log space (2%): above the seeded noise's jitter, below curvature. */
const FD_STEP = 0.02;
/** The largest move of one parameter in one step, in log space (×/÷ 2). */
const MAX_LOG_STEP = Math.log(2);
/** Damping factors tried each iteration, relative to the current one. */
const DAMPING_TRIES = [0.1, 1, 10, 100, 1000] as const;
const IRLS_FLOOR = 0.05;

export function profileLoss(predicted: readonly (PredictedPoint | null)[], measured: readonly MeasuredPoint[], ttftTol = 0.25, tpotTol = 0.12): number {
  const r = residuals(predicted, measured, ttftTol, tpotTol);
  let sum = 0;
  for (let i = 0; i < r.values.length; i++) sum += (r.weights[i] as number) * Math.abs(r.values[i] as number);
  return r.total === 0 ? 0 : sum / r.total;
}

/** Signed residuals ln(sim/measured)/tolerance, two per point (0 where a metric is not measured), and their point weights. */
function residuals(predicted: readonly (PredictedPoint | null)[], measured: readonly MeasuredPoint[], ttftTol: number, tpotTol: number): { values: Float64Array; weights: Float64Array; total: number } {
  const values = new Float64Array(measured.length * 2);
  const weights = new Float64Array(measured.length * 2);
  let total = 0;
  measured.forEach((m, i) => {
    const w = m.weight ?? 1;
    total += w;
    weights[2 * i] = w;
    weights[2 * i + 1] = w;
    const p = predicted[i] ?? null;
    if (p === null) {
      values[2 * i] = FAILED_POINT_LOSS;
      return;
    }
    const one = (sim: number, meas: number | null, tol: number): number => {
      if (meas === null) return 0;
      const v = Math.log(sim / meas) / tol;
      return Number.isFinite(v) ? v : FAILED_POINT_LOSS;
    };
    values[2 * i] = one(p.ttftMs, m.ttftMs, ttftTol);
    values[2 * i + 1] = one(p.tpotMs, m.tpotMs, tpotTol);
  });
  return { values, weights, total };
}

function withLogs(base: SimProfile, params: readonly ProfileParam[], x: Float64Array): SimProfile {
  const out: SimProfile = { ...base };
  params.forEach((k, j) => {
    out[k] = Math.exp(x[j] as number);
  });
  return out;
}

/** A parameter's log, held inside its plausible range (PROFILE_BOUNDS). */
function clampLog(k: ProfileParam, logV: number): number {
  const [lo, hi] = PROFILE_BOUNDS[k];
  return Math.min(Math.log(hi), Math.max(Math.log(lo), logV));
}

/** Solves the symmetric system A·d = b (n small) by Gaussian elimination with partial pivoting. */
function solve(a: Float64Array[], b: Float64Array): Float64Array {
  const n = b.length;
  const m: Float64Array[] = a.map((row, i) => {
    const r = new Float64Array(n + 1);
    r.set(row);
    r[n] = b[i] as number;
    return r;
  });
  for (let c = 0; c < n; c++) {
    let piv = c;
    for (let r = c + 1; r < n; r++) if (Math.abs((m[r] as Float64Array)[c] as number) > Math.abs((m[piv] as Float64Array)[c] as number)) piv = r;
    const tmp = m[c] as Float64Array;
    m[c] = m[piv] as Float64Array;
    m[piv] = tmp;
    const rowC = m[c] as Float64Array;
    const p = rowC[c] as number;
    if (Math.abs(p) < 1e-300) continue;
    for (let r = c + 1; r < n; r++) {
      const row = m[r] as Float64Array;
      const f = (row[c] as number) / p;
      if (f === 0) continue;
      for (let k = c; k <= n; k++) row[k] = (row[k] as number) - f * (rowC[k] as number);
    }
  }
  const x = new Float64Array(n);
  for (let r = n - 1; r >= 0; r--) {
    const row = m[r] as Float64Array;
    let s = row[n] as number;
    for (let k = r + 1; k < n; k++) s -= (row[k] as number) * (x[k] as number);
    const p = row[r] as number;
    x[r] = Math.abs(p) < 1e-300 ? 0 : s / p;
  }
  return x;
}

export async function fitProfile(opts: FitOptions): Promise<FitResult> {
  const ttftTol = opts.ttftTolerance ?? 0.25;
  const tpotTol = opts.tpotTolerance ?? 0.12;
  const maxEvals = opts.maxEvaluations ?? 600;
  const maxIter = opts.maxIterations ?? 40;
  const P = opts.params.length;
  let evaluations = 0;
  const price = async (xs: readonly Float64Array[]): Promise<(PredictedPoint | null)[][]> => {
    evaluations += xs.length;
    return opts.evaluate(xs.map((x) => withLogs(opts.start, opts.params, x)));
  };
  // The start is held inside the bounds too (a parameter at 0 cannot live in log space).
  let x: Float64Array = Float64Array.from(opts.params, (k) => clampLog(k, Math.log(Math.max(opts.start[k], 1e-12))));
  let pred = (await price([x]))[0] ?? [];
  let loss = profileLoss(pred, opts.measured, ttftTol, tpotTol);
  let damping = 1e-2;
  let iteration = 0;
  opts.onProgress?.({ evaluations, iteration, loss });
  while (iteration < maxIter && evaluations + P + DAMPING_TRIES.length <= maxEvals) {
    iteration++;
    const r0 = residuals(pred, opts.measured, ttftTol, tpotTol);
    // IRLS weights: a weighted least-squares step whose fixed point is the L1 minimum.
    const omega = r0.values.map((v, i) => (r0.weights[i] as number) / Math.max(IRLS_FLOOR, Math.abs(v)));
    // Forward differences, stepping inwards at an upper bound.
    const steps = opts.params.map((k, j) => ((x[j] as number) + FD_STEP > Math.log(PROFILE_BOUNDS[k][1]) ? -FD_STEP : FD_STEP));
    const probes = opts.params.map((_, j) => {
      const xj = Float64Array.from(x);
      xj[j] = (xj[j] as number) + (steps[j] as number);
      return xj;
    });
    const probed = await price(probes);
    const J: Float64Array[] = probed.map((pp, j) => {
      const rj = residuals(pp, opts.measured, ttftTol, tpotTol).values;
      return rj.map((v, i) => (v - (r0.values[i] as number)) / (steps[j] as number));
    });
    // Normal equations of the weighted problem: (JᵀΩJ + λ·diag) d = −JᵀΩr.
    const JtJ = Array.from({ length: P }, () => new Float64Array(P));
    const Jtr = new Float64Array(P);
    for (let a = 0; a < P; a++) {
      const ja = J[a] as Float64Array;
      for (let i = 0; i < ja.length; i++) Jtr[a] = (Jtr[a] as number) - (omega[i] as number) * (ja[i] as number) * (r0.values[i] as number);
      for (let b = a; b < P; b++) {
        const jb = J[b] as Float64Array;
        let s = 0;
        for (let i = 0; i < ja.length; i++) s += (omega[i] as number) * (ja[i] as number) * (jb[i] as number);
        (JtJ[a] as Float64Array)[b] = s;
        (JtJ[b] as Float64Array)[a] = s;
      }
    }
    const trials = DAMPING_TRIES.map((f) => {
      const lambda = damping * f;
      const A = JtJ.map((row, a) => {
        const out = Float64Array.from(row);
        out[a] = (out[a] as number) * (1 + lambda) + 1e-9;
        return out;
      });
      const d = solve(A, Jtr);
      const xn = Float64Array.from(x, (v, j) => clampLog(opts.params[j] as ProfileParam, v + Math.max(-MAX_LOG_STEP, Math.min(MAX_LOG_STEP, d[j] as number))));
      return { lambda, x: xn };
    });
    const tried = await price(trials.map((t) => t.x));
    let pick = -1;
    let pickLoss = loss;
    tried.forEach((pp, i) => {
      const l = profileLoss(pp, opts.measured, ttftTol, tpotTol);
      if (l < pickLoss - 1e-9) {
        pick = i;
        pickLoss = l;
      }
    });
    if (pick < 0) {
      damping *= 100;
      opts.onProgress?.({ evaluations, iteration, loss });
      if (damping > 1e8) break;
      continue;
    }
    const gain = loss - pickLoss;
    x = (trials[pick] as { x: Float64Array }).x;
    pred = tried[pick] as (PredictedPoint | null)[];
    loss = pickLoss;
    damping = Math.max(1e-6, (trials[pick] as { lambda: number }).lambda / 3);
    opts.onProgress?.({ evaluations, iteration, loss });
    if (gain < 1e-4 * Math.max(loss, 1e-3)) break;
  }
  return { profile: withLogs(opts.start, opts.params, x), loss, evaluations, iterations: iteration };
}
