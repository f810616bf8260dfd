import { z } from 'zod';

/**
 * Why a configuration did not start. The rule ids are the closed-form rules of docs/references/vllm-engine.md#static-validation-rules:
 * C1–C11 and the MoE/checkpoint rules C17–C20 are checked before "loading" (validation), C12–C14
 * after the memory profile (memory). C15 is unused; C16 is the search space's workload rule. C20 is a
 * quantization method the GPU's compute capability is below (validate.ts `QUANT_MIN_CAPABILITY`).
 * Messages follow vLLM's own wording (the vLLM sources named in docs/references/vllm-engine.md#static-validation-rules) so a log reader recognises them.
 */
export const STARTUP_RULES = ['C1', 'C2', 'C3', 'C4', 'C5', 'C6', 'C7', 'C8', 'C9', 'C10', 'C11', 'C12', 'C13', 'C14', 'C17', 'C18', 'C19', 'C20'] as const;
export const StartupRule = z.enum(STARTUP_RULES);
export type StartupRule = z.infer<typeof StartupRule>;

export const StartupFailure = z.strictObject({
  rule: StartupRule,
  message: z.string(),
  phase: z.enum(['validation', 'memory']),
});
export type StartupFailure = z.infer<typeof StartupFailure>;

/** A server that started and then died under load (R1: run-time CUDA OOM, `runtime-oom.ts`). */
export const RuntimeFailure = z.strictObject({
  rule: z.literal('R1'),
  message: z.string(),
  phase: z.literal('runtime'),
  /** Virtual seconds into the load run. */
  atS: z.number(),
  /** Requests admitted before the crash. */
  atRequest: z.int(),
});
export type RuntimeFailure = z.infer<typeof RuntimeFailure>;

export type ServerFailure = StartupFailure | RuntimeFailure;
