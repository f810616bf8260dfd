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
  /**
   * The rates the tool that wrote the file defines exactly as a figure of the same file over its
   * duration (`vllm bench serve`: request_throughput = completed / duration), and the tool's name for
   * the message. Only a parser that knows its tool's definition sets it; a file whose figures
   * contradict it is refused (`contradictingRate`). Absent: no definition is assumed.
   */
  rateDefinitions?: { readonly tool: string; readonly rates: readonly DefinedRate[]; readonly fileNames?: Readonly<Partial<Record<NumericKey, string>>> } | undefined;
}

/** A rate some tools define as a count of the run over its duration (`RATE_NUMERATOR`). */
export type DefinedRate = 'request_throughput' | 'output_throughput' | 'total_token_throughput';

/** The counts whose sum over the duration is each rate, where a tool defines it so. */
const RATE_NUMERATOR: Readonly<Record<DefinedRate, readonly NumericKey[]>> = {
  request_throughput: ['completed'],
  output_throughput: ['total_output_tokens'],
  total_token_throughput: ['total_input_tokens', 'total_output_tokens'],
};

/** The three rates as `vllm bench serve` defines them (vllm/benchmarks/serve.py calculate_metrics, dur_s the run's duration). */
export const VLLM_RATES: readonly DefinedRate[] = ['request_throughput', 'output_throughput', 'total_token_throughput'];

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
 * field, so a corrupt run never reaches the training set. So is a negative one (every key here is a
 * duration, a count, a rate or a latency statistic, none of which a tool can measure below 0), and one
 * beyond what any run reaches (a TTFT of 1e300 ms): `impossibleFigure`.
 */
export function put(d: Draft, key: NumericKey, v: number | null | undefined): void {
  if (typeof v !== 'number') return;
  const wrong = impossibleFigure(key, v);
  if (wrong !== null) throw rejected(`${at(d)}${key}: ${wrong}`);
  d.values[key] = v;
}

const MS_PER_WEEK = 7 * 24 * 3600 * 1000;
const S_PER_YEAR = 366 * 24 * 3600;
/**
 * Upper bounds no measurement of one deployment reaches, far above any real run so that none is refused:
 * a request answered after a week has timed out long before; a benchmark does not run for a year; the
 * busiest public fleets serve some 10⁸ tokens/s in all, so 10¹⁰ tokens/s or 10⁷ requests/s from one
 * benchmark client is a figure in another unit, a corrupt file or a hand edit. A count beyond 2⁵³ is no
 * longer exact as a number.
 */
const UPPER_BOUND: Readonly<Partial<Record<NumericKey, { max: number; what: string }>>> = {
  duration: { max: S_PER_YEAR, what: 'a year (in seconds)' },
  request_throughput: { max: 1e7, what: '10⁷ requests/s' },
  output_throughput: { max: 1e10, what: '10¹⁰ tokens/s' },
  total_token_throughput: { max: 1e10, what: '10¹⁰ tokens/s' },
  max_output_tokens_per_s: { max: 1e10, what: '10¹⁰ tokens/s' },
};
const COUNT_KEYS: readonly NumericKey[] = ['completed', 'failed', 'total_input_tokens', 'total_output_tokens', 'max_concurrent_requests'];

/**
 * Why a figure cannot have been measured, or null: non-finite, negative (every key is a duration, a
 * count, a rate or a latency statistic; -0 is 0 and kept as written), or beyond `UPPER_BOUND` (a
 * latency statistic beyond a week). Shared by every format's parser and lm-bench's own results.
 */
export function impossibleFigure(key: NumericKey | `${string}_ms`, v: number): string | null {
  if (!Number.isFinite(v)) return `${String(v)} is not a measurement (a finite number is needed)`;
  if (v < 0) return `${v} is negative, which no tool measures (a duration, count, rate or latency is ≥ 0)`;
  const bound = key.endsWith('_ms') ? { max: MS_PER_WEEK, what: 'a week (in ms)' } : UPPER_BOUND[key as NumericKey];
  if (bound !== undefined && v > bound.max) return `${v} is beyond ${bound.what}, which no run measures (another unit, or a corrupt figure?)`;
  if (COUNT_KEYS.includes(key as NumericKey) && v > Number.MAX_SAFE_INTEGER) return `${v} is beyond 2^53, which no run counts (a corrupt figure?)`;
  return null;
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
 * Half a unit of the last decimal a figure was written with ("0.21" ± 0.005), so a rate and a duration a
 * tool or a person rounded are compared as the intervals they stand for. Counts are exact.
 */
function roundingOf(key: NumericKey, x: number): number {
  if (COUNT_KEYS.includes(key)) return 0;
  const m = /^\d+(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(Math.abs(x)));
  if (m === null) return 0;
  const decimals = (m[1]?.length ?? 0) - Number(m[2] ?? 0);
  return 0.5 * 10 ** -decimals;
}

/** Relative slack for floating-point arithmetic on figures written in full. */
const FLOAT_SLACK = 1e-6;

/**
 * The first rate of `d.rateDefinitions` whose stated figure contradicts its definition (count(s) /
 * duration) beyond the rounding of the figures as written, in words, or null. Each side is an interval
 * (`roundingOf`); they must overlap. Only figures the file states are compared: run before derivations.
 */
export function contradictingRate(d: Draft): string | null {
  const def = d.rateDefinitions;
  const v = d.values;
  const dur = v.duration;
  if (def === undefined) return null;
  if (dur === undefined) return contradictingDurations(def, v);
  if (dur <= 0) return null;
  for (const rate of def.rates) {
    const stated = v[rate];
    const parts = RATE_NUMERATOR[rate];
    const counts = parts.map((k) => v[k]);
    if (stated === undefined || counts.some((c) => c === undefined)) continue;
    const num = counts.reduce<number>((a, c) => a + (c ?? 0), 0);
    const numErr = parts.reduce((a, k) => a + roundingOf(k, v[k] ?? 0), 0);
    const durErr = roundingOf('duration', dur);
    const lo = (num - numErr) / (dur + durErr);
    const hi = dur - durErr > 0 ? (num + numErr) / (dur - durErr) : Infinity;
    const statedErr = roundingOf(rate, stated);
    if (stated + statedErr >= lo * (1 - FLOAT_SLACK) && stated - statedErr <= hi * (1 + FLOAT_SLACK)) continue;
    // The file's own key names, so the user finds the figures in it.
    const name = (k: NumericKey): string => def.fileNames?.[k] ?? k;
    const numText = parts.length === 1 ? `${name(parts[0] ?? rate)} ${num}` : `(${parts.map((k) => `${name(k)} ${v[k] ?? 0}`).join(' + ')})`;
    const formula = parts.length === 1 ? name(parts[0] ?? rate) : `(${parts.map(name).join(' + ')})`;
    return `${name(rate)} ${stated} contradicts ${numText} / ${name('duration')} ${dur} s = ${Number((num / dur).toPrecision(6))}: ${def.tool} defines ${name(rate)} as ${formula} / ${name('duration')}, so one of these figures is not what it measured (edited, or from another run?)`;
  }
  return null;
}

/**
 * For a file that states no duration (vLLM's benchmark tables): each defined rate with its count(s)
 * implies the run's duration, count / rate; all rates are over the same duration, so those implied
 * durations (intervals, for rounding) must overlap. The first pair that does not, in words, or null.
 */
function contradictingDurations(def: NonNullable<Draft['rateDefinitions']>, v: Draft['values']): string | null {
  const name = (k: NumericKey): string => def.fileNames?.[k] ?? k;
  const implied = def.rates.flatMap((rate) => {
    const stated = v[rate];
    const parts = RATE_NUMERATOR[rate];
    if (stated === undefined || parts.some((k) => v[k] === undefined)) return [];
    const num = parts.reduce((a, k) => a + (v[k] ?? 0), 0);
    const numErr = parts.reduce((a, k) => a + roundingOf(k, v[k] ?? 0), 0);
    const sErr = roundingOf(rate, stated);
    const lo = (num - numErr) / (stated + sErr);
    const hi = stated - sErr > 0 ? (num + numErr) / (stated - sErr) : Infinity;
    const what = `${name(rate)} ${stated} with ${parts.map((k) => `${name(k)} ${v[k] ?? 0}`).join(' + ')}`;
    return [{ lo, hi, s: stated > 0 ? num / stated : Infinity, what }];
  });
  for (const [i, a] of implied.entries()) {
    for (const b of implied.slice(i + 1)) {
      if (a.lo <= b.hi * (1 + FLOAT_SLACK) && b.lo <= a.hi * (1 + FLOAT_SLACK)) continue;
      const secs = (x: number): string => (Number.isFinite(x) ? `${Number(x.toPrecision(6))} s` : 'no finite time');
      return `${a.what} imply a run of ${secs(a.s)}, ${b.what} one of ${secs(b.s)}: ${def.tool} measures both rates over the same duration, so one of these figures is not what it measured (edited, or from another run?)`;
    }
  }
  return null;
}

/**
 * A median and a p50 of one metric that the file states both and that differ beyond their rounding, in
 * words, or null. With linear percentiles (numpy, vLLM) the median is the 50th percentile, one number
 * under two names; nearest-rank tools (GuideLLM) may differ by a rank, so only 'linear' drafts are held.
 */
function medianBesideP50(d: Draft): string | null {
  if (d.percentileMethod !== 'linear') return null;
  for (const m of ['ttft', 'tpot', 'itl', 'e2el'] as const) {
    const med = d.values[`median_${m}_ms`];
    const p50 = d.values[`p50_${m}_ms`];
    if (med === undefined || p50 === undefined) continue;
    const slack = roundingOf(`median_${m}_ms`, med) + roundingOf(`p50_${m}_ms`, p50) + FLOAT_SLACK * Math.max(med, p50);
    if (Math.abs(med - p50) > slack) return `median_${m}_ms ${med} and p50_${m}_ms ${p50} differ: with linear percentiles the median is the 50th percentile, so one of them is not what the tool measured (mislabelled or edited?)`;
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
  // Before any derivation, so only the file's own figures are held to the tool's definitions.
  const contradiction = contradictingRate(d) ?? medianBesideP50(d);
  if (contradiction !== null) throw rejected(`${at(d)}${contradiction}`);
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
