import { resolveProfile } from './profiles.js';
import type { Catalog } from '../catalog/index.js';
import type { BenchmarkResult, HardwareRef, ServerConfig, Slo, Workload } from '../domain/index.js';
import { simulate } from '../sim/index.js';
import type { ServerFailure } from '../physics/failure.js';
import { runtimeOomRunProbability } from '../physics/runtime-oom.js';
import { startupCheck } from '../physics/startup.js';
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

/** One simulated run of a configuration: its result, or why the server did not start or died. */
export type PriorRun = { readonly ok: true; readonly result: BenchmarkResult } | { readonly ok: false; readonly failure: ServerFailure };

/** How likely a configuration is to die of a run-time CUDA OOM (physics/runtime-oom.ts), with the headroom behind it. */
export interface RuntimeOomRisk {
  /** Probability that a run of RUNTIME_OOM_REQUESTS_PER_RUN requests crashes. */
  readonly perRun: number;
  readonly headroomGib: number;
  readonly gpuMemoryUtilization: number;
}

export interface PriorSimulator {
  /** The run's result; null when the simulated server failed (`run` says why). */
  readonly simulate: (config: ServerConfig) => BenchmarkResult | null;
  readonly run: (config: ServerConfig) => PriorRun;
  /** The configuration's chance of a run-time OOM; null when it does not start. */
  readonly runtimeOomRisk: (config: ServerConfig) => RuntimeOomRisk | null;
  /** Which profile priced it, in words (answers say so). */
  readonly profileSource: string;
}

export function priorSimulator(store: Store | null, catalog: Catalog, d: PriorDeployment): PriorSimulator {
  const { profile, source } = resolveProfile(store, catalog, catalog.gpu(d.hardware.gpu), 'auto', d.vllmVersion);
  const workload = { ...d.workload, num_prompts: Math.min(d.workload.num_prompts, PRIOR_MAX_PROMPTS) };
  const run = (config: ServerConfig): PriorRun => {
    const out = simulate({ config, hardware: d.hardware, model: d.model, workload, seed: 1, slo: d.slo, catalog, profile });
    return out.ok ? { ok: true, result: out.result } : { ok: false, failure: out.failure };
  };
  return {
    profileSource: source,
    run,
    simulate: (config) => {
      const out = run(config);
      return out.ok ? out.result : null;
    },
    runtimeOomRisk: (config) => {
      const start = startupCheck(config, { hardware: catalog.gpu(d.hardware.gpu), gpuCount: d.hardware.count, model: catalog.model(d.model) });
      if (!start.ok) return null;
      return { perRun: runtimeOomRunProbability(start.memory), headroomGib: start.memory.headroomGib, gpuMemoryUtilization: start.resolved.gpu_memory_utilization };
    },
  };
}

/**
 * `sim` with its runs kept in `cache` under `prefix` + the configuration, so `run` and `simulate` share
 * them; past `maxKept` entries the oldest goes (a Map iterates in insertion order).
 */
export function cachedSimulator(sim: PriorSimulator, cache: Map<string, PriorRun>, prefix = '', maxKept = Number.POSITIVE_INFINITY): PriorSimulator {
  const run = (config: ServerConfig): PriorRun => {
    const key = `${prefix}${JSON.stringify(config)}`;
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const out = sim.run(config);
    cache.set(key, out);
    if (cache.size > maxKept) cache.delete(cache.keys().next().value ?? '');
    return out;
  };
  return {
    ...sim,
    run,
    simulate: (config) => {
      const out = run(config);
      return out.ok ? out.result : null;
    },
  };
}
