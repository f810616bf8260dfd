import { z } from 'zod';
import type { BenchmarkResult} from '../domain/index.js';
import { Hardware, HardwareRef, ModelSpec, ServerConfig, Slo, Workload } from '../domain/index.js';
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
  /** The GPU's datasheet when it is not a catalog GPU (the study's `hardware_spec`), for the same reason as `model_spec`. */
  hardware_spec: Hardware.optional(),
  model: z.string(),
  /**
   * The model's spec when it is not a catalog row (derived from a config.json, the study's
   * `model_spec`): a worker thread, a Slurm job's node or a harness has no other way to know it.
   */
  model_spec: ModelSpec.optional(),
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

/** Runs trials on a target, at most `parallel` at once (targets/executor.ts, targets/slurm). */
export interface Executor {
  readonly parallel: number;
  /**
   * True when trials wait in a queue outside lm-bench (Slurm): the loop then proposes as soon as a
   * slot frees instead of in rounds, since a round would wait for its slowest queued job.
   */
  readonly asynchronous?: boolean;
  run(input: TrialInput, hooks?: RunHooks): Promise<TrialOutcome>;
  /**
   * Follows a trial a previous controller started (its stored handle), or null when there is
   * nothing to follow (not this executor's handle, never submitted, cancelled by lm-bench).
   */
  reattach?(input: TrialInput, handle: unknown, hooks?: RunHooks): Promise<{ readonly outcome: Promise<TrialOutcome> } | null>;
  /** Checks that the target can take this study's trials at all, before the study starts. */
  preflight?(input: TrialInput): Promise<void>;
  /**
   * Stops what a killed controller of the study left running on this machine (a vLLM server, a
   * harness), before its trials run again. Called once the loop holds the study, never before: a
   * second controller that is refused must not stop the first one's trials.
   */
  reapLeftovers?(): void;
  /** Trials running right now. */
  readonly running: number;
  close(): Promise<void>;
}

/**
 * What a trial's run reports back while it runs: a handle to store with the trial before anything
 * waits on it (a Slurm job id), its queue/run phase for progress, and the study's stop signal.
 */
export interface RunHooks {
  readonly onHandle?: (handle: Record<string, unknown>) => void;
  readonly onPhase?: (phase: TrialPhase) => void;
  readonly signal?: AbortSignal;
}
export type TrialPhase = { readonly phase: 'queued'; readonly detail: string } | { readonly phase: 'running' };

/**
 * How a stop treats trials that run outside lm-bench (the abort's reason): `finish` lets them end
 * (POST /v1/studies/:id/stop), `cancel` cancels them (Ctrl-C, SIGTERM, DELETE), `detach` leaves
 * them running for a later controller to reattach (the service shutting down).
 */
export type StopMode = 'finish' | 'cancel' | 'detach';
export function stopModeOf(signal: AbortSignal | undefined): StopMode {
  const r: unknown = signal?.reason;
  return r === 'finish' || r === 'detach' ? r : 'cancel';
}
