import { z } from 'zod';
import { BenchmarkResult, Energy, ServerMetrics, STAT_KEYS, type ErrorSample } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';
import { atMost, buildResult, fallingPercentiles, newDraft, put, RawNum } from '../ingest/draft.js';
import { NON_FINITE_STRINGS } from '../ingest/json-text.js';
import type { TrialInput } from './types.js';

/**
 * The command-target protocol's result file → a full BenchmarkResult. A harness writes at least the
 * throughput and the TTFT, TPOT, ITL and E2EL figures under vLLM's key names (any one stat of each
 * metric), `server_metrics` when it has them; a complete lm-bench or `vllm bench serve` result is
 * accepted as it is. Missing stats are not invented: the ingest normaliser fills them with vLLM's
 * empty-sample 0 only where the harness gave none of that metric (then the file is rejected).
 *
 * What the run lost is kept, since the tuner judges a trial by it (tune/lost-requests.ts): `failed`, or,
 * when a harness gives `completed` without it, the workload's prompts that did not complete; and the
 * error texts of `vllm bench serve`'s per-request `errors` list (or an lm-bench result's own samples).
 * A harness that measured power writes lm-bench's `energy` block; one that does not match the schema is
 * left out rather than costing the trial its measurement.
 */
const Harness = z.looseObject({
  output_throughput: RawNum,
  // null: what an lm-bench result holds when the server had no /metrics.
  server_metrics: ServerMetrics.partial().nullable().optional(),
});

const REQUIRED_METRICS = ['ttft', 'tpot', 'itl', 'e2el'] as const;

/** The figures a harness may write, each a count, a duration (s), a rate or a latency statistic (ms). */
const FIGURE_KEYS = ['duration', 'completed', 'failed', 'total_input_tokens', 'total_output_tokens', 'request_throughput', 'output_throughput', 'total_token_throughput', 'max_output_tokens_per_s', 'max_concurrent_requests', ...STAT_KEYS] as const;
type FigureKey = (typeof FIGURE_KEYS)[number];
type Figures = Partial<Record<FigureKey, number>>;

function reject(message: string): LmBenchError {
  return new LmBenchError('LMB_ERR_COMMAND_FAILED', `result file: ${message}`);
}

/**
 * The figures the harness wrote, each a finite number ≥ 0 or absent (null too). Anything else under a
 * figure's key is refused naming it: read past, a string "inf" or "12.5" left the figure at the 0 an
 * absent one is stored as, and a run that wrote `"output_throughput": "inf"` was kept at 0 tok/s.
 */
function figuresOf(obj: Record<string, unknown>): Figures {
  const out: Figures = {};
  for (const key of FIGURE_KEYS) {
    const v = obj[key];
    if (v === undefined || v === null) continue;
    if (typeof v === 'string' && (NON_FINITE_STRINGS as readonly string[]).includes(v)) throw reject(`${key}: ${v} is not a measurement (a finite number is needed)`);
    if (typeof v !== 'number') throw reject(`${key}: ${JSON.stringify(v).slice(0, 60)} is not a number (write the figure as a JSON number)`);
    if (!Number.isFinite(v)) throw reject(`${key}: ${v} is not a measurement (a finite number is needed)`);
    if (v < 0) throw reject(`${key}: ${v} is negative, which no measurement is`);
    out[key] = v;
  }
  return out;
}

/** Below this an end-to-end latency is no LLM server's: an HTTP round trip and one forward pass take longer. */
const MIN_E2EL_MS = 1;

/**
 * What the figures say about each other, so a file in the wrong units or with fields swapped is refused
 * rather than stored: a number stored wrong is worse than a file rejected. Each check holds for any
 * correct run whatever its load: percentiles rise with the percentile; every request's E2EL contains its
 * TTFT, so each statistic of E2EL is at least the same one of TTFT; no request outlasts the run; vLLM's
 * throughputs are its totals over its duration; and a run that produced tokens took time to its first.
 * Zeros are vLLM's value for a figure with no sample, so they are not compared.
 */
function checkFigures(f: Figures): void {
  const falling = fallingPercentiles(f);
  if (falling !== null) throw reject(falling);
  for (const s of ['mean', 'median', 'p50', 'p90', 'p95', 'p99'] as const) {
    const ttft = f[`${s}_ttft_ms`] ?? 0;
    const e2el = f[`${s}_e2el_ms`] ?? 0;
    if (ttft > 0 && e2el > 0 && !atMost(ttft, e2el)) throw reject(`${s}_e2el_ms ${e2el} is below ${s}_ttft_ms ${ttft}; a request's end-to-end latency includes its time to first token (are they in the same unit, ms?)`);
  }
  const e2els = (['mean', 'median', 'p50', 'p90', 'p95', 'p99'] as const).map((s) => [`${s}_e2el_ms`, f[`${s}_e2el_ms`] ?? 0] as const).filter(([, v]) => v > 0);
  const longest = e2els.reduce<readonly [string, number] | null>((a, e) => (a === null || e[1] > a[1] ? e : a), null);
  if (longest !== null && longest[1] < MIN_E2EL_MS) {
    throw reject(`${longest[0]} ${longest[1]} is under ${MIN_E2EL_MS} ms, faster than any LLM server answers; latencies are milliseconds (were these written in seconds?)`);
  }
  const duration = f.duration ?? 0;
  if (longest !== null && duration > 0 && longest[1] > duration * 1000 * 1.25) {
    throw reject(`${longest[0]} ${longest[1]} ms is longer than the whole run (duration ${duration} s); latencies are milliseconds and duration seconds (were these written in µs or ns?)`);
  }
  const firstTokens = STAT_KEYS.filter((k) => k.endsWith('_ttft_ms') && (f[k] ?? 0) > 0);
  if (f.output_throughput === 0 && firstTokens.length > 0) throw reject(`output_throughput is 0 while ${firstTokens[0]} is ${f[firstTokens[0] as FigureKey]}; requests that reached their first token produced tokens`);
  if ((f.output_throughput ?? 0) > 0) {
    for (const m of ['ttft', 'e2el'] as const) {
      const given = STAT_KEYS.filter((k) => k.endsWith(`_${m}_ms`) && f[k] !== undefined);
      if (given.length > 0 && given.every((k) => f[k] === 0)) throw reject(`${given.join(', ')} ${given.length === 1 ? 'is' : 'are'} 0 while output_throughput is ${f.output_throughput}; a request that produced tokens took time to its first`);
    }
  }
  // vLLM defines them so (output_throughput = total_output_tokens / duration); a factor of 2 leaves room for any tool's rounding.
  for (const [rate, total] of [['output_throughput', 'total_output_tokens'], ['request_throughput', 'completed']] as const) {
    const r = f[rate] ?? 0;
    const t = f[total] ?? 0;
    if (r > 0 && t > 0 && duration > 0 && (r > (2 * t) / duration || r < t / duration / 2)) {
      throw reject(`${rate} ${r} /s does not match ${total} ${t} over duration ${duration} s (${(t / duration).toPrecision(4)} /s); duration is seconds and ${rate} per second`);
    }
  }
}

export function normalizeHarnessResult(raw: unknown, input: TrialInput): BenchmarkResult {
  const full = BenchmarkResult.safeParse(raw);
  const attach = (r: BenchmarkResult): BenchmarkResult => ({
    ...r,
    server_config: input.config,
    hardware: input.hardware,
    model: input.model,
    workload: input.workload,
    slo: input.slo,
  });
  if (full.success) {
    // A whole result is held to the same figures as a harness's own (the schema lets any number through).
    checkFigures(figuresOf(full.data));
    return attach(full.data);
  }
  const h = Harness.safeParse(raw);
  if (!h.success) {
    throw new LmBenchError('LMB_ERR_COMMAND_FAILED', `result file: ${formatZodIssues(h.error.issues)}: need at least output_throughput and the ttft, tpot, itl and e2el figures`);
  }
  const obj = raw as Record<string, unknown>;
  const figures = figuresOf(obj);
  const missing = REQUIRED_METRICS.filter((m) => !STAT_KEYS.some((k) => k.endsWith(`_${m}_ms`) && figures[k] !== undefined));
  if (missing.length > 0) {
    throw new LmBenchError('LMB_ERR_COMMAND_FAILED', `result file has no figure for ${missing.join(', ')} (e.g. p99_${missing[0] ?? 'ttft'}_ms)`);
  }
  checkFigures(figures);
  const d = newDraft('linear');
  const prompts = input.workload.num_prompts;
  if (figures.failed === undefined && figures.completed !== undefined && figures.completed < prompts) {
    put(d, 'failed', prompts - figures.completed);
  }
  // The protocol asks for the lost requests as `failed`; the rest of the workload's prompts completed. Left
  // at 0, a harness that reported 2 lost of 600 and no `completed` had its trial failed for losing 2 of 2.
  if (figures.completed === undefined) put(d, 'completed', Math.max(0, prompts - (figures.failed ?? 0)));
  for (const key of FIGURE_KEYS) put(d, key, figures[key]);
  d.backend = 'command';
  d.model_id = input.model;
  d.num_prompts = input.workload.num_prompts;
  const { result } = buildResult(d);
  const sm = h.data.server_metrics;
  const serverMetrics =
    sm === undefined || sm === null
      ? null
      : ServerMetrics.parse({
          kv_cache_usage_peak: null,
          kv_cache_peak_gib: null,
          kv_cache_capacity_tokens: null,
          gpu_memory_reserved_gib: null,
          num_preemptions: null,
          num_requests_running_peak: null,
          num_requests_waiting_peak: null,
          prefix_cache_hit_rate: null,
          ...sm,
        });
  const samples = errorSamplesOf(obj['errors']);
  const energy = Energy.safeParse(obj['energy']);
  return attach({
    ...result,
    server_metrics: serverMetrics,
    ...(energy.success ? { energy: energy.data } : {}),
    lmb: { ...result.lmb, source: 'loadgen', ...(samples.length === 0 ? {} : { error_samples: samples }) },
  });
}

/**
 * `vllm bench serve`'s per-request `errors` (an empty string for a request that succeeded) as error
 * samples: one per distinct message, numbers aside, most frequent first, at most five.
 */
function errorSamplesOf(raw: unknown): ErrorSample[] {
  if (!Array.isArray(raw)) return [];
  const groups = new Map<string, ErrorSample>();
  for (const e of raw) {
    if (typeof e !== 'string' || e.trim() === '') continue;
    const message = e.trim().slice(0, 500);
    const key = message.replace(/\d+(?:\.\d+)?/g, '#');
    const g = groups.get(key);
    groups.set(key, { status: null, message: g?.message ?? message, count: (g?.count ?? 0) + 1 });
  }
  return [...groups.values()].sort((a, b) => b.count - a.count).slice(0, 5);
}
