import type { BenchmarkResult } from '../domain/index.js';
import { TARGET_NAMES } from '../domain/recommendation.js';

/**
 * What the surrogate predicts, on log scale (domain/recommendation.ts says why). The list lives with
 * the recommendation's schema, below this layer, because its `predicted` intervals are keyed by it.
 */
export { TARGET_NAMES };
export type TargetName = (typeof TARGET_NAMES)[number];

export type TargetValues = Partial<Record<TargetName, number>>;

/** Pulls the targets out of a measured result; missing or non-positive values are left out. */
export function targetsOf(result: BenchmarkResult, gpuCount: number): TargetValues {
  const out: TargetValues = {};
  const put = (k: TargetName, v: number | null | undefined): void => {
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) out[k] = v;
  };
  put('output_throughput', result.output_throughput);
  put('output_throughput_per_gpu', result.output_throughput / Math.max(1, gpuCount));
  put('ttft_p50_ms', result.median_ttft_ms);
  put('ttft_p99_ms', result.p99_ttft_ms);
  put('tpot_p50_ms', result.median_tpot_ms);
  put('tpot_p99_ms', result.p99_tpot_ms);
  put('itl_p50_ms', result.median_itl_ms);
  put('itl_p99_ms', result.p99_itl_ms);
  put('e2el_p99_ms', result.p99_e2el_ms);
  put('kv_cache_peak_gib', result.server_metrics?.kv_cache_peak_gib);
  put('gpu_memory_reserved_gib', result.server_metrics?.gpu_memory_reserved_gib);
  put('energy_per_output_token_j', result.energy?.energy_per_output_token_j);
  return out;
}

/**
 * The targets a run's queue sets: in a run that could not keep up with its arrivals (its backlog grew
 * without bound, src/metrics/saturation.ts) they grow with how long the benchmark ran, so they describe
 * the benchmark, not the configuration. Training leaves them out of saturated runs and learns
 * "cannot sustain this load" as its own classifier (surrogate.ts) instead.
 */
export const QUEUE_TARGETS: readonly TargetName[] = ['ttft_p50_ms', 'ttft_p99_ms', 'e2el_p99_ms'];

/** Whether the run's queue grew without bound (only open-loop runs carry the verdict). */
export const saturatedResult = (result: BenchmarkResult): boolean => result.saturation?.saturated === true;

/** What a run teaches the regressors: `targetsOf`, less the queue's figures where the run saturated. */
export function trainingTargetsOf(result: BenchmarkResult, gpuCount: number): TargetValues {
  const out = targetsOf(result, gpuCount);
  if (saturatedResult(result)) for (const t of QUEUE_TARGETS) delete out[t];
  return out;
}

export const toLog = (v: number): number => Math.log(Math.max(v, 1e-9));
export const fromLog = (v: number): number => Math.exp(v);
