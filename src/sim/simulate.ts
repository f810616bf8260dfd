import type { BenchmarkResult, HardwareRef, ModelSpec, RequestRecord, ResolvedServerConfig, ServerConfig, Slo, Workload } from '../domain/index.js';
import { defaultCatalog, type Catalog } from '../catalog/index.js';
import { createRng } from '../util/rng.js';
import { arrivalTimes, concurrencyCap, sampleRequests } from '../workload/sample.js';
import { runDes } from './engine.js';
import type { StartupFailure } from '../physics/failure.js';
import type { MemoryBreakdown } from '../physics/memory.js';
import { DEFAULT_NOISE, type NoiseModel } from './scheduler.js';
import { startupCheck } from '../physics/startup.js';
import { makeStepModel } from '../physics/step-time.js';
import { buildRecords, buildResult } from './result.js';

export interface SimulateInput {
  readonly config: ServerConfig;
  readonly hardware: HardwareRef;
  readonly model: string | ModelSpec;
  readonly workload: Workload;
  readonly seed: number;
  readonly slo?: Slo | undefined;
  readonly catalog?: Catalog | undefined;
  /** Step-time noise (§13.3); defaults to σ 0.03 and a 5–20 ms host stall every ~2,000 steps. */
  readonly noise?: NoiseModel | undefined;
  /** Wall-clock origin written into the result (`date`, `lmb.start_epoch_ms`); 0 keeps the run pure. */
  readonly startEpochMs?: number | undefined;
}

export type SimulateOutput =
  | {
      readonly ok: true;
      readonly result: BenchmarkResult;
      readonly records: RequestRecord[];
      readonly resolved: ResolvedServerConfig;
      readonly memory: MemoryBreakdown;
    }
  | { readonly ok: false; readonly failure: StartupFailure; readonly resolved: ResolvedServerConfig; readonly startupTimeS: number };

/**
 * One simulated `vllm serve` + `vllm bench serve` run in virtual time: start-up checks, then the
 * workload through the DES, then vLLM's metrics. Pure: same input, same output; no clock, no I/O
 * (the catalog is read once unless one is passed in).
 */
export function simulate(input: SimulateInput): SimulateOutput {
  const catalog = input.catalog ?? defaultCatalog();
  const hw = catalog.gpu(input.hardware.gpu);
  const model = typeof input.model === 'string' ? catalog.model(input.model) : input.model;
  const start = startupCheck(input.config, { hardware: hw, gpuCount: input.hardware.count, model });
  if (!start.ok) return { ok: false, failure: start.failure, resolved: start.resolved, startupTimeS: start.startupTimeS };
  const { resolved, memory } = start;
  const rng = createRng(input.seed);
  const specs = sampleRequests(input.workload, rng.fork('requests'));
  const arrivals = arrivalTimes(input.workload.arrival, specs.length, rng.fork('arrivals'));
  const des = runDes({
    resolved,
    numBlocks: memory.numBlocks,
    stepModel: makeStepModel(resolved, hw, model),
    specs,
    arrivals,
    cap: concurrencyCap(input.workload.arrival) ?? Number.POSITIVE_INFINITY,
    noise: input.noise ?? DEFAULT_NOISE,
    rng: rng.fork('engine'),
  });
  const records = buildRecords(des);
  const slo = input.slo ?? input.workload.slo;
  const result = buildResult(records, des, {
    resolved,
    hardware: { gpu: hw.id, count: input.hardware.count },
    model,
    workload: input.workload,
    slo,
    memory,
    startupTimeS: start.startupTimeS,
    startEpochMs: input.startEpochMs ?? 0,
  });
  return { ok: true, result, records, resolved, memory };
}
