import { z } from 'zod';
import { BenchmarkResult } from '../../domain/index.js';
import { ERROR_CATALOG, type ErrorCode } from '../../errors.js';
import { TrialInput } from '../types.js';

/**
 * The two files a Slurm trial job exchanges with the controller over the shared filesystem: the
 * trial it is given (trial.json) and the outcome it leaves (result.json). Both are validated when
 * read, on either side: a half-written or foreign file is an error naming the file, never a result.
 */
export const JobEngine = z.discriminatedUnion('kind', [
  /** The embedded simulator in virtual time, inside the job: the same numbers as `--target sim`. */
  z.strictObject({ kind: z.literal('sim') }),
  z.strictObject({
    kind: z.literal('vllm'),
    /** argv that starts vLLM, before `serve MODEL …`. */
    command: z.array(z.string().min(1)).min(1),
    startup_timeout_ms: z.int().positive(),
  }),
]);
export type JobEngine = z.infer<typeof JobEngine>;

export const JobTrialFile = z.strictObject({
  trial: TrialInput,
  engine: JobEngine,
});
export type JobTrialFile = z.infer<typeof JobTrialFile>;

const errorCode = z.string().refine((c): c is ErrorCode => c in ERROR_CATALOG, 'a code of the error catalog');

export const JobResultFile = z.discriminatedUnion('status', [
  z.strictObject({
    status: z.literal('ok'),
    result: BenchmarkResult,
    duration_ms: z.number().nonnegative(),
    /** When trial-run began and ended on the node (epoch ms), for the per-trial overhead. */
    began_at_ms: z.number(),
    ended_at_ms: z.number(),
    attrs: z.record(z.string(), z.unknown()).optional(),
  }),
  z.strictObject({
    status: z.literal('failed'),
    code: errorCode,
    reason: z.string(),
    started: z.boolean().nullable(),
    duration_ms: z.number().nonnegative(),
    began_at_ms: z.number(),
    ended_at_ms: z.number(),
  }),
]);
export type JobResultFile = z.infer<typeof JobResultFile>;
