import { z } from 'zod';
import { aiperfEnergy } from './aiperf-energy.js';
import { RawNum, buildResult, newDraft, parseRaw, put, putStats } from './draft.js';
import { rejected } from './json-text.js';
import type { ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * genai-perf `profile_export_genai_perf.json` (loadrunner §3, §9.3): one object per metric with `unit`,
 * `avg`, `p1…p99`, `min`, `max`, `std`, plus `input_config` (the arguments). Metric meanings:
 * - TTFT ← `time_to_first_token`; E2EL ← `request_latency`.
 * - TPOT ← `inter_token_latency`, which genai-perf defines per request as (latency − TTFT)/(osl − 1):
 *   vLLM's TPOT, not its ITL. vLLM's pooled ITL is not exported: unavailable.
 * - Percentiles are linear and std population, as in vLLM; median = p50.
 * - Output tokens are counted by the client tokenizer, not the server's `usage` (noted).
 * Request and error counts are not exported; `completed` comes from `input_config.request_count` when
 * present, and token totals from it times the mean sequence lengths. AIPerf's exports share this shape;
 * their GPU telemetry, when present, becomes the `energy` block (ingest/aiperf-energy.ts).
 */
const Metric = z.looseObject({
  unit: z.string().optional(),
  avg: RawNum,
  p50: RawNum.optional(),
  p90: RawNum.optional(),
  p95: RawNum.optional(),
  p99: RawNum.optional(),
  std: RawNum.optional(),
  max: RawNum.optional(),
});
type Metric = z.infer<typeof Metric>;
const Avg = z.looseObject({ unit: z.string().optional(), avg: RawNum });

const Export = z.looseObject({
  request_throughput: Avg,
  request_latency: Metric,
  time_to_first_token: Metric.optional(),
  inter_token_latency: Metric.optional(),
  output_token_throughput: Avg,
  request_goodput: Avg.optional(),
  output_sequence_length: Metric.optional(),
  input_sequence_length: Metric.optional(),
  input_config: z.record(z.string(), z.unknown()).optional(),
});

export function isGenaiPerfExport(v: unknown): v is Record<string, unknown> {
  return isObject(v) && isObject(v['request_latency']) && 'avg' in v['request_latency'] && isObject(v['request_throughput']);
}

const MS_PER_UNIT: Record<string, number> = { ms: 1, s: 1000, sec: 1000, us: 1e-3, ns: 1e-6 };

export function parseGenaiPerfExport(raw: unknown, label = 'document'): ParsedRun {
  const r = parseRaw(Export, raw, label);
  const cfg = r.input_config ?? {};
  const d = newDraft('linear');
  d.notes.push('genai-perf: tpot stats from inter_token_latency ((latency − ttft)/(osl − 1), vLLM TPOT); output tokens counted by the client tokenizer');
  const ms = (m: Metric, key: string) => {
    const f = MS_PER_UNIT[(m.unit ?? 'ms').toLowerCase()];
    if (f === undefined) throw rejected(`${label}: ${key}.unit "${m.unit ?? ''}" is not a time unit`);
    return { mean: m.avg * f, median: scale(m.p50, f), std: scale(m.std, f), p50: scale(m.p50, f), p90: scale(m.p90, f), p95: scale(m.p95, f), p99: scale(m.p99, f) };
  };
  putStats(d, 'e2el', ms(r.request_latency, 'request_latency'));
  if (r.time_to_first_token) putStats(d, 'ttft', ms(r.time_to_first_token, 'time_to_first_token'));
  if (r.inter_token_latency) putStats(d, 'tpot', ms(r.inter_token_latency, 'inter_token_latency'));
  put(d, 'request_throughput', r.request_throughput.avg);
  put(d, 'output_throughput', r.output_token_throughput.avg);
  if (r.request_goodput) d.request_goodput = r.request_goodput.avg;
  const isl = r.input_sequence_length?.avg;
  if (isl !== undefined) {
    put(d, 'total_token_throughput', r.output_token_throughput.avg + r.request_throughput.avg * isl);
    d.notes.push('total_token_throughput derived: output_token_throughput + request_throughput × mean input_sequence_length');
  }
  const requestCount = intAt(cfg, ['request_count'], ['perf_analyzer', 'stimulus', 'request_count']);
  if (requestCount !== undefined) {
    put(d, 'completed', requestCount);
    d.notes.push('completed = input_config.request_count (genai-perf exports no error count)');
    if (isl !== undefined) put(d, 'total_input_tokens', Math.round(requestCount * isl));
    const osl = r.output_sequence_length?.avg;
    if (osl !== undefined) put(d, 'total_output_tokens', Math.round(requestCount * osl));
    if (isl !== undefined || osl !== undefined) d.notes.push('token totals derived: request_count × mean sequence length');
  }
  const concurrency = intAt(cfg, ['concurrency'], ['perf_analyzer', 'stimulus', 'concurrency']);
  const rate = numAt(cfg, ['request_rate'], ['perf_analyzer', 'stimulus', 'request_rate']);
  if (rate !== undefined && rate > 0) {
    d.request_rate = rate;
    // perf_analyzer's default request distribution is constant: evenly spaced arrivals.
    const dist = strAt(cfg, ['request_distribution']);
    d.burstiness = dist === 'poisson' ? 1 : Infinity;
  } else if (concurrency !== undefined) {
    d.request_rate = Infinity;
    d.max_concurrency = concurrency;
  }
  const model = modelName(cfg);
  d.model_id = model;
  d.backend = strAt(cfg, ['service_kind'], ['endpoint', 'service_kind']) ?? 'openai';
  d.endpoint_type = strAt(cfg, ['endpoint_type'], ['endpoint', 'type']) ?? d.backend;
  // AIPerf (genai-perf's successor, same export shape) carries GPU power when run with --gpu-telemetry.
  const energy = aiperfEnergy(raw as Record<string, unknown>, d.notes);
  const { result, meta } = buildResult(d);
  return { label, record: raw, result: energy === undefined ? result : { ...result, energy }, meta, hints: model === undefined ? {} : { model } };
}

const scale = (x: number | undefined, f: number) => (x === undefined ? undefined : x * f);

function at(obj: Record<string, unknown>, path: string[]): unknown {
  let cur: unknown = obj;
  for (const k of path) cur = isObject(cur) ? cur[k] : undefined;
  return cur;
}
function numAt(obj: Record<string, unknown>, ...paths: string[][]): number | undefined {
  for (const p of paths) {
    const v = at(obj, p);
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return undefined;
}
function intAt(obj: Record<string, unknown>, ...paths: string[][]): number | undefined {
  const v = numAt(obj, ...paths);
  return v !== undefined && Number.isInteger(v) && v > 0 ? v : undefined;
}
function strAt(obj: Record<string, unknown>, ...paths: string[][]): string | undefined {
  for (const p of paths) {
    const v = at(obj, p);
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}
function modelName(cfg: Record<string, unknown>): string | undefined {
  for (const key of ['model', 'model_names']) {
    const v = cfg[key];
    if (typeof v === 'string' && v !== '') return v;
    if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
  }
  return undefined;
}
