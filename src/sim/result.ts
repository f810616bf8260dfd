import type { BenchmarkMetrics, BenchmarkResult, Energy, HardwareRef, ModelSpec, RequestRecord, RequestSlo, ResolvedServerConfig, ServerMetrics, Slo, Workload } from '../domain/index.js';
import { energyOf, energyUnavailable, withoutTraceData, type RESULT_METRICS } from '../domain/index.js';
import { errorSamples, latencyStats, meetsRequestSlo, peakInFlight, percentileSorted, summarize, type Summary } from '../metrics/index.js';
import { concurrencyCap, offeredRate } from '../workload/sample.js';
import type { DesOutput, DesRequest } from './engine.js';
import type { WeightedSample } from './weighted.js';
import type { TokenRate } from './token-rate.js';
import { simEvidence } from './evidence.js';
import { detectSaturation, saturationBlock, stageSpansS } from './saturation.js';
import { diagnose } from '../diagnose/classify.js';
import { GIB, type MemoryBreakdown } from '../physics/memory.js';
import { deploymentGpus } from '../physics/power.js';
import type { SimEnergy } from './summary.js';

/** lm-bench's version as written into results. */
export const SIM_VERSION = '0.1.0';

/** The refusal's wording names `max_model_len` with its value when known. */
export function limitText(maxModelLen: number | undefined): string {
  return maxModelLen === undefined ? 'max_model_len' : `max_model_len (${maxModelLen})`;
}

/** DES outcome → per-request records, as a client would have seen them (`maxModelLen` named in a refusal's message). */
export function buildRecords(des: DesOutput, maxModelLen?: number): RequestRecord[] {
  const limit = limitText(maxModelLen);
  return des.requests.map((r) => recordOf(r, limit));
}

/**
 * One request's record; its token times are those the DES kept (`recordTokens`), so a run that keeps
 * none builds a request's record in `onDone`, before they are dropped (simulate.ts `onRecord`).
 */
export function recordOf(r: DesRequest, limit: string): RequestRecord {
  const sim = r.sim;
  const prompt = r.spec.prefixTokens + r.spec.inputTokens;
  const base = {
    request_id: `cmpl-sim-${r.spec.index}`,
    sched_time_s: r.schedS,
    enqueue_time_s: r.schedS,
    send_time_s: r.sendS,
    prompt_tokens: prompt,
    prompt_tokens_client: null,
    token_source: 'sim' as const,
    phase: 'measure' as const,
    worker_id: 0,
    loop_lag_ms: null,
  };
  if (r.rejected || sim === null) {
    return {
      ...base,
      first_byte_time_s: r.sendS,
      chunk_times_s: [],
      done_time_s: r.sendS,
      output_tokens: 0,
      cached_tokens: null,
      finish_reason: null,
      http_status: 400,
      error_kind: 'http_status',
      error: `This model's maximum context length is exceeded: prompt (${prompt} tokens) + max_tokens (${r.spec.outputTokens}) > ${limit}`,
    };
  }
  const chunks = sim.chunkTimes;
  return {
    ...base,
    first_byte_time_s: chunks[0] ?? null,
    chunk_times_s: chunks,
    done_time_s: chunks[chunks.length - 1] ?? null,
    output_tokens: sim.numOutput,
    cached_tokens: sim.cachedTokens,
    finish_reason: 'length',
    http_status: 200,
    error_kind: null,
    error: null,
  };
}

/** The refused requests' records (no token times: small, whatever the run's length). */
export function refusedRecords(des: DesOutput, maxModelLen?: number): RequestRecord[] {
  const limit = limitText(maxModelLen);
  return des.requests.filter((r) => r.rejected || r.sim === null).map((r) => recordOf(r, limit));
}

/**
 * metrics/benchmark.ts `computeMetrics(buildRecords(des))`, equal to the last bit, without a single
 * token time: first and last token per request, the inter-token gaps pooled as (gap, count) pairs by
 * the replicas (`itl`, one pair per step) and the tokens per second counted as they were emitted
 * (`rate`). A run's memory is then its requests', not its tokens' (100,000 prompts × 500 tokens held
 * ~3.5 GB of token times). test/sim/lean-metrics.test.ts holds the two equal on runs that preempt,
 * refuse, cache prefixes and spread over replicas.
 */
export function desMetrics(des: DesOutput, itl: WeightedSample, rate: TokenRate, goodput: RequestSlo | undefined): BenchmarkMetrics {
  const ttftS: number[] = [];
  const tpotS: number[] = [];
  const e2elS: number[] = [];
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  let totalIn = 0;
  let totalOut = 0;
  let good = 0;
  const sends: number[] = [];
  const lasts: number[] = [];
  for (const r of des.requests) {
    start = Math.min(start, r.sendS);
    const sim = r.sim;
    if (r.rejected || sim === null || sim.numOutput === 0) {
      end = Math.max(end, r.sendS);
      continue;
    }
    const first = sim.firstTokenS;
    const last = sim.lastTokenS;
    end = Math.max(end, last);
    const ttft = first - r.sendS;
    const e2el = last - r.sendS;
    ttftS.push(ttft);
    e2elS.push(e2el);
    if (sim.numOutput > 1) tpotS.push((e2el - ttft) / (sim.numOutput - 1));
    totalIn += r.spec.prefixTokens + r.spec.inputTokens;
    totalOut += sim.numOutput;
    sends.push(r.sendS);
    lasts.push(last);
    if (goodput !== undefined && meetsRequestSlo(r.sendS, first, last, sim.numOutput, goodput)) good++;
  }
  const completed = ttftS.length;
  const duration = des.requests.length === 0 ? 0 : Math.max(0, end - start);
  const per = (n: number): number => (duration > 0 ? n / duration : 0);
  const byMetric: Record<(typeof RESULT_METRICS)[number], Summary> = {
    ttft: summarize(ttftS, 1000),
    tpot: summarize(tpotS, 1000),
    itl: itl.summary(1000),
    e2el: summarize(e2elS, 1000),
  };
  return {
    duration,
    completed,
    failed: des.requests.length - completed,
    total_input_tokens: totalIn,
    total_output_tokens: totalOut,
    request_throughput: per(completed),
    request_goodput: goodput === undefined ? null : per(good),
    output_throughput: per(totalOut),
    total_token_throughput: per(totalIn + totalOut),
    max_output_tokens_per_s: rate.peak(),
    max_concurrent_requests: peakInFlight(sends, lasts),
    ...latencyStats(byMetric),
  };
}

export function serverMetrics(des: DesOutput, memory: MemoryBreakdown): ServerMetrics {
  let peakBlocks = 0;
  let queried = 0;
  let hits = 0;
  let preemptions = 0;
  for (const rep of des.replicas) {
    peakBlocks = Math.max(peakBlocks, rep.kv.peakUsedBlocks);
    queried += rep.kv.queriedTokens;
    hits += rep.kv.hitTokens;
    preemptions += rep.preemptions;
  }
  const caching = des.replicas[0]?.kv.caching ?? false;
  return {
    kv_cache_usage_peak: memory.numBlocks === 0 ? 0 : peakBlocks / memory.numBlocks,
    kv_cache_peak_gib: (peakBlocks * memory.blockBytesPerGpu) / GIB,
    kv_cache_capacity_tokens: memory.kvTokenCapacity,
    // From vLLM 0.21 the graphs are profiled inside the requested share; before, they came on top of it.
    gpu_memory_reserved_gib: memory.requestedGib + (memory.cudagraphInBudget ? 0 : memory.cudagraphGib),
    num_preemptions: preemptions,
    num_requests_running_peak: des.runningPeak,
    num_requests_waiting_peak: des.waitingPeak,
    prefix_cache_hit_rate: !caching ? null : queried === 0 ? 0 : hits / queried,
  };
}

/** vLLM's result file name date format, %Y%m%d-%H%M%S (UTC). */
function vllmDate(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

export interface ResultContext {
  readonly resolved: ResolvedServerConfig;
  readonly hardware: HardwareRef;
  readonly model: ModelSpec;
  readonly workload: Workload;
  readonly slo: Slo | undefined;
  readonly memory: MemoryBreakdown;
  readonly startupTimeS: number;
  readonly startEpochMs: number;
  /** The run's energy (summary.ts `runEnergy`), or null with why. */
  readonly energy?: SimEnergy | null;
  readonly energyUnavailableReason?: string;
}

/** The result's `energy` block: the simulator's figures over their window, or why there are none. */
export function energyBlock(e: SimEnergy | null | undefined, resolved: ResolvedServerConfig, reason = 'no power model'): Energy {
  if (e === null || e === undefined) return energyUnavailable('sim', deploymentGpus(resolved), reason);
  return energyOf('sim', e.gpus, { start_s: e.startS, end_s: e.endS, rule: e.rule }, e.avgPowerW, e.outputTokens);
}

/**
 * The result of a run from its metrics (`computeMetrics` on its records, or `desMetrics`) and the DES;
 * `refused` the records of the requests the server refused (`refusedRecords`), for their messages.
 */
export function buildResult(metrics: BenchmarkMetrics, des: DesOutput, refused: readonly RequestRecord[], ctx: ResultContext): BenchmarkResult {
  const queue = Float64Array.from(des.requests, (r) => (r.sendS - r.schedS) * 1000).sort();
  const rejected = refused.length;
  const numPrompts = des.requests.length;
  const arrival = ctx.workload.arrival;
  const result: BenchmarkResult = {
    ...metrics,
    date: vllmDate(ctx.startEpochMs),
    endpoint_type: ctx.workload.api === 'chat' ? 'openai-chat' : 'openai',
    backend: 'vllm',
    label: 'lm-bench-sim',
    model_id: ctx.model.hf_name,
    tokenizer_id: ctx.model.hf_name,
    num_prompts: numPrompts,
    // The offered rate of what was scheduled (a stage cut short by num_prompts counts for what it sent).
    request_rate: offeredRate(arrival, numPrompts),
    burstiness: arrival.kind === 'gamma' ? arrival.burstiness : 1,
    max_concurrency: concurrencyCap(arrival),
    server_config: { ...ctx.resolved },
    hardware: ctx.hardware,
    model: ctx.model.id,
    // A trace's requests stay with the study or the file: the result names the trace, not every request.
    workload: withoutTraceData(ctx.workload),
    slo: ctx.slo ?? null,
    server_metrics: serverMetrics(des, ctx.memory),
    steady_state: null,
    saturation: saturationBlock(detectSaturation(des, stageSpansS(ctx.workload))),
    energy: energyBlock(ctx.energy, ctx.resolved, ctx.energyUnavailableReason),
    lmb: {
      version: SIM_VERSION,
      source: 'sim',
      start_epoch_ms: ctx.startEpochMs,
      errors_by_kind: rejected > 0 ? { http_status: rejected } : {},
      ...(rejected > 0 ? { error_samples: errorSamples(refused) } : {}),
      token_source_counts: { sim: numPrompts - rejected },
      mean_client_queue_ms: queue.length === 0 ? 0 : queue.reduce((s, x) => s + x, 0) / queue.length,
      p99_client_queue_ms: percentileSorted(queue, 99),
      max_loop_lag_ms: null,
      rejected,
      startup_time_s: ctx.startupTimeS,
    },
  };
  const evidence = { server: simEvidence(des, ctx.resolved), client: null, metrics: null };
  const diagnosis = metrics.completed === 0 ? null : diagnose({ result, evidence, known: ctx.resolved, slo: ctx.slo ?? null, source: 'simulated', model: ctx.model });
  return { ...result, evidence, diagnosis };
}
