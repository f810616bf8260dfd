import { z } from 'zod';
import { RawNum, buildResult, newDraft, parseRaw, put, putStats, type Draft } from './draft.js';
import type { ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * kubernetes-sigs/inference-perf lifecycle reports (`reports-<time>/summary_lifecycle_metrics.json`,
 * `stage_N_lifecycle_metrics.json`; inference_perf/reportgen/base.py `summarize_requests`), as JSON, or
 * YAML where a tool converted one: `load_summary{count, send_duration, requested_rate, achieved_rate}`,
 * `successes{count, latency{…}, throughput{…}, prompt_len, output_len}`, `failures{count}`, and from
 * 2026 `benchmark_time_seconds`. Latencies are in seconds, as `{mean, min, median, p0.1…p99.9, max}`
 * (numpy linear percentiles; no std). Meanings against vLLM's:
 * - TTFT ← `time_to_first_token`; E2EL ← `request_latency`;
 * - TPOT ← `time_per_output_token` (per request (last − first token time)/(n − 1): vLLM's TPOT);
 * - ITL ← `inter_token_latency` (gaps pooled over all requests: vLLM's ITL);
 *   `normalized_time_per_output_token` (latency / n) has no vLLM counterpart and is not kept.
 * - completed ← `successes.count`, failed ← `failures.count`; duration ← `benchmark_time_seconds`, else
 *   successes / `requests_per_sec` (inference-perf divides by the same span); token totals ← token
 *   rates × duration (the rates are token sums over that span).
 * The report names no model, GPU or server config (they are in the run's config.yaml): `--model` etc.
 */
const Stat = z.looseObject({ mean: RawNum, median: RawNum.nullable().optional(), p90: RawNum.nullable().optional(), p95: RawNum.nullable().optional(), p99: RawNum.nullable().optional() });
type Stat = z.infer<typeof Stat>;
const count = z.int().nonnegative();

export const LifecycleReport = z.looseObject({
  benchmark_time_seconds: RawNum.optional(),
  load_summary: z.looseObject({ count: count.optional(), requested_rate: RawNum.nullable().optional(), achieved_rate: RawNum.nullable().optional(), send_duration: RawNum.nullable().optional() }).optional(),
  successes: z.looseObject({
    count,
    latency: z.looseObject({
      request_latency: Stat.nullable().optional(),
      time_to_first_token: Stat.nullable().optional(),
      time_per_output_token: Stat.nullable().optional(),
      inter_token_latency: Stat.nullable().optional(),
    }),
    throughput: z.looseObject({
      input_tokens_per_sec: RawNum.nullable().optional(),
      output_tokens_per_sec: RawNum,
      total_tokens_per_sec: RawNum.nullable().optional(),
      requests_per_sec: RawNum,
    }),
  }),
  failures: z.looseObject({ count }).nullable().optional(),
});

export function isInferencePerfReport(v: unknown): v is Record<string, unknown> {
  return isObject(v) && isObject(v['successes']) && ('load_summary' in v || 'failures' in v) && isObject(v['successes']['latency']);
}

export function parseInferencePerfReport(raw: unknown, label: string, fileName: string): ParsedRun {
  const r = parseRaw(LifecycleReport, raw, label);
  const s = r.successes;
  const d = newDraft('linear', label);
  d.backend = 'openai';
  d.endpoint_type = 'openai';
  const stage = /stage_(\d+)_lifecycle/.exec(fileName)?.[1];
  d.label = stage === undefined ? 'summary' : `stage ${stage}`;
  // summarize_requests: requests_per_sec = successes / total_time, and benchmark_time_seconds is that
  // total_time (last end − first start). Its token rates are not held to token totals: the report's
  // output_tokens.total may be the server's count where the rate uses the client's.
  if (r.benchmark_time_seconds !== undefined) {
    d.rateDefinitions = {
      tool: 'inference-perf',
      rates: ['request_throughput'],
      fileNames: { completed: 'successes.count', duration: 'benchmark_time_seconds', request_throughput: 'successes.throughput.requests_per_sec' },
    };
  }
  put(d, 'completed', s.count);
  if (r.failures !== undefined && r.failures !== null) put(d, 'failed', r.failures.count);
  const duration = r.benchmark_time_seconds ?? (s.throughput.requests_per_sec > 0 ? s.count / s.throughput.requests_per_sec : undefined);
  put(d, 'duration', duration);
  if (r.benchmark_time_seconds === undefined) d.notes.push('duration = successes.count / requests_per_sec (inference-perf\'s own span)');
  put(d, 'request_throughput', s.throughput.requests_per_sec);
  put(d, 'output_throughput', s.throughput.output_tokens_per_sec);
  put(d, 'total_token_throughput', s.throughput.total_tokens_per_sec ?? undefined);
  if (duration !== undefined) {
    const inRate = s.throughput.input_tokens_per_sec;
    if (typeof inRate === 'number') put(d, 'total_input_tokens', Math.round(inRate * duration));
    put(d, 'total_output_tokens', Math.round(s.throughput.output_tokens_per_sec * duration));
    d.notes.push('token totals = token rate × duration');
  }
  const lat = s.latency;
  putSeconds(d, 'ttft', lat.time_to_first_token);
  putSeconds(d, 'tpot', lat.time_per_output_token);
  putSeconds(d, 'itl', lat.inter_token_latency);
  putSeconds(d, 'e2el', lat.request_latency);
  const ls = r.load_summary;
  if (typeof ls?.requested_rate === 'number' && ls.requested_rate > 0) d.request_rate = ls.requested_rate;
  d.notes.push(`inference-perf lifecycle report (${d.label}); std deviations not reported; arrival process (constant or Poisson) is in the run's config.yaml, not here`);
  const { result, meta } = buildResult(d);
  return { label, record: raw, result, meta, hints: {} };
}

function putSeconds(d: Draft, metric: 'ttft' | 'tpot' | 'itl' | 'e2el', st: Stat | null | undefined): void {
  if (!st) return;
  const ms = (x: number | null | undefined) => (typeof x === 'number' ? x * 1000 : undefined);
  putStats(d, metric, { mean: ms(st.mean), median: ms(st.median), p50: ms(st.median), p90: ms(st.p90), p95: ms(st.p95), p99: ms(st.p99) });
}
