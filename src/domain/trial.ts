import { z } from 'zod';
import { BenchmarkResult } from './benchmark-result.js';
import { Hardware, HardwareRef } from './hardware.js';
import { ModelSpec } from './model-spec.js';
import { ServerConfig } from './server-config.js';
import { Slo } from './slo.js';
import { Workload } from './workload.js';

/**
 * Trials and studies, after Optuna (`optuna/trial/_state.py`, `optuna/study/study.py`): a trial moves
 * waiting → running → complete | failed | pruned, and a finished trial never changes again.
 */
export const TrialState = z.enum(['waiting', 'running', 'complete', 'failed', 'pruned']);
export type TrialState = z.infer<typeof TrialState>;

export function isFinished(s: TrialState): boolean {
  return s === 'complete' || s === 'failed' || s === 'pruned';
}

/** How a trial's configuration was chosen (`remeasure`: an earlier trial's configuration again, to tell tied ones apart). */
export const TrialOrigin = z.enum(['default', 'space_filling', 'simulated', 'history', 'surrogate', 'random', 'grid', 'enqueued', 'ingested', 'remeasure']);
export type TrialOrigin = z.infer<typeof TrialOrigin>;

export const ObjectiveName = z.enum([
  'output_throughput_per_gpu',
  'output_throughput',
  'goodput_per_gpu',
  'max_rate_under_slo',
  'ttft_p99_ms',
  'itl_p99_ms',
  'tpot_p99_ms',
  'e2el_p99_ms',
  'gpu_memory_reserved_gib',
  'energy_per_output_token_j',
]);
export type ObjectiveName = z.infer<typeof ObjectiveName>;

/**
 * What a study or a recommendation is for, always under the SLOs (issue 25 §4): `goodput`, the most
 * output throughput per GPU; `tokens_per_joule`, the fewest joules per output token; `usd_per_mtok`, the
 * fewest dollars per million output tokens, which within one GPU type (a fixed price per GPU-hour) ranks
 * configurations exactly as goodput per GPU does. Each names a preset of `objectives` (the Pareto axes
 * the sampler works on) and the rule that picks one configuration (optimize/objectives.ts).
 */
export const StudyObjective = z.enum(['goodput', 'tokens_per_joule', 'usd_per_mtok']);
export type StudyObjective = z.infer<typeof StudyObjective>;

export const Objective = z.strictObject({
  name: ObjectiveName,
  direction: z.enum(['maximize', 'minimize']),
});
export type Objective = z.infer<typeof Objective>;

export const Trial = z.strictObject({
  id: z.int().positive(),
  study_id: z.int().positive(),
  /** 0-based order within the study. */
  number: z.int().nonnegative(),
  state: TrialState,
  origin: TrialOrigin,
  config: ServerConfig,
  /** Objective values by objective name; null where the trial produced none. */
  values: z.record(z.string(), z.number().nullable()),
  result: BenchmarkResult.nullable(),
  failure_reason: z.string().nullable(),
  /** Whether the configuration started (false = a launch failure the feasibility model learns from). */
  started: z.boolean().nullable(),
  created_at_ms: z.number(),
  started_at_ms: z.number().nullable(),
  finished_at_ms: z.number().nullable(),
  heartbeat_at_ms: z.number().nullable(),
  attrs: z.record(z.string(), z.unknown()),
});
export type Trial = z.infer<typeof Trial>;

export const StudyState = z.enum(['created', 'running', 'stopped', 'done']);
export type StudyState = z.infer<typeof StudyState>;

export const StudySpec = z.strictObject({
  name: z.string().min(1).max(200),
  space: z.string(),
  hardware: HardwareRef,
  /**
   * The GPU's datasheet when it is not a catalog GPU (a `--gpu` YAML file, a datasheet sent to the
   * service): the study keeps it, so worker threads, Slurm nodes, a resume and the report price the GPU
   * it began with after the file is gone.
   */
  hardware_spec: Hardware.optional(),
  model: z.string(),
  /**
   * The model's spec when it is not a catalog row (derived from a config.json): the study keeps it, so
   * a resumed study prices and runs the model it began with whatever the Hugging Face cache says now.
   */
  model_spec: ModelSpec.optional(),
  /** normalisedConfigHash of the config.json `model_spec` came from; null for a catalog model. */
  model_config_hash: z.string().nullable().optional(),
  workload: Workload,
  slo: Slo,
  objectives: z.array(Objective).min(1),
  target: z.string(),
  seed: z.int().nonnegative(),
  budget_trials: z.int().positive(),
  budget_hours: z.number().positive().nullable(),
  parallel: z.int().positive(),
  /**
   * What the study optimises (absent: `goodput`, or what `objectives` imply); its final pick follows it,
   * and a resumed study keeps it.
   */
  objective: StudyObjective.optional(),
  /** `fixed` (or absent): each trial is one load run of the workload; `max_rate`: a bisection for the highest request rate meeting the SLOs. */
  measure: z.enum(['fixed', 'max_rate']).optional(),
  /** Hold the knobs that change the checkpoint's numerics (fp8 weights, fp8 KV cache) at its own precision. */
  keep_precision: z.boolean().optional(),
});
export type StudySpec = z.infer<typeof StudySpec>;

export const Study = z.strictObject({
  id: z.int().positive(),
  state: StudyState,
  spec: StudySpec,
  created_at_ms: z.number(),
  updated_at_ms: z.number(),
});
export type Study = z.infer<typeof Study>;
