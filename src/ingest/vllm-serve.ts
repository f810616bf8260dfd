import { z } from 'zod';
import { STAT_KEYS, type StatKey } from '../domain/index.js';
import { summarize } from '../metrics/index.js';
import { RawNum, VLLM_RATES, buildResult, impossibleFigure, newDraft, parseRaw, put, putStats, type Draft } from './draft.js';
import { rejected } from './json-text.js';
import { lmBenchBlocks } from './lm-bench-blocks.js';
import type { ParsedRun } from './parsed.js';

/**
 * `vllm bench serve` result records (docs/references/load-runners.md#vllm-bench-serve-result-keys): the legacy `benchmark_serving.py` key set (no
 * `failed`, the literal `"request_goodput:"` key, per-request arrays always present), the late-2025 and
 * newest key sets. Stat keys are all optional (e2el is absent unless asked for); where a stat is missing
 * but the per-request arrays are there, it is recomputed from them with vLLM's definitions.
 */
const count = z.int().nonnegative();
const optNum = RawNum.optional();

const STATS = ['mean', 'median', 'std', 'p50', 'p90', 'p95', 'p99'] as const;

const statShape = Object.fromEntries(STAT_KEYS.map((k) => [k, optNum])) as Record<StatKey, typeof optNum>;

export const VllmServeRecord = z.looseObject({
  date: z.string().optional(),
  endpoint_type: z.string().optional(),
  backend: z.string().optional(),
  label: z.string().nullable().optional(),
  model_id: z.string().optional(),
  tokenizer_id: z.string().nullable().optional(),
  num_prompts: count.optional(),
  request_rate: RawNum.optional(),
  burstiness: RawNum.optional(),
  max_concurrency: z.int().positive().nullable().optional(),
  duration: RawNum,
  completed: count,
  failed: count.optional(),
  total_input_tokens: count,
  total_output_tokens: count,
  request_throughput: RawNum,
  request_goodput: RawNum.nullable().optional(),
  'request_goodput:': RawNum.nullable().optional(),
  output_throughput: RawNum,
  total_token_throughput: optNum,
  max_output_tokens_per_s: optNum,
  max_concurrent_requests: optNum,
  mean_client_queue_time_ms: optNum,
  p99_client_queue_time_ms: optNum,
  ttfts: z.array(RawNum).optional(),
  itls: z.array(z.array(RawNum)).optional(),
  latencies: z.array(RawNum).optional(),
  output_lens: z.array(RawNum).optional(),
  errors: z.array(z.string().nullable()).optional(),
  // lm-bench's export adds what vLLM has no key for (export/vllm-bench.ts), as `--metadata` adds keys.
  // Typed loosely: `--metadata KEY=VALUE` writes strings, and a key of that name is no reason to refuse a file.
  lm_bench_source: z.unknown().optional(),
  lm_bench_content_hash: z.unknown().optional(),
  lm_bench_start_epoch_ms: z.unknown().optional(),
  lm_bench_energy: z.unknown().optional(),
  lm_bench_server_metrics: z.unknown().optional(),
  ...statShape,
});
export type VllmServeRecord = z.infer<typeof VllmServeRecord>;

/** Whether a JSON value looks like a `vllm bench serve` result (for format detection). */
export function isVllmServeRecord(v: unknown): v is Record<string, unknown> {
  return isObject(v) && 'completed' in v && ('request_throughput' in v || 'output_throughput' in v) && !('lmb' in v);
}

export function parseVllmServeRecord(raw: unknown, label: string): ParsedRun {
  const r = parseRaw(VllmServeRecord, raw, label);
  const d = newDraft('linear', label);
  d.date = r.date;
  d.backend = r.backend;
  d.endpoint_type = r.endpoint_type;
  d.label = r.label ?? null;
  d.model_id = r.model_id;
  d.tokenizer_id = r.tokenizer_id ?? null;
  d.num_prompts = r.num_prompts;
  d.request_rate = r.request_rate;
  d.burstiness = r.burstiness;
  d.max_concurrency = r.max_concurrency ?? null;
  // Legacy benchmark_serving.py wrote the key with a trailing colon (a typo kept by forks).
  d.request_goodput = r.request_goodput ?? r['request_goodput:'] ?? null;
  if (r['request_goodput:'] !== undefined && r.request_goodput === undefined) d.notes.push('request_goodput read from the legacy "request_goodput:" key');
  // vLLM defines its three rates exactly over the run's duration; an lm-bench export (lm_bench_* keys)
  // carries figures another tool measured under its own definitions (a GuideLLM mean of rates), so not there.
  if (!Object.keys(r).some((k) => k.startsWith('lm_bench_'))) d.rateDefinitions = { tool: 'vllm bench serve', rates: VLLM_RATES };
  put(d, 'duration', r.duration);
  put(d, 'completed', r.completed);
  put(d, 'total_input_tokens', r.total_input_tokens);
  put(d, 'total_output_tokens', r.total_output_tokens);
  put(d, 'request_throughput', r.request_throughput);
  put(d, 'output_throughput', r.output_throughput);
  put(d, 'total_token_throughput', r.total_token_throughput);
  put(d, 'max_output_tokens_per_s', r.max_output_tokens_per_s);
  put(d, 'max_concurrent_requests', r.max_concurrent_requests);
  if (r.failed !== undefined) put(d, 'failed', r.failed);
  else if (r.num_prompts !== undefined && r.num_prompts >= r.completed) {
    put(d, 'failed', r.num_prompts - r.completed);
    d.notes.push('failed derived: num_prompts - completed (legacy file without "failed")');
  }
  // With no successful request vLLM still writes every latency statistic, as 0 (numpy over an empty
  // list guarded by `or 0`): those zeros measure nothing, so the statistics are left unavailable.
  if (r.completed > 0) for (const k of STAT_KEYS) put(d, k, r[k]);
  else d.notes.push('no request succeeded: the file\'s latency statistics (written as 0) are unavailable');
  d.lmb = {};
  // Waits in the client's queue are latencies too: held to the same bounds as the statistics (a negative
  // or NaN wait was stored as measured).
  for (const key of ['mean_client_queue_time_ms', 'p99_client_queue_time_ms'] as const) {
    const x = r[key];
    const wrong = x === undefined ? null : impossibleFigure(key, x);
    if (wrong !== null) throw rejected(`${label}: ${key}: ${wrong}`);
  }
  if (r.mean_client_queue_time_ms !== undefined) d.lmb.mean_client_queue_ms = r.mean_client_queue_time_ms;
  if (r.p99_client_queue_time_ms !== undefined) d.lmb.p99_client_queue_ms = r.p99_client_queue_time_ms;
  // vLLM's `date` is a local clock time with no zone, so it gives no instant; lm-bench's export states one.
  const start = r.lm_bench_start_epoch_ms;
  if (typeof start === 'number' && Number.isFinite(start) && start > 0) d.lmb.start_epoch_ms = start;
  // A run lm-bench simulated stays a simulation, so nothing takes it for a measurement.
  if (r.lm_bench_source === 'sim') d.source = 'sim';
  recomputeFromArrays(d, r);
  const { result, meta } = buildResult(d);
  const blocks = lmBenchBlocks(r.lm_bench_energy, r.lm_bench_server_metrics, label);
  return {
    label,
    record: raw,
    result: { ...result, ...blocks },
    meta,
    hints: r.model_id === undefined ? {} : { model: r.model_id },
    ...(typeof r.lm_bench_content_hash === 'string' && /^[0-9a-f]{64}$/.test(r.lm_bench_content_hash) ? { contentHash: r.lm_bench_content_hash } : {}),
  };
}

/**
 * Fills stats the file lacks from its per-request arrays, with vLLM's definitions (population std,
 * linear percentiles, ITL pooled over all chunk gaps). Only when the arrays cover exactly the successful
 * requests: all requests succeeded, or the `errors` array says which ones did.
 */
function recomputeFromArrays(d: Draft, r: VllmServeRecord): void {
  const n = r.completed + (d.values.failed ?? 0);
  const ok = successMask(r, n);
  if (!ok) return;
  const pick = <T>(xs: readonly T[] | undefined): T[] | undefined => (xs !== undefined && xs.length === n ? xs.filter((_, i) => ok[i]) : undefined);
  const fill = (metric: 'ttft' | 'itl' | 'e2el' | 'tpot', xs: number[] | undefined, source: string): void => {
    if (xs === undefined || xs.length === 0) return;
    const s = summarize(xs, 1000);
    // A median or p50 the file states is that figure under both names (numpy: one number): the other is
    // not recomputed beside it, so only the file's own figures are compared (draft.ts medianBesideP50).
    const stated = (stat: (typeof STATS)[number]): boolean => d.values[`${stat}_${metric}_ms`] !== undefined;
    const filled = STATS.filter((stat) => !stated(stat) && !(stat === 'median' && stated('p50')) && !(stat === 'p50' && stated('median')));
    if (filled.length === 0) return;
    putStats(d, metric, Object.fromEntries(filled.map((stat) => [stat, s[stat]])));
    d.notes.push(`${filled.map((stat) => `${stat}_${metric}_ms`).join(', ')} recomputed from the per-request "${source}" array`);
  };
  fill('ttft', pick(r.ttfts), 'ttfts');
  fill('itl', pick(r.itls)?.flat(), 'itls');
  fill('e2el', pick(r.latencies), 'latencies');
  const ttfts = pick(r.ttfts);
  const lats = pick(r.latencies);
  const outs = pick(r.output_lens);
  if (ttfts && lats && outs) {
    const tpots = lats.flatMap((lat, i) => {
      const o = outs[i] ?? 0;
      return o > 1 ? [(lat - (ttfts[i] ?? 0)) / (o - 1)] : [];
    });
    fill('tpot', tpots, 'latencies/ttfts/output_lens');
  }
}

function successMask(r: VllmServeRecord, n: number): boolean[] | null {
  if (r.errors !== undefined && r.errors.length === n) return r.errors.map((e) => e === null || e === '');
  if ((r.failed ?? (r.num_prompts !== undefined ? r.num_prompts - r.completed : undefined)) === 0) return Array.from({ length: n }, () => true);
  return null;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
