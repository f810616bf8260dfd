import { z } from 'zod';
import { RawNum, put, type Draft } from './draft.js';
import { isObject } from './vllm-serve.js';

/**
 * What lm-bench's own llm-d reports (export/llm-d-br.ts, keyword `lm-bench`) carry beyond the schema's
 * fields, read back by ingest/llm-d-br.ts: the stored figures the report has no exact field for, the
 * load's start, and the run's dedupe key. A report from anyone else is read by the schema's fields alone.
 */
const count = z.int().nonnegative();

/** lm-bench's export of the figures the report has no exact field for (`results.observability.lm_bench_figures`). */
export const LmBenchFigures = z.looseObject({
  completed: count.optional(),
  failed: count.optional(),
  num_prompts: count.optional(),
  duration: RawNum.optional(),
  total_input_tokens: count.optional(),
  total_output_tokens: count.optional(),
  max_output_tokens_per_s: RawNum.optional(),
  max_concurrent_requests: RawNum.optional(),
  request_goodput: RawNum.optional(),
  request_rate: RawNum.optional(),
  burstiness: RawNum.optional(),
  max_concurrency: z.int().positive().optional(),
  date: z.string().optional(),
  mean_client_queue_ms: RawNum.optional(),
  p99_client_queue_ms: RawNum.optional(),
});

/** The stored figures of lm-bench's own report, over what the report's rates would derive. */
export function lmBenchFigures(d: Draft, f: z.infer<typeof LmBenchFigures>): void {
  put(d, 'completed', f.completed);
  put(d, 'failed', f.failed);
  put(d, 'duration', f.duration);
  put(d, 'total_input_tokens', f.total_input_tokens);
  put(d, 'total_output_tokens', f.total_output_tokens);
  put(d, 'max_output_tokens_per_s', f.max_output_tokens_per_s);
  put(d, 'max_concurrent_requests', f.max_concurrent_requests);
  if (f.request_goodput !== undefined) d.request_goodput = f.request_goodput;
  const queue = { ...(f.mean_client_queue_ms === undefined ? {} : { mean_client_queue_ms: f.mean_client_queue_ms }), ...(f.p99_client_queue_ms === undefined ? {} : { p99_client_queue_ms: f.p99_client_queue_ms }) };
  d.lmb = { ...d.lmb, ...queue };
}

/** lm-bench's export keys its reports `lm-bench` (export/llm-d-br.ts). */
export function writtenByLmBench(run: unknown): run is Record<string, unknown> {
  return isObject(run) && Array.isArray(run['keywords']) && run['keywords'].includes('lm-bench');
}

/** lm-bench's report of a stored run has the run's content hash as its uid (64 hex digits). */
export function exportedRunHash(run: unknown): string | undefined {
  if (!writtenByLmBench(run)) return undefined;
  const uid = run['uid'];
  return typeof uid === 'string' && /^[0-9a-f]{64}$/.test(uid) ? uid : undefined;
}

/**
 * `run.time.start` of lm-bench's own report → when the load began (its `date` travels in
 * lm_bench_figures, as the run had it, or not at all). Only lm-bench's: llm-d's harness writes when the
 * experiment began, which for a report of one stage of several (inference-perf's stage 3) is minutes
 * before that stage's load. Only an instant with its offset: a clock time without a zone is no instant.
 */
export function runStart(d: Draft, run: unknown): void {
  const start = isObject(run) && isObject(run['time']) ? run['time']['start'] : undefined;
  if (typeof start !== 'string') return;
  const ms = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(start.trim()) ? Date.parse(start) : NaN;
  if (!Number.isFinite(ms) || ms <= 0) {
    d.notes.push(`run.time.start "${start}" is not an instant with a time zone: the start time is unavailable`);
    return;
  }
  d.lmb = { ...d.lmb, start_epoch_ms: ms };
}
