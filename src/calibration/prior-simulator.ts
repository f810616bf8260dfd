import { resolveProfile } from './profiles.js';
import type { Catalog } from '../catalog/index.js';
import type { BenchmarkResult, HardwareRef, ServerConfig, Slo, Workload } from '../domain/index.js';
import { simulate } from '../sim/index.js';
import type { Store } from '../store/store.js';

/**
 * The simulator behind the prior: which profile prices it (a `sim calibrate` profile stored for this
 * GPU when there is one, so the prior sharpens as real runs come in; else the default), and one run
 * of a configuration capped to a few hundred requests (enough for the tail the SLOs read, ~0.1 s each).
 */
export const PRIOR_MAX_PROMPTS = 400;

export interface PriorDeployment {
  readonly hardware: HardwareRef;
  readonly model: string;
  readonly workload: Workload;
  readonly slo: Slo;
  /** The vLLM release a sim target imitates (undefined: a current one, and any real server's). */
  readonly vllmVersion?: string | undefined;
}

export interface PriorSimulator {
  readonly simulate: (config: ServerConfig) => BenchmarkResult | null;
  /** Which profile priced it, in words (answers say so). */
  readonly profileSource: string;
}

export function priorSimulator(store: Store | null, catalog: Catalog, d: PriorDeployment): PriorSimulator {
  const { profile, source } = resolveProfile(store, catalog, catalog.gpu(d.hardware.gpu), 'auto', d.vllmVersion);
  const workload = { ...d.workload, num_prompts: Math.min(d.workload.num_prompts, PRIOR_MAX_PROMPTS) };
  return {
    profileSource: source,
    simulate: (config) => {
      const out = simulate({ config, hardware: d.hardware, model: d.model, workload, seed: 1, slo: d.slo, catalog, profile });
      return out.ok ? out.result : null;
    },
  };
}
