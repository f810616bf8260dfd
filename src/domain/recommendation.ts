import { z } from 'zod';
import { Saturation } from './benchmark-result.js';
import { Diagnosis } from './diagnosis.js';
import { Cost } from './energy.js';
import { ServerConfig } from './server-config.js';
import { Slo, SLO_KEYS } from './slo.js';

/**
 * The recommendation as the public API states it (issue 27 §1): `lm-bench recommend --json`,
 * `POST /v1/recommendations`, the report and the plan read these shapes, and the TypeScript types are
 * inferred from them, so the one definition is what is sent, what the OpenAPI document describes and
 * what the schema tests parse. Keys are snake_case, as everywhere in the JSON. Here in `domain`, not
 * in `http`, so `optimize` and `advise`, which build the answer, can import it.
 */

/**
 * What the surrogate predicts (surrogate/targets.ts). Every target is positive and spans orders of
 * magnitude across GPUs, models and workloads, so each is learned on log scale: errors become relative
 * (what MAPE measures) and ensembles' spread reads as a ratio.
 */
export const TARGET_NAMES = [
  'output_throughput',
  'output_throughput_per_gpu',
  'ttft_p50_ms',
  'ttft_p99_ms',
  'tpot_p50_ms',
  'tpot_p99_ms',
  'itl_p50_ms',
  'itl_p99_ms',
  'e2el_p99_ms',
  'kv_cache_peak_gib',
  'gpu_memory_reserved_gib',
  // Joules of all the deployment's GPUs per output token: the simulator's power model, or a measured
  // run's (DCGM, nvidia-smi, an ingested file); a run without power simply lacks it.
  'energy_per_output_token_j',
] as const;
export const TargetName = z.enum(TARGET_NAMES);

/** A predicted figure: mean and ±2σ (log scale, σ widened by the surrogate's validated interval scale). */
export const Interval = z.object({ mean: z.number(), low: z.number(), high: z.number() });
export type Interval = z.infer<typeof Interval>;

export const RecommendedConfig = z.object({
  config: ServerConfig,
  /** Per surrogate target (`output_throughput_per_gpu`, `ttft_p99_ms`, …); a target the model lacks is absent. */
  predicted: z.partialRecord(TargetName, Interval),
  p_start: z.number(),
  /** P(keeps up with the load and meets every SLO), for a configuration that starts. */
  p_meets_slo: z.number(),
  /** `knob=value` of the knobs whose values change the model's numerics (e.g. `quantization=fp8`); empty when none do. */
  numerics_changes: z.array(z.string()),
  /** What limits this configuration on the workload, from a simulated run of it; absent when no simulator was at hand. */
  diagnosis: Diagnosis.nullable().optional(),
  /** Whether that simulated run kept up with the arrivals (a saturated one cannot sustain the load); null for a closed loop. */
  saturation: Saturation.nullable().optional(),
  /**
   * Why the simulator expects this configuration to fail on the workload (it does not start, its run
   * dies, a run-time OOM is likely), in words; empty when it expects none. Given for the pick and the
   * precision-keeping alternative; absent elsewhere and when no simulator was at hand.
   */
  doubts: z.array(z.string()).optional(),
});
export type RecommendedConfig = z.infer<typeof RecommendedConfig>;

export const ParetoMember = RecommendedConfig.extend({
  recommended: z.boolean(),
  /** Why this member is not the recommendation although it beats it on the predicted means; else null. */
  note: z.string().nullable(),
});
export type ParetoMember = z.infer<typeof ParetoMember>;

/** The recommendation core (optimize/recommend.ts, advise/simulated-answer.ts) before it is explained and priced. */
export const Recommendation = z.object({
  /** The rule that picked `best`, in words (printed with it). */
  rule: z.string(),
  best: RecommendedConfig.nullable(),
  /** The best configuration under the same rule that keeps the checkpoint's numerics (null: none qualifies, or `best` already does). */
  precision_keeping: RecommendedConfig.nullable(),
  pareto: z.array(ParetoMember),
  /** `vllm serve` argv of the pick (after `vllm`). */
  vllm_args: z.array(z.string()).nullable(),
  /** `vllm serve --config` YAML of the pick. */
  vllm_config_yaml: z.string().nullable(),
  trust: z.object({
    level: z.enum(['ok', 'thin']),
    reasons: z.array(z.string()),
    /** Configurations to measure next, when the history is thin or nothing qualifies. */
    run_next: z.array(ServerConfig),
  }),
  candidates_scored: z.int(),
});
export type Recommendation = z.infer<typeof Recommendation>;

const KnobValue = z.union([z.number(), z.boolean(), z.string()]);
const KnobValues = z.record(z.string(), KnobValue);
const FigureSource = z.enum(['measured', 'predicted', 'simulated']);
const PickSide = z.object({ changed: KnobValues, figure: z.number().nullable(), meets_slo: z.boolean() });

/** The pick with every knob whose change does not matter back at vLLM's default (issue 30). */
export const Simplification = z.object({
  figure: z.string(),
  tolerance_rel: z.number(),
  source: FigureSource,
  before: PickSide,
  after: PickSide,
  reverted: z.array(z.object({ knob: z.string(), pick_value: KnobValue, default_value: KnobValue.nullable(), figure_change_pct: z.number() })),
});

const AttributionStep = z.object({
  knobs: KnobValues,
  figure: z.number().nullable(),
  gain_pct: z.number().nullable(),
  meets_slo: z.boolean().nullable(),
  p99_ttft_ms: z.number().nullable(),
  p99_itl_ms: z.number().nullable(),
  source: FigureSource.nullable(),
});
/** From vLLM's defaults to the pick, one knob a step, each with its gain. */
export const Attribution = z.object({ figure: z.string(), defaults: AttributionStep, steps: z.array(AttributionStep) });

/** For a configuration worth measuring: start it, load it. */
export const MeasureCommands = z.object({ config: ServerConfig, vllm_serve: z.string(), lm_bench_run: z.string() });
export type MeasureCommands = z.infer<typeof MeasureCommands>;

const SloMiss = z.object({ slo: z.enum(SLO_KEYS), predicted: z.number(), limit: z.number() });
/** When nothing meets the SLOs: the nearest configurations and the changes that make one meet them. */
export const Nearest = z.object({
  candidates: z.array(z.object({ config: ServerConfig, values: z.partialRecord(TargetName, z.number()), worst_ratio: z.number(), misses: z.array(SloMiss), would_meet: Slo, vllm_command: z.string() })),
  changes: z.array(
    z.object({
      kind: z.enum(['relax_slo', 'add_gpus', 'accept_fp8']),
      description: z.string(),
      slo: Slo,
      gpus: z.int(),
      config: ServerConfig,
      vllm_command: z.string(),
      output_throughput_per_gpu: z.number().nullable(),
      source: z.enum(['predicted', 'simulated']),
    }),
  ),
  /** Simulated configurations that could not sustain the load (no SLO holds for them), and the most any sustained. */
  saturated: z.object({ count: z.int(), of: z.int(), best_sustained_rps: z.number(), offered_rps: z.number() }).nullable().optional(),
});

/** Which saved surrogate answered, and what it was trained on; or that the simulator did (no history). */
export const AnswerSource = z.object({
  kind: z.enum(['surrogate', 'simulator']),
  surrogate_id: z.int().nullable(),
  study: z.string().nullable(),
  validated: z.boolean(),
  trained_at_ms: z.number().nullable(),
  /** For a simulated answer: the profile, how many configurations were simulated, the error assumed per target. */
  simulator: z.object({ profile: z.string(), simulated: z.int(), log_sd: z.record(z.string(), z.number()) }).nullable(),
});
export type AnswerSource = z.infer<typeof AnswerSource>;

/** What `lm-bench recommend --json` prints and `POST /v1/recommendations` answers. */
export const RecommendationAnswer = Recommendation.extend({
  /** The saved surrogate that answered; null when the simulator answered (no runs of this GPU and model). */
  surrogate_id: z.int().nullable(),
  source: AnswerSource,
  slo: Slo,
  keep_precision: z.boolean(),
  history_runs: z.int(),
  vllm_command: z.string().nullable(),
  precision_keeping_command: z.string().nullable(),
  /** For each configuration worth measuring next: start it, load it. */
  measure_next: z.array(MeasureCommands),
  /** Or queue them all in a study, where they run first. */
  enqueue_command: z.string().nullable(),
  simplification: Simplification.nullable(),
  attribution: Attribution.nullable(),
  /** What the pick's flags mean for some requests (a lowered max_model_len refuses longer ones). */
  warnings: z.array(z.string()),
  /** When nothing meets the SLOs: what comes nearest, and the changes that make one feasible (else null). */
  nearest: Nearest.nullable(),
  /** What the pick costs: its GPUs by the hour, and per million output tokens at its predicted throughput (null: no pick, or no price). */
  cost: Cost.nullable().optional(),
});
export type RecommendationAnswer = z.infer<typeof RecommendationAnswer>;
