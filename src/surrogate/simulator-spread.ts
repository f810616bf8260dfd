import type { TargetName } from './targets.js';

/**
 * The simulator's known error against real vLLM as a log-scale spread, and the evenly spaced normal
 * quantiles that turn a spread into ensemble members: the prior surrogate (prior.ts) draws its
 * members from it, and so does a one-member ensemble (surrogate.ts), which has no spread of its own.
 */

/**
 * Log-scale spread of simulated over measured real vLLM, per target, from docs/calibration.md:
 * held-out output-throughput MAPE 22.7% and median-ITL MAPE 18.6% (ML.ENERGY dense, not fitted), TTFT
 * 36.8% and TPOT 8.7% leave-one-model-out on aiconfigurator's H100 rows. σ ≈ MAPE / 0.8 (for a normal
 * on log scale E|x| = σ·√(2/π)); tails (p99) and end-to-end get the wider of their parts plus the
 * scheduling noise the simulator does not model; memory is the memory model's checked error. Energy per
 * output token: J/token MAPE 20.2% on the 89 ML.ENERGY rows the power model was fitted on, 20.4% leaving
 * one model out and 25.7% one GPU out (docs/calibration.md, "Power and energy"), so σ ≈ 0.25.
 */
export const SIMULATOR_LOG_SD: Readonly<Record<TargetName, number>> = Object.freeze({
  output_throughput: 0.28,
  output_throughput_per_gpu: 0.28,
  ttft_p50_ms: 0.46,
  ttft_p99_ms: 0.55,
  tpot_p50_ms: 0.23,
  tpot_p99_ms: 0.35,
  itl_p50_ms: 0.23,
  itl_p99_ms: 0.35,
  e2el_p99_ms: 0.35,
  kv_cache_peak_gib: 0.15,
  gpu_memory_reserved_gib: 0.1,
  energy_per_output_token_j: 0.25,
});

export const PRIOR_MEMBERS = 8;

/** Inverse standard normal CDF (Acklam's rational approximation; |error| < 1.2e-9 on (0, 1)). */
export function normalQuantile(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const [b0, b1, b2, b3, b4] = b as [number, number, number, number, number];
  const [c0, c1, c2, c3, c4, c5] = c as [number, number, number, number, number, number];
  const [d0, d1, d2, d3] = d as [number, number, number, number];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) / (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1);
}

/** Unit-variance quantile spacing: z_m = Φ⁻¹((m + ½)/M), rescaled so their sample SD is 1. */
export function unitQuantiles(members: number): number[] {
  const z = Array.from({ length: members }, (_, m) => normalQuantile((m + 0.5) / members));
  const sd = Math.sqrt(z.reduce((s, x) => s + x * x, 0) / Math.max(1, members - 1));
  return z.map((x) => x / sd);
}
