import { z } from 'zod';

/**
 * A target as plain data, so it can be named in a study, in the service's config and cross into a
 * worker thread. Launch commands come only from here (CLI flags or the service's own config), never
 * from a request body.
 */
export const TargetSpec = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('sim') }),
  z.strictObject({
    kind: z.literal('vllm'),
    executable: z.string().min(1).default('vllm'),
    /** Slot k of K parallel trials serves on base_port + k (loopback only). */
    base_port: z.int().min(1024).max(65000).default(18000),
    startup_timeout_ms: z.int().positive().default(900_000),
    /** Where the servers' pid files live, so a resumed study can stop servers a crash left behind. */
    state_dir: z.string().optional(),
    env: z.record(z.string(), z.string()).default({}),
  }),
  z.strictObject({ kind: z.literal('endpoint'), url: z.string().url() }),
  z.strictObject({
    kind: z.literal('command'),
    command: z.string().min(1),
    timeout_ms: z.int().positive().default(3_600_000),
    env: z.record(z.string(), z.string()).default({}),
  }),
]);
export type TargetSpec = z.infer<typeof TargetSpec>;
export type TargetSpecInput = z.input<typeof TargetSpec>;
