import { z } from 'zod';
import { Diagnosis, RunEvidence } from './diagnosis.js';
import { Cost, Energy } from './energy.js';
import { HardwareRef } from './hardware.js';
import { ServerConfig } from './server-config.js';
import { Slo } from './slo.js';
import { Workload } from './workload.js';

/**
 * A benchmark result under `vllm bench serve`'s key names and metric definitions (see
 * docs/references/load-runners.md#vllm-bench-serve-result-keys and docs/references/load-runners.md#vllm-bench-serve-metrics), so tools that read vLLM's files read ours; plus lm-bench's own blocks.
 * Stat keys are `{mean,median,std,p50,p90,p95,p99}_{ttft,tpot,itl,e2el}_ms`.
 */
export const RESULT_METRICS = ['ttft', 'tpot', 'itl', 'e2el'] as const;
export type ResultMetric = (typeof RESULT_METRICS)[number];
export const RESULT_STATS = ['mean', 'median', 'std', 'p50', 'p90', 'p95', 'p99'] as const;
export type ResultStat = (typeof RESULT_STATS)[number];
export type StatKey = `${ResultStat}_${ResultMetric}_ms`;
export const PERCENTILES = [50, 90, 95, 99] as const;

export const STAT_KEYS: readonly StatKey[] = RESULT_METRICS.flatMap((m) =>
  RESULT_STATS.map((s): StatKey => `${s}_${m}_ms`),
);
const statShape = Object.fromEntries(STAT_KEYS.map((k) => [k, z.number()])) as Record<StatKey, z.ZodNumber>;

export const ServerMetrics = z.strictObject({
  /** Peak fraction of KV blocks in use (vLLM `kv_cache_usage_perc`, 0–1). */
  kv_cache_usage_peak: z.number().min(0).max(1).nullable(),
  kv_cache_peak_gib: z.number().nonnegative().nullable(),
  kv_cache_capacity_tokens: z.number().nonnegative().nullable(),
  gpu_memory_reserved_gib: z.number().nonnegative().nullable(),
  num_preemptions: z.number().nonnegative().nullable(),
  num_requests_running_peak: z.number().nonnegative().nullable(),
  num_requests_waiting_peak: z.number().nonnegative().nullable(),
  prefix_cache_hit_rate: z.number().min(0).max(1).nullable(),
});
export type ServerMetrics = z.infer<typeof ServerMetrics>;

export const SteadyState = z.strictObject({
  start_s: z.number(),
  end_s: z.number(),
  duration_s: z.number().nonnegative(),
  requests_completed_in_window: z.int().nonnegative(),
  request_throughput: z.number(),
  output_throughput: z.number(),
  total_token_throughput: z.number(),
  mean_ttft_ms: z.number(),
  p99_ttft_ms: z.number(),
  mean_itl_ms: z.number(),
  p99_itl_ms: z.number(),
  /** Two-sample KS statistic and p-value between the window's halves (steady if p is large). */
  ks_statistic: z.number().nullable(),
  ks_p_value: z.number().nullable(),
  warning: z.string().nullable(),
});
export type SteadyState = z.infer<typeof SteadyState>;

/**
 * Whether an open-loop run kept up with its arrivals (src/metrics/saturation.ts, for the simulator's runs
 * and the load runner's alike): a saturated run's queue grows for as long as the arrivals go on, so its
 * latency figures measure the run's length, not a steady state, and the run does not meet any SLO
 * whatever its percentiles say.
 */
export const Saturation = z.strictObject({
  saturated: z.boolean(),
  /**
   * Present (true) when the run was too short to tell: its pace under 0.9 of the arrivals and the
   * requests in the system still growing, but its batch had not turned over (metrics/saturation.ts).
   */
  undecided: z.literal(true).optional(),
  /** Arrivals per second over the second half of the sending span. */
  offered_rps: z.number().nonnegative(),
  /** Completions per second while the server worked through its backlog: what it sustains when saturated. */
  sustained_rps: z.number().nonnegative(),
  /** How fast the waiting backlog (arrived, no first token yet) grew over that half, requests/s. */
  backlog_growth_rps: z.number().nonnegative(),
  /** The span the test read, run seconds. */
  window_start_s: z.number(),
  window_end_s: z.number(),
});
export type Saturation = z.infer<typeof Saturation>;

/** Infinity survives JSON as the string "inf" (vLLM writes `request_rate` this way). */
export const NumberOrInf = z.union([z.number(), z.literal('inf')]);

/** One group of a run's request errors (metrics/error-samples.ts): what the failure classifier reads. */
export const ErrorSample = z.strictObject({
  status: z.int().nullable(),
  message: z.string(),
  count: z.int().positive(),
});
export type ErrorSample = z.infer<typeof ErrorSample>;

export const LmbBlock = z.strictObject({
  version: z.string(),
  source: z.enum(['sim', 'loadgen', 'ingest']),
  start_epoch_ms: z.number(),
  errors_by_kind: z.record(z.string(), z.int().nonnegative()),
  /** The distinct error messages of the failed requests (absent in results from before it existed). */
  error_samples: z.array(ErrorSample).optional(),
  token_source_counts: z.record(z.string(), z.int().nonnegative()),
  mean_client_queue_ms: z.number(),
  p99_client_queue_ms: z.number(),
  max_loop_lag_ms: z.number().nullable(),
  rejected: z.int().nonnegative(),
  startup_time_s: z.number().nullable(),
  /** A simulated run: which efficiencies priced it (data/sim-profile.yaml or a calibrated profile). */
  sim_profile: z.string().optional(),
  /** A measured run's prompt salt: its synthetic prompts' words (loadgen/prompts.ts); absent: unsalted, or from a file. */
  prompt_salt: z.string().optional(),
});
export type LmbBlock = z.infer<typeof LmbBlock>;

export const BenchmarkMetrics = z.object({
  duration: z.number().nonnegative(),
  completed: z.int().nonnegative(),
  failed: z.int().nonnegative(),
  total_input_tokens: z.int().nonnegative(),
  total_output_tokens: z.int().nonnegative(),
  request_throughput: z.number(),
  request_goodput: z.number().nullable(),
  output_throughput: z.number(),
  total_token_throughput: z.number(),
  max_output_tokens_per_s: z.number(),
  max_concurrent_requests: z.number(),
  ...statShape,
});
export type BenchmarkMetrics = z.infer<typeof BenchmarkMetrics>;

export const BenchmarkResult = BenchmarkMetrics.extend({
  date: z.string(),
  endpoint_type: z.string(),
  backend: z.string(),
  label: z.string().nullable(),
  model_id: z.string(),
  tokenizer_id: z.string().nullable(),
  num_prompts: z.int().nonnegative(),
  request_rate: NumberOrInf,
  burstiness: NumberOrInf,
  max_concurrency: z.int().nullable(),
  server_config: ServerConfig.nullable(),
  hardware: HardwareRef.nullable(),
  model: z.string().nullable(),
  workload: Workload.nullable(),
  slo: Slo.nullable(),
  server_metrics: ServerMetrics.nullable(),
  steady_state: SteadyState.nullable(),
  /** What was seen while the run went (server state, client health); absent in ingested results. */
  evidence: RunEvidence.nullable().optional(),
  /** Why the run missed its SLOs or saturated (`none` when it did neither); absent without evidence. */
  diagnosis: Diagnosis.nullable().optional(),
  /** Power and energy over the load window (issue 25); absent where nothing measured or modelled it. */
  energy: Energy.nullable().optional(),
  /** What the deployment costs at the throughput this run measured; absent without a price. */
  cost: Cost.nullable().optional(),
  /**
   * Whether an open-loop simulated run kept up with its arrivals; null for a closed loop, a burst or
   * too few requests to tell; absent in measured and older results.
   */
  saturation: Saturation.nullable().optional(),
  lmb: LmbBlock,
});
export type BenchmarkResult = z.infer<typeof BenchmarkResult>;
