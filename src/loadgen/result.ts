import type { Arrival, BenchmarkResult, RequestRecord, ServerConfig, RunEvidence, ServerMetrics, Slo, Workload } from '../domain/index.js';
import { requestThresholds, withoutTraceData } from '../domain/index.js';
import { diagnose } from '../diagnose/classify.js';
import { computeMetrics, errorSamples } from '../metrics/index.js';
import { mean, percentileSorted } from '../metrics/stats.js';
import { steadyState } from '../metrics/steady-state.js';
import { saturationBlock, saturationOf, stageSpansS, type RequestTimes } from '../metrics/saturation.js';
import { concurrencyCap, offeredRate, requestRateField } from '../workload/sample.js';

/**
 * Measured records → a BenchmarkResult under vLLM's key names, plus lm-bench's blocks: error kinds
 * and token sources counted, the client's own queueing (send − intended send: coordinated omission
 * made visible) and its event-loop lag, the server's /metrics and the steady-state window; with the
 * run's evidence, the diagnosis of why it missed its SLOs or saturated (diagnose/classify.ts).
 */
export const LMB_VERSION = '0.1.0';

export interface ResultContext {
  readonly workload: Workload;
  readonly model: string;
  readonly api: 'completions' | 'chat';
  readonly slo?: Slo | undefined;
  readonly serverMetrics: ServerMetrics | null;
  readonly maxLoopLagMs: number | null;
  readonly startEpochMs: number;
  readonly label?: string | undefined;
  readonly burstiness?: number | undefined;
  /** What the run saw (server scrapes reduced, client health); none: no diagnosis either. */
  readonly evidence?: RunEvidence | undefined;
  /** Knob values the server is known to run with (`run --set`, a trial's config), for the diagnosis. */
  readonly known?: ServerConfig | undefined;
  /**
   * An open-loop run's schedule origin (the run-seconds instant its arrival times count from, where its
   * rate stages start): the run is then judged on whether it kept up (metrics/saturation.ts). Absent for
   * closed loops, ramps (whose rate is not the workload's) and runs whose rate a controller moves (slo-hold).
   */
  readonly scheduleStartS?: number | undefined;
  /**
   * Set when the measured requests are the first ones of the workload's own schedule (`runBenchmark`):
   * `request_rate` is then the rate that schedule offered them (`offeredRate`: a run cut short inside a
   * rate stage, or whose stages open with a pause, reports the rate it sent at, not the stages' mean).
   * Absent (slo-hold, whose controller moves the rate): the arrival's nominal rate.
   */
  readonly fromSchedule?: boolean | undefined;
  /** The salt the measured prompts' words were drawn with, recorded so the run can be sent again word for word. */
  readonly promptSalt?: string | undefined;
}

function vllmDate(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

function burstinessField(a: Arrival, override: number | undefined): number | 'inf' {
  if (override !== undefined) return Number.isFinite(override) ? override : 'inf';
  switch (a.kind) {
    case 'gamma':
      return a.burstiness;
    case 'constant':
      return 'inf';
    case 'closed':
    case 'burst':
    case 'poisson':
      return 1;
  }
}

function countBy(records: readonly RequestRecord[], key: (r: RequestRecord) => string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) {
    const k = key(r);
    if (k !== null) out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/**
 * Failures that are the queue's: a request that timed out or was given up waiting, or that an
 * overloaded server shed (429, 503), arrived and never got its first token. Others (a 400 for a prompt
 * too long, a reset connection) are not load the server had to keep up with, as the simulator's refused
 * requests are not.
 */
function waitedInQueue(r: RequestRecord): boolean {
  switch (r.error_kind) {
    case 'timeout':
    case 'aborted':
      return true;
    case 'http_status':
      return r.http_status === 429 || r.http_status === 503;
    case null:
    case 'connection_reset':
    case 'connection_refused':
    case 'dns':
    case 'tls':
    case 'truncated_stream':
    case 'stream_error':
    case 'bad_response':
      return false;
  }
}

/**
 * Whether an open-loop run's server kept up with its arrivals. Arrivals are read on the schedule's
 * axis (`originS` is its 0, where rate stages start); the verdict's window is reported on the run's own
 * axis, as the steady-state window is.
 */
function loadSaturation(measured: readonly RequestRecord[], workload: Workload, originS: number): BenchmarkResult['saturation'] {
  const times: RequestTimes[] = [];
  for (const r of measured) {
    if (r.error_kind !== null) {
      if (waitedInQueue(r)) times.push({ arrivedS: r.sched_time_s - originS, firstTokenS: Number.POSITIVE_INFINITY, lastTokenS: Number.POSITIVE_INFINITY, finished: false, outputTokens: 0 });
      continue;
    }
    const first = r.chunk_times_s[0];
    const last = r.chunk_times_s[r.chunk_times_s.length - 1] ?? r.done_time_s;
    times.push({
      arrivedS: r.sched_time_s - originS,
      firstTokenS: first === undefined ? Number.POSITIVE_INFINITY : first - originS,
      lastTokenS: (last ?? Number.POSITIVE_INFINITY) - originS,
      finished: r.done_time_s !== null,
      outputTokens: r.output_tokens,
    });
  }
  const block = saturationBlock(saturationOf(times, stageSpansS(workload)));
  return block === null ? null : { ...block, window_start_s: block.window_start_s + originS, window_end_s: block.window_end_s + originS };
}

export function buildResult(records: readonly RequestRecord[], ctx: ResultContext): BenchmarkResult {
  const measured = records.filter((r) => r.phase === 'measure');
  const goodput = requestThresholds(ctx.slo ?? ctx.workload.slo);
  const metrics = computeMetrics(measured, { goodput });
  const queueMs = Float64Array.from(measured, (r) => (r.send_time_s - r.sched_time_s) * 1000).sort();
  const endpointType = ctx.api === 'chat' ? 'openai-chat' : 'openai';
  const result: BenchmarkResult = {
    date: vllmDate(ctx.startEpochMs),
    endpoint_type: endpointType,
    backend: endpointType,
    label: ctx.label ?? null,
    model_id: ctx.model,
    tokenizer_id: null,
    num_prompts: measured.length,
    request_rate: ctx.fromSchedule === true ? offeredRate(ctx.workload.arrival, measured.length) : requestRateField(ctx.workload.arrival),
    burstiness: burstinessField(ctx.workload.arrival, ctx.burstiness),
    max_concurrency: concurrencyCap(ctx.workload.arrival),
    ...metrics,
    server_config: null,
    hardware: null,
    model: null,
    // A trace's requests stay with the study or the file: the result names the trace, not every request.
    workload: withoutTraceData(ctx.workload),
    slo: ctx.slo ?? ctx.workload.slo ?? null,
    server_metrics: ctx.serverMetrics,
    steady_state: steadyState(measured),
    lmb: {
      version: LMB_VERSION,
      source: 'loadgen',
      start_epoch_ms: ctx.startEpochMs,
      errors_by_kind: countBy(measured, (r) => r.error_kind),
      ...(measured.some((r) => r.error_kind !== null) ? { error_samples: errorSamples(measured) } : {}),
      token_source_counts: countBy(measured, (r) => r.token_source),
      mean_client_queue_ms: mean(queueMs),
      p99_client_queue_ms: percentileSorted(queueMs, 99),
      max_loop_lag_ms: ctx.maxLoopLagMs,
      rejected: 0,
      startup_time_s: null,
      ...(ctx.promptSalt === undefined ? {} : { prompt_salt: ctx.promptSalt }),
    },
    ...(ctx.scheduleStartS === undefined ? {} : { saturation: loadSaturation(measured, ctx.workload, ctx.scheduleStartS) }),
  };
  if (ctx.evidence === undefined) return result;
  const diagnosis = measured.length === 0 ? null : diagnose({ result, evidence: ctx.evidence, known: ctx.known ?? {}, slo: result.slo, source: 'measured' });
  return { ...result, evidence: ctx.evidence, diagnosis };
}
