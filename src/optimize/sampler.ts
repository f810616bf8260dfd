import { ALL_KNOB_NAMES, type ServerConfig, type Study, type Trial, type TrialOrigin } from '../domain/index.js';
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

/**
 * A canonical key for a config (knobs in a fixed order), to spot duplicates among proposals and
 * trials. Built by joining values rather than JSON with sorting: it runs on every one of ≥ 100k candidates.
 */
export function configKey(config: ServerConfig): string {
  const c = config as Record<string, number | boolean | string | undefined>;
  let key = '';
  for (const k of KEY_ORDER) {
    const v = c[k];
    key += v === undefined ? '|' : `${v}|`;
  }
  return key;
}
