import { STAT_KEYS, type ResultMetric, type ResultStat, type StatKey } from '../domain/index.js';
import type { ExportItem } from './types.js';

/**
 * The one gate every exported figure passes: a figure is what lm-bench measured, or null. The stored
 * result holds 0 where a foreign file had nothing (the BenchmarkResult schema requires every key) and
 * lists those keys in `unavailable`; a run with no completed request has no latency sample at all,
 * whatever zeros its result holds. Writers leave a null figure out (or write null where the target
 * format has a null), so an absent figure is never exported as a measured 0.
 */
export type FigureKey =
  | StatKey
  | 'duration'
  | 'completed'
  | 'failed'
  | 'total_input_tokens'
  | 'total_output_tokens'
  | 'request_throughput'
  | 'output_throughput'
  | 'total_token_throughput'
  | 'max_output_tokens_per_s'
  | 'max_concurrent_requests'
  | 'num_prompts';

const STAT_KEY_SET: ReadonlySet<string> = new Set(STAT_KEYS);

export function figure(item: ExportItem, key: FigureKey): number | null {
  if (item.unavailable.includes(key)) return null;
  if (STAT_KEY_SET.has(key) && noSample(item)) return null;
  const v = item.result[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** `{stat}_{metric}_ms`, gated like every figure. */
export function stat(item: ExportItem, s: ResultStat, metric: ResultMetric): number | null {
  return figure(item, `${s}_${metric}_ms`);
}

/** Nothing completed, so there is no latency sample (the result's zeros are vLLM's empty-sample value). */
function noSample(item: ExportItem): boolean {
  return figure(item, 'completed') === 0;
}

/** `request_goodput`: null in the result when no goodput SLO was set, as vLLM writes it. */
export function goodput(item: ExportItem): number | null {
  if (item.unavailable.includes('request_goodput')) return null;
  const v = item.result.request_goodput;
  return v !== null && Number.isFinite(v) ? v : null;
}

/** The arrival rate the run was driven at, req/s ('inf': all at once or a closed loop); null when unknown. */
export function requestRate(item: ExportItem): number | 'inf' | null {
  if (item.unavailable.includes('request_rate')) return null;
  const r = item.result.request_rate;
  return r === 'inf' || Number.isFinite(r) ? r : null;
}

export function burstiness(item: ExportItem): number | 'inf' | null {
  if (item.unavailable.includes('burstiness')) return null;
  const b = item.result.burstiness;
  return b === 'inf' || Number.isFinite(b) ? b : null;
}

/** A string field of the result (date, backend, model_id…), null when the source had none. */
export function text(item: ExportItem, key: 'date' | 'endpoint_type' | 'backend' | 'model_id'): string | null {
  if (item.unavailable.includes(key)) return null;
  // lm-bench's own runs write `date` from the load's start; the pure simulator's is the epoch, not a date.
  if (key === 'date' && item.result.lmb.source !== 'ingest' && startEpochMs(item) === null) return null;
  const v = item.result[key];
  return v === '' ? null : v;
}

/**
 * When the load began, epoch ms: null when the source did not record it, or when it is the pure
 * simulator's origin 0 (a simulation outside a study has no wall-clock start).
 */
export function startEpochMs(item: ExportItem): number | null {
  if (item.unavailable.includes('lmb.start_epoch_ms')) return null;
  const t = item.result.lmb.start_epoch_ms;
  return Number.isFinite(t) && t > 0 ? t : null;
}

/** Mean tokens per completed request (vLLM counts a request's tokens only when it succeeded). */
export function meanPerCompleted(item: ExportItem, key: 'total_input_tokens' | 'total_output_tokens'): number | null {
  const total = figure(item, key);
  const n = figure(item, 'completed');
  return total === null || n === null || n === 0 ? null : total / n;
}
