import { z } from 'zod';
import { ServerConfig, Slo, type Workload } from '../domain/index.js';

/**
 * `lm-bench plan` and `POST /v1/plans` (issue 25): which GPUs, how many, at what price, for one model,
 * one traffic and its SLOs. The answer is a list of deployments, one per GPU type asked about, best
 * first under the objective; a GPU type that cannot serve the traffic is listed too, with the reason.
 */
export const PlanObjective = z.enum(['usd_per_mtok', 'tokens_per_joule', 'gpus']);
export type PlanObjective = z.infer<typeof PlanObjective>;

/** The traffic to serve: an open-loop request rate (Poisson) or a number of users in a closed loop. */
export const PlanTraffic = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('rate'), rate_rps: z.number().positive().finite() }),
  z.strictObject({ kind: z.literal('users'), users: z.int().positive() }),
]);
export type PlanTraffic = z.infer<typeof PlanTraffic>;

export const PlanDeployment = z.strictObject({
  gpu: z.string(),
  /** GPUs in all (replicas × tensor-parallel size); null when infeasible. */
  gpus: z.int().positive().nullable(),
  feasible: z.boolean(),
  /** Why this GPU type cannot serve the traffic (null when it can). */
  reason: z.string().nullable(),
  replicas: z.int().positive().nullable(),
  tensor_parallel_size: z.int().positive().nullable(),
  /** The knobs each replica runs with (vLLM's defaults where not named). */
  config: ServerConfig.nullable(),
  vllm_command: z.string().nullable(),
  /**
   * Predicted at the target traffic (each replica at its share; the heaviest share's). `measured`: × the
   * history's p99 ratio, and for a server slower than simulated at an offered rate, the simulator's at
   * rate ÷ speed (the load its slower decoding carries, as its headroom was judged).
   */
  p99_ttft_ms: z.number().nullable(),
  p99_itl_ms: z.number().nullable(),
  /** The highest rate the whole deployment sustains within the SLOs (headroom), req/s; users for a closed loop. */
  max_rate_rps: z.number().nullable(),
  max_users: z.int().nullable(),
  /**
   * The headroom search reached its cap with every probe passing (16× a burst's rate doubled, or 2,048
   * users a replica): max_rate_rps / max_users is a lower bound, printed "≥".
   */
  headroom_lower_bound: z.boolean(),
  /**
   * Output tokens a second of the whole deployment at the target traffic, over `figures_window`; with
   * avg_power_w and energy_per_output_token_j from the same window, so power = J/token × tok/s. An
   * offered rate emits what it asks for whatever the server's speed; `measured` closed-loop users send
   * as fast as the corrected server answers them (each request TTFT × the p99 ratio, then the decode at
   * the measured speed), so their tok/s follows it.
   */
  output_throughput_tok_s: z.number().nullable(),
  /** All the deployment's GPUs together, W, over `figures_window`. */
  avg_power_w: z.number().nullable(),
  usd_per_hour: z.number().nullable(),
  /** At output_throughput_tok_s. */
  usd_per_million_output_tokens: z.number().nullable(),
  /** Over `figures_window` (energy ÷ output tokens generated in it). */
  energy_per_output_token_j: z.number().nullable(),
  /** `estimated`: the simulator; `measured`: corrected by runs of this GPU and model in the history. */
  source: z.enum(['estimated', 'measured']),
  /** ±2σ relative uncertainty of the throughput-derived figures (the simulator's measured error, or the history's spread). */
  uncertainty_pct: z.number().nonnegative().nullable(),
  price_source: z.string().nullable(),
  /**
   * The one stretch of a replica's simulated run at its share of the traffic that the throughput, power
   * and J/token are all taken over: `steady-state` (ML.ENERGY's rule: from when as many requests as the
   * replica runs at once have their first token to when all but that many and one have finished), `load`
   * (first request sent to last token, when the run had no steady state), or `run` (no power model: the
   * throughput over the whole run, no energy). Users that do not split evenly over the replicas are
   * two runs (⌈N/R⌉ and ⌊N/R⌋ users), whose figures are summed: the window is the heavier run's.
   * null when infeasible.
   */
  figures_window: z.strictObject({ rule: z.enum(['steady-state', 'load', 'run']), duration_s: z.number().nonnegative() }).nullable(),
});
export type PlanDeployment = z.infer<typeof PlanDeployment>;

export const PlanAnswer = z.strictObject({
  model: z.string(),
  traffic: PlanTraffic,
  slo: Slo,
  objective: PlanObjective,
  /** How the ranking was made, in one sentence. */
  rule: z.string(),
  /** The vLLM release the simulator imitated (null: a current one). */
  vllm_version: z.string().nullable(),
  /**
   * Whether some GPU type serves the traffic within the SLOs. false is an answer, not an error: every
   * deployment is infeasible and its `reason` says why (each tensor-parallel size's), and the CLI exits 1.
   */
  feasible: z.boolean(),
  deployments: z.array(PlanDeployment),
});
export type PlanAnswer = z.infer<typeof PlanAnswer>;

export interface PlanQuestion {
  readonly model: string;
  readonly workload: Workload;
  readonly traffic: PlanTraffic;
  readonly slo: Slo;
  /** Catalog GPU ids. */
  readonly gpus: readonly string[];
  readonly maxGpus: number;
  readonly objective: PlanObjective;
  readonly seed: number;
  /** The vLLM release the deployments will run (domain/vllm-release.ts; undefined: a current one). */
  readonly vllmVersion?: string | undefined;
}
