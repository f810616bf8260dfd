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
 * of a configuration capped to a few hundred requests (enough for the tail the SLOs read, ~0.1 s each),
 * longer where that cannot tell whether the server keeps up with an open-loop load.
 */
export const PRIOR_MAX_PROMPTS = 400;

/**
 * A run too short to tell whether the server keeps up (`undecided`, metrics/saturation.ts) is run again
 * with twice the requests, up to this many. Qwen3-14B `code` on one H100 at 1.7–2× a burst's throughput
 * stays undecided at 400–1,600 requests and is saturated at 3,200 in every seed tried (sustained
 * 20–21 req/s of 26–31 offered); such a run costs ~0.1–0.3 s. The verdict is the load's, not the run
 * length's, so the simulated search and the answers should not take "too short to tell" for "keeps up".
 */
export const PRIOR_DECIDE_MAX_PROMPTS = 3200;

/**
 * The same workload with twice the requests, when `result` could not tell whether the server keeps up
 * and a longer run can: a steady open-loop arrival (rate stages would run into their next stage, a
 * trace's data has no more requests), within PRIOR_DECIDE_MAX_PROMPTS; else null.
 */
export function longerToDecide(workload: Workload, result: BenchmarkResult): Workload | null {
  if (result.saturation?.undecided !== true || result.saturation.saturated || workload.trace?.data !== undefined) return null;
  const a = workload.arrival;
  switch (a.kind) {
    case 'closed':
    case 'burst':
      return null;
    case 'poisson':
      if (a.stages !== undefined) return null;
      break;
    case 'gamma':
    case 'constant':
      break;
  }
  const more = workload.num_prompts * 2;
  return more > PRIOR_DECIDE_MAX_PROMPTS ? null : { ...workload, num_prompts: more };
}

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
    for (let w: Workload | null = workload; ; ) {
      // Only the result is read: no token's time is kept (the same figures, test/sim/lean-metrics.test.ts).
      const out = simulate({ config, hardware: d.hardware, model: d.model, workload: w, seed: 1, slo: d.slo, catalog, profile, keepRecords: false });
      if (!out.ok) return { ok: false, failure: out.failure };
      w = longerToDecide(w, out.result);
      if (w === null) return { ok: true, result: out.result };
    }
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
