import { ALL_KNOB_NAMES, type Hardware, type ModelSpec, type ServerConfig, type Study, type Trial, type TrialOrigin } from '../domain/index.js';
import { resolveConfig } from '../physics/resolve.js';
import type { Rng } from '../util/rng.js';

/**
 * The sampler contract (Optuna's BaseSampler, reduced to what a joint 12-knob space needs): given the
 * study and a snapshot of its trials (finished ones immutable, running and waiting ones pending),
 * propose up to n configurations. Samplers read trials, never the store; randomness comes in `rng`.
 * Pending trials are passed so a sampler does not propose what is already being measured.
 */
export interface SamplerContext {
  readonly study: Study;
  readonly trials: readonly Trial[];
  readonly rng: Rng;
  /** The study's GPU and model, which vLLM's defaults depend on: keys (`configKey`) are resolved on it. */
  readonly deployment?: KeyDeployment;
}

export interface Proposal {
  readonly config: ServerConfig;
  readonly origin: TrialOrigin;
  readonly attrs?: Record<string, unknown>;
}

export interface Sampler {
  readonly name: string;
  propose(ctx: SamplerContext, n: number): Promise<Proposal[]>;
  /** Called after a trial is told (a hook for caches; optional). */
  afterTrial?(trial: Trial): void;
}

const KEY_ORDER: readonly string[] = ALL_KNOB_NAMES;

/** What vLLM's defaults depend on (batch sizes on the GPU, the context length on the model); a FeatureContext is one. */
export interface KeyDeployment {
  readonly hardware: Hardware;
  readonly model: ModelSpec;
}

/**
 * A key for a config (knobs in a fixed order), to spot duplicates among proposals and trials. With the
 * deployment it is canonical: the config as vLLM resolves it there (physics/resolve.ts), so `{}` and a
 * config that spells vLLM's defaults out are one configuration, run once, found in the history either
 * way. Without it knobs are compared as written (two spellings of one default differ): for callers that
 * know no deployment. Keys are never stored, so the two never meet in a file. Built by joining values
 * rather than JSON with sorting: it runs on thousands of candidates.
 */
export function configKey(config: ServerConfig, deployment?: KeyDeployment): string {
  const raw = config as Record<string, number | boolean | string | undefined>;
  const c = deployment === undefined ? raw : (resolveConfig(config, deployment.hardware, deployment.model) as Record<string, number | boolean | string | undefined>);
  let key = '';
  for (const k of KEY_ORDER) {
    // A knob resolution does not fill (none today) is compared as written.
    const v = c[k] ?? raw[k];
    key += v === undefined ? '|' : `${v}|`;
  }
  return key;
}

/** `configKey` bound to a deployment (or as written, without one). */
export const keyOn = (deployment: KeyDeployment | undefined): ((config: ServerConfig) => string) => (config) => configKey(config, deployment);
