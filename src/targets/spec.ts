import { z } from 'zod';
import { SimProfile, VllmVersion } from '../domain/index.js';
import { argvCommand } from './argv.js';
import { SlurmConfig } from './slurm/config.js';

/**
 * A target as plain data, so it can be named in a study, in the service's config and cross into a
 * worker thread. Launch commands come only from here (CLI flags or the service's own config), never
 * from a request body.
 */
export const TargetSpec = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('sim'),
    /**
     * Which efficiencies price the simulated GPU: a choice (`auto`, the absent default: the profile
     * `sim calibrate` stored for the GPU, else the catalog's; `default`; `stored`), bound to the
     * profile itself when a study is created, so that a resumed study keeps pricing as it began.
     */
    profile: z.union([z.enum(['auto', 'default', 'stored']), SimProfile]).optional(),
    profile_source: z.string().optional(),
    /** The vLLM release the simulator imitates (absent: a current one; domain/vllm-release.ts). */
    vllm_version: VllmVersion.optional(),
  }),
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
  z.strictObject({
    kind: z.literal('endpoint'),
    /** Any http(s) server (usually another machine); only the load side varies. */
    url: z.string().url(),
    /** The environment variable holding the API key (the key itself is never stored with a study). */
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('OPENAI_API_KEY'),
    /** PEM file of a CA to trust for https. */
    ca_cert: z.string().min(1).optional(),
    insecure: z.boolean().default(false),
  }),
  z.strictObject({
    kind: z.literal('command'),
    /** Split into argv (no shell) when the spec is parsed, so a stray quote is refused here. */
    command: argvCommand,
    timeout_ms: z.int().positive().default(3_600_000),
    env: z.record(z.string(), z.string()).default({}),
    /** Where the running commands' pid files live, so a resumed study can stop harnesses a crash left behind. */
    state_dir: z.string().optional(),
  }),
  /** One batch job per trial on a Slurm cluster (docs/slurm.md); the settings of `--slurm-config`. */
  SlurmConfig.extend({ kind: z.literal('slurm') }),
]);
export type TargetSpec = z.infer<typeof TargetSpec>;
export type TargetSpecInput = z.input<typeof TargetSpec>;
