import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from '../catalog/index.js';
import { LmBenchError } from '../errors.js';
import { TargetSpec } from '../targets/spec.js';
import { loadYamlFile } from '../util/yaml.js';

/**
 * The service's own configuration (`lm-bench serve --config service.yaml`). Target profiles live
 * here and only here: a request names a profile, never a command, an executable or a URL.
 */
export const ServiceConfig = z.strictObject({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.int().min(0).max(65535).default(8080),
  /** SQLite file; default `LMB_DB` or `.lm-bench/lm-bench.db` under the working directory. */
  db: z.string().min(1).optional(),
  /** A file holding the bearer token (first line); `LMB_API_TOKEN` wins when both are set. */
  token_file: z.string().min(1).optional(),
  space: z.string().min(1).optional(),
  /**
   * Directories a request's `model` may name a config.json in, by absolute path (links followed). None
   * by default: a request names catalog models and ORG/NAME repo ids (the service's Hugging Face cache,
   * the hub), and no path of the service's disk is read or probed for it.
   */
  model_dirs: z.array(z.string().min(1)).max(64).default([]),
  /** Named target profiles studies may run against, e.g. `{ sim: { kind: sim } }`. */
  targets: z.record(z.string().regex(/^[\w.-]+$/), TargetSpec).default({ sim: { kind: 'sim' } }),
  body_limit_bytes: z.int().positive().default(8 * 1024 * 1024),
  rate_limit: z
    .strictObject({ max: z.int().positive().default(600), window_ms: z.int().positive().default(60_000) })
    .default({ max: 600, window_ms: 60_000 }),
  /** How long SIGTERM waits for running trials before leaving them to resume. */
  shutdown_grace_ms: z.int().nonnegative().default(30_000),
  limits: z
    .strictObject({
      budget_trials: z.int().positive().default(500),
      parallel: z.int().positive().default(8),
      recommend_candidates: z.int().positive().default(200_000),
      /** Studies whose tuning loops run at once; more wait their turn (`queued`), first come first served. */
      running_studies: z.int().positive().max(256).default(4),
    })
    .default({ budget_trials: 500, parallel: 8, recommend_candidates: 200_000, running_studies: 4 }),
  /** Candidates scored per recommendation (the CLI's default is 20,000). */
  recommend_candidates: z.int().min(100).default(20_000),
  /** Recommendation worker threads (answers are computed off the request thread). */
  recommend_threads: z.int().min(1).max(16).default(1),
});
export type ServiceConfig = z.infer<typeof ServiceConfig>;
export type ServiceConfigInput = z.input<typeof ServiceConfig>;

export const DEFAULT_SPACE_PATH = join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml');

/** Reads a YAML config; relative paths inside it are taken relative to the file. */
export function loadServiceConfig(file: string): ServiceConfig {
  const cfg = loadYamlFile(file, ServiceConfig);
  const base = dirname(resolve(file));
  const rel = (p: string | undefined): string | undefined => (p === undefined || isAbsolute(p) ? p : join(base, p));
  const db = rel(cfg.db);
  const tokenFile = rel(cfg.token_file);
  const space = rel(cfg.space);
  return { ...cfg, model_dirs: cfg.model_dirs.map((d) => rel(d) ?? d), ...(db === undefined ? {} : { db }), ...(tokenFile === undefined ? {} : { token_file: tokenFile }), ...(space === undefined ? {} : { space }) };
}

/** The bearer token: `LMB_API_TOKEN`, else the first line of `token_file`, else null (writes refused). */
export function resolveToken(cfg: Pick<ServiceConfig, 'token_file'>, env: Readonly<Record<string, string | undefined>>): string | null {
  const fromEnv = env['LMB_API_TOKEN']?.trim();
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  if (cfg.token_file === undefined) return null;
  let text: string;
  try {
    text = readFileSync(cfg.token_file, 'utf8');
  } catch (err) {
    throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `token_file ${cfg.token_file} cannot be read`, { cause: err, details: { field: 'token_file' } });
  }
  const token = text.split('\n')[0]?.trim() ?? '';
  if (token.length < 16) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `token_file ${cfg.token_file}: the token must be at least 16 characters`, { details: { field: 'token_file' } });
  return token;
}
