import type { BenchmarkMetrics, BenchmarkResult, Hardware, HardwareRef, ModelSpec, PowerProfile, RequestRecord, ResolvedServerConfig, ServerConfig, SimProfile, Slo, Workload } from '../domain/index.js';
import { defaultCatalog, type Catalog } from '../catalog/index.js';
import { createRng } from '../util/rng.js';
import { concurrencyCap, sampleRequests, trafficStreams, withPoolBlocks, workloadArrivals } from '../workload/sample.js';
import { stageSpansS } from './saturation.js';
import { runDes, type DesOutput, type DesRequest } from './engine.js';
import { runEnergy, steadyStateSpec, steadyWindow, summarizeDes, type SimEnergy, type SimSummary, type WindowSpec } from './summary.js';
import { WeightedSample } from './weighted.js';
import type { ServerFailure } from '../physics/failure.js';
import { runtimeOomAt, runtimeOomFailure } from '../physics/runtime-oom.js';
import type { MemoryBreakdown } from '../physics/memory.js';
import { DEFAULT_NOISE, type NoiseModel } from './scheduler.js';
import { startupCheck } from '../physics/startup.js';
import { makeStepModel } from '../physics/step-time.js';
import { buildRecords, buildResult, desMetrics, limitText, recordOf, refusedRecords } from './result.js';
import { TokenRate } from './token-rate.js';
import { computeMetrics } from '../metrics/index.js';
import { requestThresholds } from '../domain/index.js';
import { idleGpus, makePowerModel } from '../physics/power.js';
import { defaultPowerProfile } from './power-profile.js';

export interface SimulateInput {
  readonly config: ServerConfig;
  readonly hardware: HardwareRef;
  readonly model: string | ModelSpec;
  readonly workload: Workload;
  readonly seed: number;
  readonly slo?: Slo | undefined;
  readonly catalog?: Catalog | undefined;
  /** Step-time noise (docs/references/vllm-engine.md#step-time-noise); defaults to σ 0.03 and a 5–20 ms host stall every ~2,000 steps. */
  readonly noise?: NoiseModel | undefined;
  /** Wall-clock origin written into the result (`date`, `lmb.start_epoch_ms`); 0 keeps the run pure. */
  readonly startEpochMs?: number | undefined;
  /** The efficiencies to price steps with (default: the catalog's for this GPU and release; `sim calibrate` stores others). */
  readonly profile?: SimProfile | undefined;
  /**
   * The vLLM release imitated (default: a current one). It picks the catalog's profile (domain/vllm-release.ts)
   * and leaves an explicit `profile` alone.
   */
  readonly vllmVersion?: string | undefined;
  /** A summary run's steady-state window (`simulateSummary` only). */
  readonly window?: WindowSpec | undefined;
  /**
   * Draw run-time OOM crashes (physics/runtime-oom.ts; default true). Calibration turns them off:
   * the measured points it reproduces did not crash.
   */
  readonly runtimeFailures?: boolean | undefined;
  /** The GPU power model's parameters (default: data/sim-profile.yaml's `power`); null: no energy figures. */
  readonly power?: PowerProfile | null | undefined;
  /**
   * Return every request's record, every token's time in it, in `records` (default true). False keeps
   * no token time (the result's figures are the same, result.ts `desMetrics`): a run's memory grows
   * with its requests, not its tokens. For `sim run`, whose 1,000,000 prompts would hold billions.
   */
  readonly keepRecords?: boolean | undefined;
  /**
   * Each request's record as soon as it is complete (a refused one at its send, the others at their
   * last token), with its place in the workload; with `keepRecords: false` its token times are dropped
   * once it returns, so only the requests in flight hold theirs (`sim run --requests-out/--records`).
   */
  readonly onRecord?: ((record: RequestRecord, position: number) => void) | undefined;
}

export type SimulateOutput =
  | {
      readonly ok: true;
      readonly result: BenchmarkResult;
      readonly records: RequestRecord[];
      readonly resolved: ResolvedServerConfig;
      readonly memory: MemoryBreakdown;
    }
  | SimulateFailed;

/** A configuration that did not start, or a server that crashed under load (`failure.phase` says which). */
export interface SimulateFailed {
  readonly ok: false;
  readonly failure: ServerFailure;
  readonly resolved: ResolvedServerConfig;
  readonly startupTimeS: number;
}

/**
 * One simulated `vllm serve` + `vllm bench serve` run in virtual time: start-up checks, then the
 * workload through the DES, then vLLM's metrics. Pure: same input, same output; no clock, no I/O
 * (the catalog is read once unless one is passed in).
 */
export function simulate(input: SimulateInput): SimulateOutput {
  const keep = input.keepRecords !== false;
  const onRecord = input.onRecord;
  const itl = keep ? undefined : new WeightedSample();
  const tokenRate = keep ? undefined : new TokenRate();
  const run = runSimulation(input, keep || onRecord !== undefined, itl, {
    tokenRate,
    onRecord: keep ? undefined : onRecord,
  });
  if (!run.ok) return run;
  const { des, resolved, memory, model, hw, startupTimeS } = run;
  const slo = input.slo ?? input.workload.slo;
  const goodput = requestThresholds(slo);
  let records: RequestRecord[] = [];
  let metrics: BenchmarkMetrics;
  if (itl === undefined || tokenRate === undefined) {
    records = buildRecords(des, resolved.max_model_len);
    if (onRecord !== undefined) records.forEach(onRecord);
    metrics = computeMetrics(records, { goodput });
  } else metrics = desMetrics(des, itl, tokenRate, goodput);
  const result = buildResult(metrics, des, refusedRecords(des, resolved.max_model_len), {
    energy: simulateEnergy(des, resolved, input.workload, idleGpus(input.hardware.count, resolved)),
    energyUnavailableReason: run.powered ? 'the run never generated a token' : 'no power model: data/sim-profile.yaml has no `power` block',
    resolved,
    hardware: { gpu: hw.id, count: input.hardware.count },
    model,
    workload: input.workload,
    slo,
    memory,
    startupTimeS,
    startEpochMs: input.startEpochMs ?? 0,
  });
  return { ok: true, result, records, resolved, memory };
}

export type SimulateSummaryOutput =
  | { readonly ok: true; readonly summary: SimSummary; readonly resolved: ResolvedServerConfig; readonly memory: MemoryBreakdown }
  | SimulateFailed;

/**
 * The same run as `simulate`, summarised: every request's TTFT, TPOT and E2EL and the pooled
 * inter-token gaps, without keeping one timestamp per token. The figures equal `simulate`'s (the DES
 * is the same, with the same seed); what is lost is the per-request records. For calibration and
 * `sim predict`, where a point of 640 requests × 8,000 tokens would otherwise hold 5M timestamps.
 */
export function simulateSummary(input: SimulateInput): SimulateSummaryOutput {
  const itl = new WeightedSample();
  const run = runSimulation(input, false, itl);
  if (!run.ok) return run;
  return { ok: true, summary: summarizeDes(run.des, itl, input.window, stageSpansS(input.workload), idleGpus(input.hardware.count, run.resolved)), resolved: run.resolved, memory: run.memory };
}

/**
 * A full run's energy over ML.ENERGY's steady-state window (max_num_seqs × replicas, or the client's
 * cap when lower, as the batch that fills), or over the load window when the run was too short to
 * have one.
 */
function simulateEnergy(des: DesOutput, resolved: ResolvedServerConfig, workload: Workload, idleGpus: number): SimEnergy | null {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  let completed = 0;
  let outputTokens = 0;
  for (const r of des.requests) {
    start = Math.min(start, r.sendS);
    if (r.sim === null || r.sim.numOutput === 0) continue;
    completed++;
    outputTokens += r.sim.numOutput;
    end = Math.max(end, r.sim.lastTokenS);
  }
  const maxRunning = Math.min(resolved.max_num_seqs * resolved.data_parallel_size, concurrencyCap(workload.arrival) ?? Number.POSITIVE_INFINITY);
  return runEnergy(des, steadyWindow(des, steadyStateSpec(completed, maxRunning)), { startS: start, endS: end, outputTokens }, idleGpus);
}

type Prepared =
  | {
      readonly ok: true;
      readonly des: DesOutput;
      readonly resolved: ResolvedServerConfig;
      readonly memory: MemoryBreakdown;
      readonly model: ModelSpec;
      readonly hw: Hardware;
      readonly startupTimeS: number;
      /** Whether steps were priced with a power model. */
      readonly powered: boolean;
    }
  | SimulateFailed;

/** What a run that keeps no records counts as it goes, and where it hands each request's record. */
interface Streamed {
  readonly tokenRate?: TokenRate | undefined;
  readonly onRecord?: ((record: RequestRecord, position: number) => void) | undefined;
}

function runSimulation(input: SimulateInput, recordTokens: boolean, itl?: WeightedSample, streamed: Streamed = {}): Prepared {
  const catalog = input.catalog ?? defaultCatalog();
  const hw = catalog.gpu(input.hardware.gpu);
  const model = typeof input.model === 'string' ? catalog.model(input.model) : input.model;
  const start = startupCheck(input.config, { hardware: hw, gpuCount: input.hardware.count, model, vllmVersion: input.vllmVersion });
  if (!start.ok) return { ok: false, failure: start.failure, resolved: start.resolved, startupTimeS: start.startupTimeS };
  const { resolved, memory } = start;
  const rng = createRng(input.seed);
  // A prompt pool's re-sent prompts and a conversation's turns carry their content as cache blocks
  // of this server's size, so the prefix cache sees what they repeat.
  // The streams the load runner draws the same workload from (workload/sample.ts `trafficStreams`): one
  // seed, the same requests and arrivals in `sim run` and `run`.
  const streams = trafficStreams(input.seed);
  const sampled = sampleRequests(input.workload, streams.requests);
  const w = input.workload;
  const specs = w.prompt_pool === undefined && w.sessions === undefined ? sampled : withPoolBlocks(sampled, resolved.block_size);
  const arrivals = workloadArrivals(input.workload, specs.length, streams.arrivals);
  const profile = input.profile ?? catalog.profileFor(hw, input.vllmVersion);
  const oomRng = rng.fork('runtime-oom');
  const crashAtRequest = input.runtimeFailures === false ? null : runtimeOomAt(memory, specs.length, () => oomRng.next());
  const powerProfile = input.power === undefined ? defaultPowerProfile() : input.power;
  const onRecord = streamed.onRecord;
  const limit = limitText(resolved.max_model_len);
  const des = runDes({
    resolved,
    numBlocks: memory.numBlocks,
    slidingGroups: memory.slidingGroups,
    stepModel: makeStepModel(resolved, hw, model, profile),
    frontend: profile,
    specs,
    arrivals,
    cap: concurrencyCap(input.workload.arrival) ?? Number.POSITIVE_INFINITY,
    noise: input.noise ?? DEFAULT_NOISE,
    rng: rng.fork('engine'),
    recordTokens,
    crashAtRequest,
    power: powerProfile === null ? null : makePowerModel(hw, powerProfile, resolved.tensor_parallel_size),
    ...(itl === undefined ? {} : { itl }),
    ...(streamed.tokenRate === undefined ? {} : { tokenRate: streamed.tokenRate }),
    ...(onRecord === undefined ? {} : { onDone: (req: DesRequest, position: number) => onRecord(recordOf(req, limit), position), releaseTokens: true }),
  });
  if (des.crashedAtS !== null) {
    return { ok: false, failure: runtimeOomFailure(resolved, hw, memory, des.crashedAtS, crashAtRequest ?? 0), resolved, startupTimeS: start.startupTimeS };
  }
  return { ok: true, des, resolved, memory, model, hw, startupTimeS: start.startupTimeS, powered: powerProfile !== null };
}
