import { z } from 'zod';
import type { BenchmarkResult} from '../domain/index.js';
import { HardwareRef, ServerConfig, Slo, Workload } from '../domain/index.js';
import type { ErrorCode } from '../errors.js';

/**
 * How one configuration gets measured. A target takes a trial (config + workload + hardware) and
 * returns either a measured BenchmarkResult or a failure; failing to start is an outcome the
 * feasibility model learns from, not an exception. Inputs and outputs are plain data so a trial can
 * cross into a piscina worker thread.
 */
export const TargetKind = z.enum(['sim', 'vllm', 'endpoint', 'command', 'slurm']);
export type TargetKind = z.infer<typeof TargetKind>;

/** The trial file of the command-target protocol (README "Command-target protocol"). */
export const TrialInput = z.strictObject({
  trial_id: z.int().nonnegative(),
  /** The trial's number within its study (what progress and reports show). */
  trial_number: z.int().nonnegative().optional(),
  study: z.string(),
  seed: z.int().nonnegative(),
  config: ServerConfig,
  workload: Workload,
  hardware: HardwareRef,
  model: z.string(),
  slo: Slo,
});
export type TrialInput = z.infer<typeof TrialInput>;

export type TrialOutcome =
  | {
      readonly status: 'ok';
      readonly result: BenchmarkResult;
      readonly durationMs: number;
      /** Extra facts about how it was measured (e.g. the max-rate search), kept as trial attributes. */
      readonly attrs?: Record<string, unknown>;
    }
  | {
      readonly status: 'failed';
      /**
       * Whether the server got as far as starting (false: a launch failure, which the feasibility
       * model learns from; null: unknown or not the configuration's doing, e.g. a node that failed).
       */
      readonly started: boolean | null;
      readonly code: ErrorCode;
      readonly reason: string;
      readonly durationMs: number;
    };

export interface Target {
  readonly kind: TargetKind;
  runTrial(input: TrialInput, signal?: AbortSignal): Promise<TrialOutcome>;
}
