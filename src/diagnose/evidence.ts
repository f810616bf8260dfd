import type { BenchmarkResult, ClientEvidence, RequestRecord, ServerConfig, ServerEngine, ServerEvidence, ServerMetrics } from '../domain/index.js';
import { ENGINE_METRICS, detectEngine } from './engines.js';

/**
 * The evidence a diagnosis reads, reduced from what a run saw: the server's /metrics scrapes (vLLM's
 * names, old and new), or, for a result that kept only its `server_metrics` peaks, what those allow.
 * The client's health comes from its own threads. The simulator builds its evidence from its own
 * state (sim/evidence.ts) in the same shape.
 */
export type Scrape = ReadonlyMap<string, readonly number[]>;

/** vLLM's metric names (each with its old name, read when the new one is absent; docs/references/load-runners.md#vllm-prometheus-metrics). */
export const METRIC = ENGINE_METRICS.vllm;

export function pickMetric(s: Scrape, names: readonly string[]): readonly number[] | undefined {
  for (const n of names) {
    const v = s.get(n);
    if (v !== undefined) return v;
  }
  return undefined;
}

const total = (xs: readonly number[] | undefined): number | null => (xs === undefined ? null : xs.reduce((a, b) => a + b, 0));
const peakOf = (xs: readonly number[] | undefined): number | null => (xs === undefined || xs.length === 0 ? null : Math.max(...xs));

/** KV usage at or above this is "full" (vLLM preempts at 100%; near it, admission already stalls). */
export const KV_FULL = 0.95;
/**
 * The running count that counts as at a limit of `limit`: within 5% of it, and at least one under it,
 * since a request that finishes in a step leaves its seat empty until the next step admits another.
 */
export function atLimit(limit: number): number {
  return Math.max(1, Math.min(limit - 1, 0.95 * limit));
}

/** The engine whose names the scrapes carry (the names of every scrape, so one partial scrape does not decide). */
export function scrapesEngine(scrapes: readonly Scrape[]): ServerEngine | null {
  return detectEngine(new Set(scrapes.flatMap((s) => [...s.keys()])));
}

/**
 * Gauges over the scrapes (shares and means over scrapes taken at a fixed interval); histogram means
 * from the first and last; in the names of the engine the scrapes came from. Null when they hold no
 * series the evidence reads: an unknown server's /metrics is no evidence of an idle one.
 */
export function serverEvidenceFromScrapes(scrapes: readonly Scrape[], known: ServerConfig, opts: { readonly idleEnds?: boolean } = {}): ServerEvidence | null {
  const first = scrapes[0];
  const last = scrapes[scrapes.length - 1];
  const engine = scrapesEngine(scrapes);
  if (first === undefined || last === undefined || engine === null) return null;
  const METRIC = ENGINE_METRICS[engine];
  // A fixed run's first scrape is taken before its load and its last after it (`idleEnds`): they bound
  // the counters' deltas, but counted among the gauges they dilute every share (a short run's KV-full
  // share read 0.227 for 0.25 with them).
  const gauged = opts.idleEnds === true && scrapes.length >= 3 ? scrapes.slice(1, -1) : scrapes;
  const running = gauged.map((s) => total(pickMetric(s, METRIC.running)));
  const waiting = gauged.map((s) => total(pickMetric(s, METRIC.waiting)));
  const kv = gauged.map((s) => {
    const v = peakOf(pickMetric(s, METRIC.kvUsage));
    return v === null ? null : Math.min(1, Math.max(0, v));
  });
  // max_num_seqs is vLLM's limit; another engine's slots are whatever its own flags say.
  const limitKnown = known.max_num_seqs !== undefined && engine === 'vllm';
  const replicas = known.data_parallel_size ?? 1;
  const runningPeak = maxOf(running);
  const limit = limitKnown ? (known.max_num_seqs as number) * replicas : runningPeak;
  let waitingN = 0;
  let cappedN = 0;
  let kvFullN = 0;
  for (let i = 0; i < gauged.length; i++) {
    const w = waiting[i] ?? null;
    const r = running[i] ?? null;
    if (w !== null && w > 0) {
      waitingN++;
      if (r !== null && limit !== null && limit > 0 && r >= atLimit(limit)) cappedN++;
    }
    if ((kv[i] ?? 0) >= KV_FULL) kvFullN++;
  }
  const n = gauged.length;
  const delta = (names: readonly string[]): number | null => {
    const a = total(pickMetric(first, names));
    const b = total(pickMetric(last, names));
    return a === null || b === null ? null : Math.max(0, b - a);
  };
  const meanMs = (sum: readonly string[], count: readonly string[]): number | null => {
    const s = delta(sum);
    const c = delta(count);
    return s === null || c === null || c === 0 ? null : (s / c) * 1000;
  };
  const stepSum = delta(METRIC.stepTokensSum);
  const stepCount = delta(METRIC.stepTokensCount);
  const anyGauge = running.some((x) => x !== null) || waiting.some((x) => x !== null);
  const queueMs = meanMs(METRIC.queueSum, METRIC.queueCount);
  if (!anyGauge && !kv.some((x) => x !== null) && queueMs === null) return null;
  return {
    source: 'metrics',
    engine,
    samples: n,
    running_mean: meanOf(running),
    running_peak: runningPeak,
    waiting_mean: meanOf(waiting),
    waiting_peak: maxOf(waiting),
    waiting_share: anyGauge ? waitingN / n : null,
    capped_share: anyGauge && limit !== null ? cappedN / n : null,
    running_limit: limit,
    running_limit_known: limitKnown,
    kv_usage_mean: meanOf(kv),
    kv_usage_peak: maxOf(kv),
    kv_full_share: kv.some((x) => x !== null) ? kvFullN / n : null,
    preemptions: delta(METRIC.preemptions),
    queue_ms_mean: queueMs,
    prefill_ms_mean: meanMs(METRIC.prefillSum, METRIC.prefillCount),
    decode_ms_mean: meanMs(METRIC.decodeSum, METRIC.decodeCount),
    step_tokens_mean: stepSum === null || stepCount === null || stepCount === 0 ? null : stepSum / stepCount,
  };
}

function meanOf(xs: readonly (number | null)[]): number | null {
  let s = 0;
  let n = 0;
  for (const x of xs) {
    if (x === null) continue;
    s += x;
    n++;
  }
  return n === 0 ? null : s / n;
}

function maxOf(xs: readonly (number | null)[]): number | null {
  let m: number | null = null;
  for (const x of xs) if (x !== null && (m === null || x > m)) m = x;
  return m;
}

/** A result with only `server_metrics` peaks (a harness's, an older run's): preemptions and peaks, no shares. */
export function evidenceFromServerMetrics(sm: ServerMetrics | null, known: ServerConfig): ServerEvidence | null {
  if (sm === null || Object.values(sm).every((v) => v === null)) return null;
  const limitKnown = known.max_num_seqs !== undefined;
  return {
    source: 'metrics',
    engine: 'vllm',
    samples: 0,
    running_mean: null,
    running_peak: sm.num_requests_running_peak,
    waiting_mean: null,
    waiting_peak: sm.num_requests_waiting_peak,
    waiting_share: null,
    capped_share: null,
    running_limit: limitKnown ? (known.max_num_seqs as number) * (known.data_parallel_size ?? 1) : sm.num_requests_running_peak,
    running_limit_known: limitKnown,
    kv_usage_mean: null,
    kv_usage_peak: sm.kv_cache_usage_peak,
    kv_full_share: null,
    preemptions: sm.num_preemptions,
    queue_ms_mean: null,
    prefill_ms_mean: null,
    decode_ms_mean: null,
    step_tokens_mean: null,
  };
}

/**
 * Prompts one engine step holds, for a run whose requests answer one token (null otherwise, or when
 * the scrapes lack tokens per step): such a request is prefilled and finished in one step, so the
 * step's tokens over a prompt's uncached tokens (the prefix cache's hits take no step) count the
 * batch the running gauge, read between steps, never sees.
 */
export function oneTokenPromptsPerStep(s: ServerEvidence, result: BenchmarkResult): number | null {
  if (s.step_tokens_mean === null || s.step_tokens_mean <= 0 || result.completed === 0) return null;
  if (result.total_output_tokens / result.completed > 1) return null;
  const uncached = 1 - Math.min(1, Math.max(0, result.server_metrics?.prefix_cache_hit_rate ?? 0));
  const prompt = (result.total_input_tokens / result.completed) * uncached;
  return prompt <= 0 ? null : s.step_tokens_mean / prompt;
}

/** A request sent this much after its intended time shows a client behind its schedule. */
const LATE_SEND_S = 0.1;

export interface ClientHealth {
  readonly loopLagP99Ms: number | null;
  readonly loopLagMaxMs: number | null;
  /** CPU time of the process over the run, ms (null when not measured). */
  readonly cpuMs: number | null;
  readonly wallMs: number;
  readonly threads: number;
}

/**
 * The client's health over a run. Late sends are counted only where there is a schedule to be late
 * for (open loop); a capped open loop's waits for a free slot are the server's doing, not lateness,
 * so only sends that left late with a slot free count (enqueue − intended).
 */
export function clientEvidence(records: readonly RequestRecord[], h: ClientHealth, openLoop: boolean): ClientEvidence {
  let late = 0;
  let n = 0;
  if (openLoop) {
    for (const r of records) {
      if (r.phase !== 'measure') continue;
      n++;
      if (r.enqueue_time_s - r.sched_time_s > LATE_SEND_S) late++;
    }
  }
  const backlog = openLoop ? backlogGrowth(records) : null;
  return {
    backlog_growth: backlog?.growth ?? null,
    backlog_arrivals: backlog?.arrivals ?? null,
    loop_lag_p99_ms: h.loopLagP99Ms,
    loop_lag_max_ms: h.loopLagMaxMs,
    late_send_share: openLoop && n > 0 ? late / n : null,
    cpu_share: h.cpuMs === null || h.wallMs <= 0 ? null : h.cpuMs / (h.wallMs * h.threads),
    threads: h.threads,
  };
}

/**
 * In flight at the middle of the sending and at its end (intended send times: a capped client's held
 * arrivals count as the server's backlog too), and the arrivals between. Null with under 20 requests.
 */
export function backlogGrowth(records: readonly RequestRecord[]): { growth: number; arrivals: number } | null {
  const measured = records.filter((r) => r.phase === 'measure');
  if (measured.length < 20) return null;
  const sends = measured.map((r) => r.sched_time_s).sort((a, b) => a - b);
  const midS = sends[Math.floor(sends.length / 2)] as number;
  const endS = sends[sends.length - 1] as number;
  const inFlightAt = (t: number): number => {
    let k = 0;
    for (const r of measured) if (r.sched_time_s <= t && (r.done_time_s ?? r.send_time_s) > t) k++;
    return k;
  };
  return { growth: inFlightAt(endS) - inFlightAt(midS), arrivals: sends.filter((t) => t > midS && t <= endS).length };
}
