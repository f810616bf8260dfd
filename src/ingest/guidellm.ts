import { z } from 'zod';
import { summarize } from '../metrics/index.js';
import { RawNum, buildResult, newDraft, parseRaw, put, putStats, type Draft } from './draft.js';
import type { ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * GuideLLM benchmark reports (docs/references/load-runners.md#guidellm-reports): v0.3 `{"benchmarks": […]}`, v0.4 with `args`,
 * v0.5–v0.6 with `metadata.version` 1, v0.7+ with `metadata.version` 2 and a `config` block.
 *
 * Metric meanings are re-mapped to vLLM's (docs/references/load-runners.md#metric-names-across-tools):
 * - TTFT ← `time_to_first_token_ms`; E2EL ← `request_latency` (s → ms; GuideLLM ends at the request end).
 * - TPOT ← `inter_token_latency_ms` (per request (last − first token)/(n_out − 1): vLLM's TPOT).
 *   GuideLLM's `time_per_output_token_ms` includes TTFT and has no vLLM counterpart: not used.
 * - ITL (vLLM's pooled chunk gaps) is not recorded by GuideLLM: unavailable.
 * - GuideLLM percentiles are nearest-rank over a weighted PMF (TPOT weighted by n_out − 1), vLLM's are
 *   linear and unweighted. When the report keeps every successful request, the TTFT, TPOT and E2EL
 *   stats are recomputed from them with vLLM's definitions; otherwise the distributions are copied and
 *   the run is marked `percentile_method: nearest_rank`.
 */
const count = z.int().nonnegative();

const Dist = z.looseObject({
  mean: RawNum,
  median: RawNum.optional(),
  std_dev: RawNum.optional(),
  max: RawNum.optional(),
  count: z.number().optional(),
  total_sum: RawNum.optional(),
  percentiles: z.looseObject({ p50: RawNum.optional(), p90: RawNum.optional(), p95: RawNum.optional(), p99: RawNum.optional() }).optional(),
});
type Dist = z.infer<typeof Dist>;
const StatusDist = z.looseObject({ successful: Dist });
const Totals = z.looseObject({ successful: count, errored: count, incomplete: count.optional(), total: count.optional() });
const Strategy = z.looseObject({
  type_: z.string(),
  rate: RawNum.nullable().optional(),
  streams: z.int().positive().nullable().optional(),
  max_concurrency: z.int().positive().nullable().optional(),
});
const RequestStats = z.looseObject({
  time_to_first_token_ms: RawNum.nullable().optional(),
  inter_token_latency_ms: RawNum.nullable().optional(),
  request_latency: RawNum.nullable().optional(),
  output_tokens: z.number().nullable().optional(),
});

const Benchmark = z.looseObject({
  config: z.looseObject({ strategy: Strategy.optional() }).optional(),
  args: z.looseObject({ strategy: Strategy.optional() }).optional(),
  run_stats: z.looseObject({ requests_made: Totals.optional() }).optional(),
  scheduler_metrics: z.looseObject({ requests_made: Totals.optional() }).optional(),
  request_totals: Totals.optional(),
  metrics: z.looseObject({
    request_totals: Totals.optional(),
    requests_per_second: StatusDist,
    request_concurrency: StatusDist.optional(),
    request_latency: StatusDist,
    prompt_token_count: StatusDist.optional(),
    output_token_count: StatusDist.optional(),
    time_to_first_token_ms: StatusDist,
    inter_token_latency_ms: StatusDist,
    output_tokens_per_second: StatusDist,
    tokens_per_second: StatusDist.optional(),
  }),
  requests: z.looseObject({ successful: z.array(RequestStats).nullable().optional() }).nullable().optional(),
  start_time: RawNum.optional(),
  end_time: RawNum.optional(),
  duration: RawNum.optional(),
});

const Report = z.looseObject({
  metadata: z.looseObject({ version: z.int().positive() }).optional(),
  args: z.record(z.string(), z.unknown()).optional(),
  benchmarks: z.array(z.unknown()).min(1),
});

export function isGuidellmReport(v: unknown): v is Record<string, unknown> {
  return isObject(v) && Array.isArray(v['benchmarks']);
}

export function guidellmVersion(report: z.infer<typeof Report>): string {
  const v = report.metadata?.version;
  if (v === 1) return 'v0.5–v0.6 (metadata version 1)';
  if (v === 2) return 'v0.7+ (metadata version 2)';
  if (v !== undefined) return `metadata version ${v}`;
  return report.args !== undefined ? 'v0.4' : 'v0.3';
}

export function parseGuidellmReport(raw: unknown): { runs: ParsedRun[]; warnings: string[] } {
  const report = parseRaw(Report, raw, 'report');
  const version = guidellmVersion(report);
  const warnings = (report.metadata?.version ?? 0) > 2 ? [`GuideLLM report ${version} is newer than the versions lm-bench knows; parsed as v0.7`] : [];
  const runs = report.benchmarks.map((b, i) => parseBenchmark(raw as Record<string, unknown>, b, `benchmarks[${i}]`, version));
  return { runs, warnings };
}

function parseBenchmark(top: Record<string, unknown>, raw: unknown, label: string, version: string): ParsedRun {
  const b = parseRaw(Benchmark, raw, label);
  const m = b.metrics;
  const totals = m.request_totals ?? b.request_totals ?? b.scheduler_metrics?.requests_made ?? b.run_stats?.requests_made;
  const d = newDraft('nearest_rank', label);
  d.notes.push(`GuideLLM ${version}`);
  d.backend = 'openai';
  d.endpoint_type = 'openai';
  const model = firstString([
    [top, 'args', 'model'],
    [top, 'config', 'spec', 'backend', 'model'],
    [raw, 'config', 'backend', 'model'],
    [raw, 'config', 'requests', 'model'],
    [raw, 'worker', 'backend_model'],
  ]);
  d.model_id = model;
  if (totals) {
    put(d, 'completed', totals.successful);
    put(d, 'failed', totals.errored);
    if ((totals.incomplete ?? 0) > 0) d.notes.push(`${totals.incomplete ?? 0} incomplete requests (cut off at the end) are counted neither completed nor failed`);
  }
  const duration = b.duration ?? (b.start_time !== undefined && b.end_time !== undefined ? b.end_time - b.start_time : undefined);
  put(d, 'duration', duration);
  if (b.start_time !== undefined) d.lmb = { start_epoch_ms: b.start_time * 1000 };
  const inTokens = tokenTotal(m.prompt_token_count?.successful);
  const outTokens = tokenTotal(m.output_token_count?.successful);
  put(d, 'total_input_tokens', inTokens);
  put(d, 'total_output_tokens', outTokens);
  throughputs(d, m, { successful: totals?.successful, duration, inTokens, outTokens });
  put(d, 'max_concurrent_requests', m.request_concurrency?.successful.max);
  strategy(d, b.config?.strategy ?? b.args?.strategy);

  const recomputed = recompute(d, b.requests?.successful ?? null, totals?.successful);
  if (!recomputed) {
    putStats(d, 'ttft', distStats(m.time_to_first_token_ms.successful, 1));
    putStats(d, 'tpot', distStats(m.inter_token_latency_ms.successful, 1));
    putStats(d, 'e2el', distStats(m.request_latency.successful, 1000));
    d.notes.push('tpot stats from GuideLLM inter_token_latency_ms (weighted by n_out − 1; equal to vLLM TPOT stats when output lengths are equal)');
  }
  d.notes.push('itl unavailable: GuideLLM does not record vLLM\'s pooled inter-chunk gaps');
  const { result, meta } = buildResult(d);
  return { label, record: raw, result, meta, hints: model === undefined ? {} : { model } };
}

/**
 * Throughputs as vLLM defines them, over the benchmark's duration: successful requests / duration and
 * token totals / duration. GuideLLM's `requests_per_second` and `*_tokens_per_second` are
 * distributions of instantaneous rates over time; their means are not the measured rate (a run with
 * 29 requests in 180 s has a rate-distribution mean of 0.120 where 29/180 = 0.161), so they are used
 * only when the count or the duration is missing, and noted.
 */
interface Measured {
  readonly successful: number | undefined;
  readonly duration: number | undefined;
  readonly inTokens: number | undefined;
  readonly outTokens: number | undefined;
}

function throughputs(d: Draft, m: z.infer<typeof Benchmark>['metrics'], { successful, duration, inTokens, outTokens }: Measured): void {
  const perS = (x: number | undefined): number | undefined => (x === undefined || duration === undefined || duration <= 0 ? undefined : x / duration);
  const req = perS(successful);
  const out = perS(outTokens);
  const total = inTokens !== undefined && outTokens !== undefined ? perS(inTokens + outTokens) : undefined;
  put(d, 'request_throughput', req ?? m.requests_per_second.successful.mean);
  put(d, 'output_throughput', out ?? m.output_tokens_per_second.successful.mean);
  put(d, 'total_token_throughput', total ?? m.tokens_per_second?.successful.mean);
  if (req !== undefined) d.notes.push('request_throughput = successful / duration, output and total token throughput = token totals / duration (vLLM\'s definitions; GuideLLM\'s rate-distribution means are not the measured rate)');
  else d.notes.push('request_throughput and token throughputs are GuideLLM\'s rate-distribution means: the report lacks the request count or the duration');
}

/** vLLM-style stats from the per-request records, when the report kept all successful requests. */
function recompute(d: Draft, reqs: z.infer<typeof RequestStats>[] | null, successful: number | undefined): boolean {
  if (reqs === null || successful === undefined || successful === 0 || reqs.length !== successful) return false;
  const ttft: number[] = [];
  const e2el: number[] = [];
  const tpot: number[] = [];
  for (const r of reqs) {
    if (typeof r.time_to_first_token_ms !== 'number' || typeof r.request_latency !== 'number') return false;
    ttft.push(r.time_to_first_token_ms);
    e2el.push(r.request_latency);
    const nOut = r.output_tokens;
    if (typeof r.inter_token_latency_ms === 'number' && (nOut === undefined || nOut === null || nOut > 1)) tpot.push(r.inter_token_latency_ms);
  }
  putStats(d, 'ttft', summarize(ttft));
  putStats(d, 'e2el', summarize(e2el, 1000));
  // TPOT is per request over its tokens after the first: with none (max_tokens 1, a prefill benchmark)
  // there is no sample, and summarize's empty-sample 0 would be stored as a measured 0 ms.
  if (tpot.length > 0) putStats(d, 'tpot', summarize(tpot));
  else d.notes.push('tpot unavailable: no successful request produced more than one output token');
  d.percentileMethod = 'linear';
  d.notes.push('ttft, tpot (from inter_token_latency_ms) and e2el stats recomputed from all successful per-request records, vLLM-style');
  return true;
}

function distStats(s: Dist, scale: number) {
  // A distribution over no sample (count 0: no request with a second token, say) measured nothing; its 0s stay unavailable.
  if (s.count === 0) return {};
  const p = s.percentiles ?? {};
  const sc = (x: number | undefined) => (x === undefined ? undefined : x * scale);
  return { mean: sc(s.mean), median: sc(s.median ?? p.p50), std: sc(s.std_dev), p50: sc(p.p50 ?? s.median), p90: sc(p.p90), p95: sc(p.p95), p99: sc(p.p99) };
}

function tokenTotal(s: Dist | undefined): number | undefined {
  if (!s) return undefined;
  const total = s.total_sum ?? (s.count !== undefined ? s.mean * s.count : undefined);
  return total === undefined ? undefined : Math.round(total);
}

function strategy(d: Draft, s: z.infer<typeof Strategy> | undefined): void {
  if (!s) return;
  switch (s.type_) {
    case 'synchronous':
      d.request_rate = Infinity;
      d.max_concurrency = 1;
      return;
    case 'concurrent':
      d.request_rate = Infinity;
      d.max_concurrency = s.streams ?? null;
      return;
    case 'throughput':
      d.request_rate = Infinity;
      d.max_concurrency = s.max_concurrency ?? null;
      return;
    case 'poisson':
      d.request_rate = s.rate ?? undefined;
      d.burstiness = 1;
      return;
    case 'constant':
      // Evenly spaced arrivals: a gamma process with infinite shape in vLLM's terms.
      d.request_rate = s.rate ?? undefined;
      d.burstiness = Infinity;
      return;
    default:
      d.notes.push(`unknown GuideLLM strategy "${s.type_}": request_rate unavailable`);
  }
}

function firstString(paths: [unknown, ...string[]][]): string | undefined {
  for (const [root, ...keys] of paths) {
    let cur: unknown = root;
    for (const k of keys) cur = isObject(cur) ? cur[k] : undefined;
    if (typeof cur === 'string' && cur !== '') return cur;
  }
  return undefined;
}
