import { z } from 'zod';
import { RawNum, VLLM_RATES, buildResult, newDraft, parseRaw, put } from './draft.js';
import type { ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * SGLang `python -m sglang.bench_serving --output-file X.jsonl`: one JSON object per run, appended, with
 * Python's bare `Infinity` for `--request-rate inf` (json-text.ts quotes it). bench_serving began as a
 * copy of vLLM's benchmark_serving.py, so the metrics mean what vLLM's do (TTFT; TPOT per request
 * excluding the first token; ITL the pooled chunk gaps; numpy linear percentiles, population std), under
 * other names: `*_e2e_latency_ms` for vLLM's `*_e2el_ms`, `median_*` for p50. Key sets:
 * - 2024 (sglang ≤ 0.3): `duration`, `completed`, token totals (plus `_retokenized`), `output_throughput`,
 *   mean/median E2E latency, median TTFT and ITL only — no request throughput, which is then
 *   completed / duration, SGLang's own definition of it;
 * - 2025+: adds `request_throughput`, `input_throughput`, mean/median/std/p99 of TTFT, TPOT, ITL and
 *   E2E (p90/p95 where written), `concurrency`, `accept_length`.
 * bench_serving records no failure count and no model: failed is unavailable, the model comes from
 * `--model` (or `model_id`/`model` where a fork writes it).
 */
const count = z.int().nonnegative();
const opt = RawNum.nullable().optional();
const STATS = ['mean', 'median', 'std', 'p90', 'p95', 'p99'] as const;
const METRICS = { ttft: 'ttft', tpot: 'tpot', itl: 'itl', e2el: 'e2e_latency' } as const;

const statShape = Object.fromEntries(STATS.flatMap((s) => Object.values(METRICS).map((m) => [`${s}_${m}_ms`, opt]))) as Record<string, typeof opt>;

export const SglangRecord = z.looseObject({
  backend: z.string().optional(),
  dataset_name: z.string().nullable().optional(),
  request_rate: RawNum.nullable().optional(),
  max_concurrency: z.int().positive().nullable().optional(),
  duration: RawNum,
  completed: count,
  total_input_tokens: count,
  total_output_tokens: count,
  total_output_tokens_retokenized: count.nullable().optional(),
  request_throughput: opt,
  input_throughput: opt,
  output_throughput: RawNum,
  total_throughput: opt,
  /** Mean requests in flight (sum of latencies / duration), not vLLM's max_concurrent_requests: not kept. */
  concurrency: opt,
  model_id: z.string().optional(),
  model: z.string().optional(),
  ...statShape,
});

/** bench_serving's own keys, which vLLM's result files never have. */
export function isSglangRecord(v: unknown): v is Record<string, unknown> {
  return isObject(v) && 'completed' in v && ('mean_e2e_latency_ms' in v || 'median_e2e_latency_ms' in v || 'total_output_tokens_retokenized' in v || 'random_range_ratio' in v);
}

export function parseSglangRecord(raw: unknown, label: string): ParsedRun {
  const r = parseRaw(SglangRecord, raw, label);
  const d = newDraft('linear', label);
  d.backend = r.backend;
  d.endpoint_type = r.backend;
  d.label = r.dataset_name ?? null;
  const model = r.model_id ?? r.model;
  d.model_id = model;
  if (r.request_rate !== undefined && r.request_rate !== null) d.request_rate = r.request_rate;
  // bench_serving draws Poisson arrivals (no burstiness option before 2025; later its default is 1).
  d.burstiness = typeof r['burstiness'] === 'number' ? r['burstiness'] : 1;
  d.max_concurrency = r.max_concurrency ?? null;
  // bench_serving's calculate_metrics: completed, total_output and total_input + total_output, each / dur_s
  // (vLLM's definitions). Held only where the file writes the rate itself: a total summed here from a
  // rounded input_throughput is not a figure the file states.
  d.rateDefinitions = { tool: 'SGLang bench_serving', rates: VLLM_RATES.filter((k) => (k === 'total_token_throughput' ? typeof r.total_throughput === 'number' : true)), fileNames: { total_token_throughput: 'total_throughput' } };
  put(d, 'duration', r.duration);
  put(d, 'completed', r.completed);
  put(d, 'total_input_tokens', r.total_input_tokens);
  put(d, 'total_output_tokens', r.total_output_tokens);
  put(d, 'output_throughput', r.output_throughput);
  if (r.request_throughput !== undefined && r.request_throughput !== null) put(d, 'request_throughput', r.request_throughput);
  else if (r.duration > 0) {
    put(d, 'request_throughput', r.completed / r.duration);
    d.notes.push('request_throughput = completed / duration (bench_serving\'s definition; this key set does not write it)');
  }
  const totalTput = r.total_throughput ?? (typeof r.input_throughput === 'number' ? r.input_throughput + r.output_throughput : undefined);
  put(d, 'total_token_throughput', totalTput ?? undefined);
  if (r.completed > 0) {
    for (const [metric, name] of Object.entries(METRICS)) {
      for (const s of STATS) {
        const v = r[`${s}_${name}_ms`];
        put(d, `${s}_${metric}_ms` as Parameters<typeof put>[1], typeof v === 'number' ? v : undefined);
      }
    }
  } else d.notes.push('no request succeeded: latency statistics unavailable');
  d.notes.push(`SGLang bench_serving (${r.request_throughput === undefined ? '2024 key set' : '2025+ key set'}); failures are not recorded by bench_serving`);
  const { result, meta } = buildResult(d);
  return { label, record: raw, result, meta, hints: model === undefined ? {} : { model } };
}
