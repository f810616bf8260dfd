import type { PowerProfile } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import type { SimSummary } from '../sim/index.js';

/**
 * Fitting the GPU power model (physics/power.ts) on ML.ENERGY's measured average power. A row's
 * simulation gives, over ML.ENERGY's steady-state window, the GPU-seconds of tensor work (at the
 * datasheet peak), of HBM traffic and of running kernels; the model's power is linear in its three
 * weights given those sums,
 *
 *   P = G·P_idle + (TDP − P_idle) · (busy_weight·B + compute_weight·C + memory_weight·M) / T,
 *
 * so the fit is a weighted least squares on the relative error of P, with the weights held ≥ 0, and a
 * leave-one-out refit costs nothing. The per-step power cap (min with TDP) is left out of the fit
 * (it binds on few steps of these decode-heavy runs; docs/calibration.md shows by how much).
 *
 * Which utilisation: the simulator's steps are priced with its own step times, and where it runs
 * faster than the real server (B200, Qwen3-30B-A3B with EP) its utilisations are higher than the
 * real GPU's. The fit takes the work per token from the simulation and the pace from the measurement
 * (the sums × simulated ÷ measured throughput): the weights then describe the GPU, not the step-time
 * model's error, and stay right when the step times improve. The idle share is not fitted: these
 * saturated runs keep the GPU busy throughout, so it is taken from a measurement (docs/calibration.md).
 */
export interface PowerObservation {
  readonly model: string;
  readonly gpu: string;
  /** GPUs of the deployment, one GPU's TDP (W). */
  readonly gpus: number;
  readonly tdpW: number;
  /** The window's length (s) and its GPU-seconds of running kernels, tensor work and HBM traffic. */
  readonly durationS: number;
  readonly busyGpuS: number;
  readonly computeGpuS: number;
  readonly memoryGpuS: number;
  readonly measuredPowerW: number;
  readonly measuredThroughput: number;
  readonly predictedThroughput: number;
}

/** A row's observation from its summary (null: no energy, or the run never reached its window). */
export function powerObservation(model: string, gpu: string, measuredPowerW: number, measuredThroughput: number, s: SimSummary | null): PowerObservation | null {
  const e = s?.energy ?? null;
  if (s === null || e === null || e.rule !== 'steady-state' || s.window === null) return null;
  return {
    model,
    gpu,
    gpus: e.gpus,
    tdpW: e.tdpW,
    durationS: e.endS - e.startS,
    busyGpuS: e.busyGpuS,
    computeGpuS: e.computeGpuS,
    memoryGpuS: e.memoryGpuS,
    measuredPowerW,
    measuredThroughput,
    predictedThroughput: s.window.outputThroughput,
  };
}

/** Each GPU's mean utilisations over the window: busy share, tensor and HBM utilisation, at the simulated pace × `pace`. */
function utilisations(o: PowerObservation, pace: number): [number, number, number] {
  const gs = o.gpus * o.durationS;
  return [o.busyGpuS / gs, (pace * o.computeGpuS) / gs, (pace * o.memoryGpuS) / gs];
}

/**
 * The model's average power over the window, W, with the per-step cap applied to the window's mean
 * (the simulator applies it step by step). `pace` 1: at the simulated throughput (the prediction).
 */
export function windowPowerW(o: PowerObservation, p: PowerProfile, pace = 1): number {
  const [b, c, m] = utilisations(o, pace);
  const idle = p.idle_tdp_frac;
  return o.gpus * o.tdpW * (idle + (1 - idle) * Math.min(1, p.busy_weight * b + p.compute_weight * c + p.memory_weight * m));
}

const WEIGHTS = ['busy_weight', 'compute_weight', 'memory_weight'] as const;

/**
 * The three weights that minimise the squared relative error of the power, each (model, GPU) sweep
 * weighing the same, every weight ≥ 0 (the best of the 7 subsets of free weights whose unconstrained
 * solution is non-negative: exact for three unknowns).
 */
export function fitPower(obs: readonly PowerObservation[], idleTdpFrac: number): PowerProfile {
  if (obs.length === 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', 'no measured power to fit the power model on (no row has avg_power_w and a simulated steady-state window)');
  const groups = new Map<string, number>();
  for (const o of obs) groups.set(`${o.model}|${o.gpu}`, (groups.get(`${o.model}|${o.gpu}`) ?? 0) + 1);
  // Normalised per GPU and by (1 − idle): y = (P/(G·TDP) − idle)/(1 − idle) = w · u; relative residual ÷ (P/(G·TDP)/(1 − idle)).
  const rows = obs.map((o) => {
    const share = o.measuredPowerW / (o.gpus * o.tdpW);
    const scale = share / (1 - idleTdpFrac);
    return { u: utilisations(o, o.predictedThroughput > 0 ? o.measuredThroughput / o.predictedThroughput : 1), y: (share - idleTdpFrac) / (1 - idleTdpFrac), w: 1 / (scale * scale) / (groups.get(`${o.model}|${o.gpu}`) ?? 1) };
  });
  let best: { x: number[]; loss: number } | null = null;
  for (let mask = 1; mask < 8; mask++) {
    const free = [0, 1, 2].filter((j) => ((mask >> j) & 1) === 1);
    const x = leastSquares(
      rows.map((r) => free.map((j) => r.u[j] as number)),
      rows.map((r) => r.y),
      rows.map((r) => r.w),
    );
    if (x === null || x.some((v) => !(v >= 0))) continue;
    const full = [0, 0, 0];
    free.forEach((j, k) => (full[j] = x[k] as number));
    const loss = rows.reduce((s, r) => s + r.w * (r.u[0] * (full[0] as number) + r.u[1] * (full[1] as number) + r.u[2] * (full[2] as number) - r.y) ** 2, 0);
    if (best === null || loss < best.loss) best = { x: full, loss };
  }
  const x = best?.x ?? [0, 0, 0];
  return { idle_tdp_frac: idleTdpFrac, ...(Object.fromEntries(WEIGHTS.map((k, j) => [k, x[j] as number])) as Omit<PowerProfile, 'idle_tdp_frac'>) };
}

/** Weighted least squares by the normal equations (a handful of unknowns); null when singular. */
function leastSquares(a: readonly number[][], y: readonly number[], w: readonly number[]): number[] | null {
  const k = a[0]?.length ?? 0;
  if (k === 0) return null;
  const m = Array.from({ length: k }, () => new Array<number>(k + 1).fill(0));
  a.forEach((row, i) => {
    for (let p = 0; p < k; p++) {
      const mp = m[p] as number[];
      mp[k] = (mp[k] as number) + (w[i] as number) * (row[p] as number) * (y[i] as number);
      for (let q = 0; q < k; q++) mp[q] = (mp[q] as number) + (w[i] as number) * (row[p] as number) * (row[q] as number);
    }
  });
  for (let c = 0; c < k; c++) {
    let piv = c;
    for (let r = c + 1; r < k; r++) if (Math.abs((m[r] as number[])[c] as number) > Math.abs((m[piv] as number[])[c] as number)) piv = r;
    [m[c], m[piv]] = [m[piv] as number[], m[c] as number[]];
    const mc = m[c] as number[];
    if (Math.abs(mc[c] as number) < 1e-12) return null;
    for (let r = 0; r < k; r++) {
      if (r === c) continue;
      const mr = m[r] as number[];
      const f = (mr[c] as number) / (mc[c] as number);
      for (let q = c; q <= k; q++) mr[q] = (mr[q] as number) - f * (mc[q] as number);
    }
  }
  return m.map((row, p) => (row[k] as number) / (row[p] as number));
}

/** For each value of `key`, the profile fitted on the observations without it (leave-one-model-out, leave-one-GPU-out). */
export function leaveOneOut(obs: readonly PowerObservation[], key: (o: PowerObservation) => string, idleTdpFrac: number): Map<string, PowerProfile> {
  const out = new Map<string, PowerProfile>();
  for (const k of new Set(obs.map(key))) out.set(k, fitPower(obs.filter((o) => key(o) !== k), idleTdpFrac));
  return out;
}

/** Signed relative errors of power and J/token of one observation under a profile (predicted at the simulated pace). */
export function powerErrors(o: PowerObservation, p: PowerProfile): { power: number; joulesPerToken: number } {
  const w = windowPowerW(o, p);
  const jMeasured = o.measuredPowerW / o.measuredThroughput;
  return { power: w / o.measuredPowerW - 1, joulesPerToken: w / o.predictedThroughput / jMeasured - 1 };
}
