import type { BenchmarkMetrics, RequestRecord, RequestSlo, StatKey } from '../domain/index.js';
import { isSuccess, RESULT_METRICS } from '../domain/index.js';
import { summarize, type Summary } from './stats.js';
import { extentOf } from '../util/extent.js';

/**
 * Per-request records → vLLM's aggregate metrics, with `vllm bench serve`'s exact definitions
 * (docs/references/load-runners.md#vllm-bench-serve-metrics). One module for the simulator and the load runner alike, so the
 * two cannot drift apart in definition.
 *
 * - TTFT = first choices-chunk − send; E2EL = last choices-chunk − send (not [DONE], not usage).
 * - TPOT = (E2EL − TTFT)/(n_out − 1), only for n_out > 1; counted as 0 for goodput otherwise.
 * - ITL  = every gap between consecutive chunks of every successful request, pooled.
 * - duration = last response end − first dispatch, drain included.
 * - request_goodput = requests meeting every per-request threshold (inclusive) / duration, or null.
 */
export interface MetricsOptions {
  readonly goodput?: RequestSlo | undefined;
}

export interface PerRequestLatencies {
  readonly ttftS: number[];
  readonly tpotS: number[];
  readonly itlS: number[];
  readonly e2elS: number[];
}

export function latencies(records: readonly RequestRecord[]): PerRequestLatencies {
  const ttftS: number[] = [];
  const tpotS: number[] = [];
  const itlS: number[] = [];
  const e2elS: number[] = [];
  for (const r of records) {
    if (!isSuccess(r)) continue;
    const chunks = r.chunk_times_s;
    const first = chunks[0] as number;
    const last = chunks[chunks.length - 1] as number;
    const ttft = first - r.send_time_s;
    const e2el = last - r.send_time_s;
    ttftS.push(ttft);
    e2elS.push(e2el);
    if (r.output_tokens > 1) tpotS.push((e2el - ttft) / (r.output_tokens - 1));
    for (let i = 1; i < chunks.length; i++) itlS.push((chunks[i] as number) - (chunks[i - 1] as number));
  }
  return { ttftS, tpotS, itlS, e2elS };
}

/**
 * Whether a request meets every per-request threshold (vLLM's `--goodput`, inclusive), from its send,
 * first- and last-token times: the records' reading here and the simulator's lean one (sim/result.ts).
 */
export function meetsRequestSlo(sendS: number, firstS: number, lastS: number, outputTokens: number, slo: RequestSlo): boolean {
  const ttftMs = (firstS - sendS) * 1000;
  const e2elMs = (lastS - sendS) * 1000;
  const tpotMs = outputTokens > 1 ? (e2elMs - ttftMs) / (outputTokens - 1) : 0;
  if (slo.ttft_ms !== undefined && ttftMs > slo.ttft_ms) return false;
  if (slo.tpot_ms !== undefined && tpotMs > slo.tpot_ms) return false;
  if (slo.e2el_ms !== undefined && e2elMs > slo.e2el_ms) return false;
  return true;
}

function isGood(r: RequestRecord, slo: RequestSlo): boolean {
  const chunks = r.chunk_times_s;
  return meetsRequestSlo(r.send_time_s, chunks[0] as number, chunks[chunks.length - 1] as number, r.output_tokens, slo);
}

/** Peak number of requests in flight over [send, last token), departures before arrivals at ties. */
export function peakInFlight(sends: readonly number[], lasts: readonly number[]): number {
  const s = Float64Array.from(sends).sort();
  const l = Float64Array.from(lasts).sort();
  let i = 0;
  let j = 0;
  let cur = 0;
  let peak = 0;
  while (i < s.length) {
    if (j < l.length && (l[j] as number) <= (s[i] as number)) {
      cur--;
      j++;
    } else {
      cur++;
      i++;
      if (cur > peak) peak = cur;
    }
  }
  return peak;
}

/** `peakInFlight` of a run's successful requests. */
export function maxConcurrent(records: readonly RequestRecord[]): number {
  const ok = records.filter(isSuccess);
  return peakInFlight(
    ok.map((r) => r.send_time_s),
    ok.map((r) => r.chunk_times_s[r.chunk_times_s.length - 1] as number),
  );
}

/** Each of vLLM's four latency metrics' summary as the result's seven fields (mean_ttft_ms … p99_e2el_ms). */
export function latencyStats(byMetric: Readonly<Record<(typeof RESULT_METRICS)[number], Summary>>): Record<StatKey, number> {
  const stats = {} as Record<StatKey, number>;
  for (const m of RESULT_METRICS) {
    const x = byMetric[m];
    stats[`mean_${m}_ms`] = x.mean;
    stats[`median_${m}_ms`] = x.median;
    stats[`std_${m}_ms`] = x.std;
    stats[`p50_${m}_ms`] = x.p50;
    stats[`p90_${m}_ms`] = x.p90;
    stats[`p95_${m}_ms`] = x.p95;
    stats[`p99_${m}_ms`] = x.p99;
  }
  return stats;
}

/** Peak chunks in any 1-s bin counted from the earliest successful start (a chunk rate, as vLLM's). */
export function maxChunksPerSecond(records: readonly RequestRecord[]): number {
  const ok = records.filter(isSuccess);
  if (ok.length === 0) return 0;
  const t0 = extentOf(ok.map((r) => r.send_time_s)).min;
  const bins = new Map<number, number>();
  for (const r of ok) {
    for (const t of r.chunk_times_s) {
      const b = Math.floor(t - t0);
      bins.set(b, (bins.get(b) ?? 0) + 1);
    }
  }
  return extentOf(bins.values()).max;
}

export function computeMetrics(records: readonly RequestRecord[], opts: MetricsOptions = {}): BenchmarkMetrics {
  const ok = records.filter(isSuccess);
  const failed = records.length - ok.length;
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const r of records) {
    start = Math.min(start, r.send_time_s);
    const last = r.chunk_times_s.length > 0 ? (r.chunk_times_s[r.chunk_times_s.length - 1] as number) : null;
    end = Math.max(end, r.done_time_s ?? last ?? r.send_time_s, last ?? Number.NEGATIVE_INFINITY);
  }
  const duration = records.length === 0 ? 0 : Math.max(0, end - start);
  const totalIn = ok.reduce((s, r) => s + r.prompt_tokens, 0);
  const totalOut = ok.reduce((s, r) => s + r.output_tokens, 0);
  const per = (n: number): number => (duration > 0 ? n / duration : 0);
  const lat = latencies(records);
  const byMetric: Record<(typeof RESULT_METRICS)[number], Summary> = {
    ttft: summarize(lat.ttftS, 1000),
    tpot: summarize(lat.tpotS, 1000),
    itl: summarize(lat.itlS, 1000),
    e2el: summarize(lat.e2elS, 1000),
  };
  const goodSlo = opts.goodput;
  const good = goodSlo === undefined ? null : ok.filter((r) => isGood(r, goodSlo)).length;
  return {
    duration,
    completed: ok.length,
    failed,
    total_input_tokens: totalIn,
    total_output_tokens: totalOut,
    request_throughput: per(ok.length),
    request_goodput: good === null ? null : per(good),
    output_throughput: per(totalOut),
    total_token_throughput: per(totalIn + totalOut),
    max_output_tokens_per_s: maxChunksPerSecond(records),
    max_concurrent_requests: maxConcurrent(records),
    ...latencyStats(byMetric),
  };
}
