import { z } from 'zod';
import { BenchmarkResult, STAT_KEYS, type LmbBlock, type StatKey } from '../domain/index.js';
import type { RunMeta } from '../store/index.js';
import { NON_FINITE_STRINGS, rejected } from './json-text.js';
import { dottedPath, formatZodIssues } from '../util/zod-issues.js';

/** lm-bench's version, written into the `lmb` block of ingested results. */
export const INGEST_LMB_VERSION = '0.1.0';

/** A number as benchmark tools write it: a JSON number, or "inf"/"Infinity"/"NaN" (strings after json-text). */
export const RawNum = z.union([z.number(), z.enum(NON_FINITE_STRINGS)]).transform((v): number => {
  if (typeof v === 'number') return v;
  if (v === 'Infinity' || v === 'inf') return Infinity;
  if (v === '-Infinity' || v === '-inf') return -Infinity;
  return NaN;
});

/** zod parse of a raw record; the first issue becomes the rejection reason (path: message). */
export function parseRaw<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const res = schema.safeParse(value);
  if (res.success) return res.data;
  throw rejected(`${where}: ${describeIssue(res.error, value)}`);
}

/** Every issue as "path: message", with "missing" when the input has nothing at the path. */
export function describeIssue(error: z.ZodError, input?: unknown): string {
  if (error.issues.length === 0) return 'invalid';
  const one = (issue: z.core.$ZodIssue): string => {
    const path = issue.path.map(String).join('.');
    let cur: unknown = input;
    for (const k of issue.path) cur = cur !== null && typeof cur === 'object' ? (cur as Record<PropertyKey, unknown>)[k] : undefined;
    const missing = input !== undefined && cur === undefined && issue.code !== 'unrecognized_keys';
    if (missing) return `${path === '' ? '(root)' : path}: missing`;
    // A union (RawNum: a number, or a non-finite token) says only "Invalid input": say what was expected
    // and what the file holds, so "12 ms" or "12" in quotes is seen for what it is.
    if (issue.code === 'invalid_union' && input !== undefined) {
      const expected = [...new Set(issue.errors.flat().filter((i) => i.path.length === 0 && i.code === 'invalid_type').map((i) => (i as { expected: string }).expected))];
      // YAML's .nan and .inf arrive as numbers, which z.number() refuses: the same words as put's.
      if (typeof cur === 'number' && !Number.isFinite(cur)) return `${path === '' ? '(root)' : path}: ${String(cur)} is not a measurement (a finite number is needed)`;
      if (expected.length > 0) {
        const held =
          typeof cur === 'string'
            ? `the string ${JSON.stringify(cur.length > 40 ? `${cur.slice(0, 40)}…` : cur)}`
            : cur === null
              ? 'null'
              : Array.isArray(cur)
                ? 'a list'
                : typeof cur === 'object'
                  ? 'an object'
                  : `${typeof cur} ${JSON.stringify(cur) ?? typeof cur}`;
        return `${path === '' ? '(root)' : path}: expected ${expected.map((e) => `a ${e}`).join(' or ')}, found ${held}`;
      }
    }
    return formatZodIssues([issue], undefined, (p) => (p.length === 0 ? '(root)' : dottedPath(p)));
  };
  return [...new Set(error.issues.map(one))].join('; ');
}

export const NUMERIC_KEYS = [
  'duration',
  'completed',
  'failed',
  'total_input_tokens',
  'total_output_tokens',
  'request_throughput',
  'output_throughput',
  'total_token_throughput',
  'max_output_tokens_per_s',
  'max_concurrent_requests',
  ...STAT_KEYS,
] as const;
export type NumericKey = (typeof NUMERIC_KEYS)[number];

/** What a parser knows about one run before context (server config, GPU, model) is attached. */
export interface Draft {
  values: Partial<Record<NumericKey, number>>;
  request_goodput?: number | null | undefined;
  date?: string | undefined;
  endpoint_type?: string | undefined;
  backend?: string | undefined;
  label?: string | null | undefined;
  model_id?: string | undefined;
  tokenizer_id?: string | null | undefined;
  num_prompts?: number | undefined;
  request_rate?: number | undefined;
  burstiness?: number | undefined;
  max_concurrency?: number | null | undefined;
  lmb?: Partial<Pick<LmbBlock, 'start_epoch_ms' | 'mean_client_queue_ms' | 'p99_client_queue_ms'>> | undefined;
  /**
   * 'sim' when the file says lm-bench's simulator produced it (an llm-d report lm-bench exported of a
   * simulated run): the run stays a simulation, as an lm-bench result's `lmb.source` does, so nothing
   * takes it for a measurement. Otherwise the result's source is 'ingest'.
   */
  source?: 'sim' | undefined;
  percentileMethod: RunMeta['percentile_method'];
  notes: string[];
  /** Where in the file the run is ("line 3", "benchmarks[1]"), so a rejection names the record, not only the key. */
  where?: string | undefined;
}

export function newDraft(percentileMethod: RunMeta['percentile_method'] = 'linear', where?: string): Draft {
  return { values: {}, percentileMethod, notes: [], where };
}

/** "line 3: " for messages about a draft's record ("" for a whole-file document without a label). */
function at(d: Draft): string {
  return d.where === undefined || d.where === '' ? '' : `${d.where}: `;
}

/**
 * Sets a measured value (absent or null stays absent). NaN or ±Infinity in a measurement means the
 * file is broken, not that the figure is missing: the file is rejected naming the record and the
 * field, so a corrupt run never reaches the training set. So is a negative one: every key here is a
 * duration, a count, a rate or a latency statistic, none of which a tool can measure below 0.
 */
export function put(d: Draft, key: NumericKey, v: number | null | undefined): void {
  if (typeof v !== 'number') return;
  if (!Number.isFinite(v)) throw rejected(`${at(d)}${key}: ${String(v)} is not a measurement (a finite number is needed)`);
  if (v < 0) throw rejected(`${at(d)}${key}: ${v} is negative, which no tool measures (a duration, count, rate or latency is ≥ 0)`);
  d.values[key] = v;
}

/** Puts a summary's mean/median/std/p50/p90/p95/p99 under a metric (tpot, ttft, …). */
export function putStats(d: Draft, metric: 'ttft' | 'tpot' | 'itl' | 'e2el', s: Partial<Record<'mean' | 'median' | 'std' | 'p50' | 'p90' | 'p95' | 'p99', number | null | undefined>>): void {
  for (const stat of ['mean', 'median', 'std', 'p50', 'p90', 'p95', 'p99'] as const) put(d, `${stat}_${metric}_ms` satisfies StatKey, s[stat]);
}

/** a ≤ b, allowing for a tool's rounding (2 decimals in CSV exports round both sides the same way). */
export const atMost = (a: number, b: number): boolean => a <= b * (1 + 1e-6) + 1e-6;

/**
 * The first pair of a metric's percentiles that falls (p50 > p90, or p95 > p99…), in words, or null:
 * percentiles of one sample rise with the percentile whatever the tool and its percentile method, so
 * such a file has them under the wrong names. Zeros are vLLM's value for a metric with no sample and are
 * not compared. Ingest and the command target's harness results both refuse on it.
 */
export function fallingPercentiles(v: Readonly<Partial<Record<StatKey, number>>>): string | null {
  for (const m of ['ttft', 'tpot', 'itl', 'e2el'] as const) {
    const rising = (['p50', 'p90', 'p95', 'p99'] as const).flatMap((s) => {
      const x = v[`${s}_${m}_ms`];
      return x === undefined || x === 0 ? [] : [{ key: `${s}_${m}_ms`, x }];
    });
    for (const [i, high] of rising.entries()) {
      const low = rising[i - 1];
      if (low !== undefined && !atMost(low.x, high.x)) return `${low.key} ${low.x} is above ${high.key} ${high.x}: a higher percentile cannot be lower (percentiles mislabelled?)`;
    }
  }
  return null;
}

/**
 * What a file's figures say about each other, refused rather than stored when they cannot both be
 * measured (a number stored wrong is worse than a file rejected): a run that completed requests took
 * time, and its percentiles rise (`fallingPercentiles`). (E2EL ≥ TTFT would catch more, but genai-perf's
 * own exporter test output, test/fixtures/ingest/genai-perf/csv-exporter-test, breaks it with made-up
 * figures.)
 */
function checkFigures(d: Draft, v: Draft['values']): void {
  // Requests that completed took time: a duration of 0 is a missing figure written as 0, or another
  // unit rounded away, and every rate derived from it would be infinite.
  if (v.duration === 0 && (v.completed ?? 0) > 0) throw rejected(`${at(d)}duration: 0 s with ${v.completed ?? 0} completed requests is not a measured duration`);
  const falling = fallingPercentiles(v);
  if (falling !== null) throw rejected(`${at(d)}${falling}`);
}

const toRate = (v: number | undefined): number | 'inf' | undefined => (v === undefined ? undefined : v === Infinity ? 'inf' : v);

/**
 * Draft → a schema-valid BenchmarkResult plus its RunMeta. Exact derivations fill what follows by
 * definition (median = p50 in numpy; duration = completed / request_throughput; total throughput =
 * (input + output tokens) / duration; num_prompts = completed + failed); each is noted. Whatever is
 * still missing is written as 0 — vLLM's own value for an empty sample — and listed as unavailable.
 * The result fails with LMB_ERR_INGEST_REJECTED when it does not satisfy the schema.
 */
export function buildResult(d: Draft): { result: BenchmarkResult; meta: RunMeta } {
  const v = d.values;
  const notes = [...d.notes];
  const derive = (key: NumericKey, value: number | undefined, how: string): void => {
    if (v[key] === undefined && value !== undefined && Number.isFinite(value)) {
      v[key] = value;
      notes.push(`${key} derived: ${how}`);
    }
  };
  for (const m of ['ttft', 'tpot', 'itl', 'e2el'] as const) {
    const med = v[`median_${m}_ms`];
    const p50 = v[`p50_${m}_ms`];
    if (med === undefined && p50 !== undefined) v[`median_${m}_ms`] = p50;
    if (p50 === undefined && med !== undefined) v[`p50_${m}_ms`] = med;
  }
  if (v.completed !== undefined && v.request_throughput !== undefined && v.request_throughput > 0) {
    derive('duration', v.completed / v.request_throughput, 'completed / request_throughput');
  }
  if (v.duration !== undefined && v.duration > 0 && v.total_input_tokens !== undefined && v.total_output_tokens !== undefined) {
    derive('total_token_throughput', (v.total_input_tokens + v.total_output_tokens) / v.duration, '(total_input_tokens + total_output_tokens) / duration');
  }

  checkFigures(d, v);

  const unavailable: string[] = [];
  const metrics = {} as Record<NumericKey, number>;
  for (const key of NUMERIC_KEYS) {
    const x = v[key];
    if (x === undefined) unavailable.push(key);
    metrics[key] = x ?? 0;
  }
  const str = (key: string, x: string | undefined, fallback: string): string => {
    if (x === undefined) unavailable.push(key);
    return x ?? fallback;
  };
  let numPrompts = d.num_prompts;
  if (numPrompts === undefined && v.completed !== undefined && v.failed !== undefined) {
    numPrompts = v.completed + v.failed;
    notes.push('num_prompts derived: completed + failed');
  }
  if (numPrompts === undefined) unavailable.push('num_prompts');
  // A rate, a goodput or a gamma shape at or below 0 is no setting a tool runs with and no rate it measures.
  for (const [key, x, min] of [['request_rate', d.request_rate, 'positive'], ['burstiness', d.burstiness, 'positive'], ['request_goodput', d.request_goodput, 'non-negative']] as const) {
    if (typeof x === 'number' && !Number.isNaN(x) && (min === 'positive' ? x <= 0 : x < 0)) throw rejected(`${at(d)}${key}: ${x} is not ${min}`);
  }
  const requestRate = toRate(d.request_rate);
  if (requestRate === undefined) unavailable.push('request_rate');
  const burstiness = toRate(d.burstiness);
  if (burstiness === undefined) unavailable.push('burstiness');
  const lmbIn = d.lmb ?? {};
  for (const k of ['start_epoch_ms', 'mean_client_queue_ms', 'p99_client_queue_ms'] as const) {
    if (lmbIn[k] === undefined) unavailable.push(`lmb.${k}`);
  }

  const candidate = {
    ...metrics,
    request_goodput: d.request_goodput ?? null,
    date: str('date', d.date, ''),
    endpoint_type: str('endpoint_type', d.endpoint_type ?? d.backend, 'unknown'),
    backend: str('backend', d.backend ?? d.endpoint_type, 'unknown'),
    label: d.label ?? null,
    model_id: str('model_id', d.model_id, ''),
    tokenizer_id: d.tokenizer_id ?? null,
    num_prompts: numPrompts ?? 0,
    // "inf" where unknown is vLLM's default (`--request-rate inf`); listed as unavailable all the same.
    request_rate: requestRate ?? 'inf',
    burstiness: burstiness ?? 1,
    max_concurrency: d.max_concurrency ?? null,
    server_config: null,
    hardware: null,
    model: null,
    workload: null,
    slo: null,
    server_metrics: null,
    steady_state: null,
    lmb: {
      version: INGEST_LMB_VERSION,
      source: d.source ?? ('ingest' as const),
      start_epoch_ms: lmbIn.start_epoch_ms ?? 0,
      errors_by_kind: {},
      token_source_counts: {},
      mean_client_queue_ms: lmbIn.mean_client_queue_ms ?? 0,
      p99_client_queue_ms: lmbIn.p99_client_queue_ms ?? 0,
      max_loop_lag_ms: null,
      rejected: 0,
      startup_time_s: null,
    },
  };
  const res = BenchmarkResult.safeParse(candidate);
  if (!res.success) throw rejected(`${at(d)}normalised result: ${describeIssue(res.error)}`);
  return { result: res.data, meta: { unavailable, percentile_method: d.percentileMethod, notes } };
}
