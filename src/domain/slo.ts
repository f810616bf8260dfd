import { z } from 'zod';
import { assertNever, LmBenchError } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';

/**
 * Latency service-level objectives. Aggregate keys (`ttft_p99_ms`, …) constrain a run's percentiles;
 * the tuner's goodput is the throughput of a configuration whose run meets all of them.
 * `request` holds vLLM's per-request goodput thresholds (`vllm bench serve --goodput ttft:… tpot:… e2el:…`);
 * when absent, the p99 values serve as the per-request thresholds, since "p99 TTFT ≤ T" means
 * "99% of requests have TTFT ≤ T".
 */
export const SLO_METRICS = ['ttft', 'tpot', 'itl', 'e2el'] as const;
export type SloMetric = (typeof SLO_METRICS)[number];
export const SLO_STATS = ['mean', 'p50', 'p90', 'p95', 'p99'] as const;
export type SloStat = (typeof SLO_STATS)[number];
export type SloKey = `${SloMetric}_${SloStat}_ms`;

export const SLO_KEYS: readonly SloKey[] = SLO_METRICS.flatMap((m) => SLO_STATS.map((s): SloKey => `${m}_${s}_ms`));

const limitMs = z.number().positive();
const aggregateShape = Object.fromEntries(SLO_KEYS.map((k) => [k, limitMs.optional()])) as Record<
  SloKey,
  z.ZodOptional<z.ZodNumber>
>;

export const RequestSlo = z.strictObject({
  ttft_ms: limitMs.optional(),
  tpot_ms: limitMs.optional(),
  e2el_ms: limitMs.optional(),
});
export type RequestSlo = z.infer<typeof RequestSlo>;

export const Slo = z.strictObject({ ...aggregateShape, request: RequestSlo.optional() });
export type Slo = z.infer<typeof Slo>;

/** The per-request thresholds used for `request_goodput`, or undefined when the SLO sets none. */
export function requestThresholds(slo: Slo | undefined): RequestSlo | undefined {
  if (slo === undefined) return undefined;
  const t: RequestSlo = { ...slo.request };
  if (t.ttft_ms === undefined && slo.ttft_p99_ms !== undefined) t.ttft_ms = slo.ttft_p99_ms;
  if (t.tpot_ms === undefined && slo.tpot_p99_ms !== undefined) t.tpot_ms = slo.tpot_p99_ms;
  if (t.e2el_ms === undefined && slo.e2el_p99_ms !== undefined) t.e2el_ms = slo.e2el_p99_ms;
  return Object.keys(t).length === 0 ? undefined : t;
}

/** Plain decimal, optionally signed, optionally with an exponent: `350`, `0.5`, `-1`, `2e6`. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A number a person typed (a flag, an SLO limit), or undefined when the text is not plain decimal.
 * Number() alone reads `0x10` as 16, `0b1` as 1 and `""` or `" "` as 0: a typo would pass as a value.
 */
export function readDecimal(text: string): number | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * `ttft_p99_ms=350,itl_p99_ms=50` → Slo. The text is user input (a flag), so every way it can be
 * wrong — not key=value, an unknown key, a key given twice, a value that is not a positive decimal
 * number of milliseconds — is LMB_ERR_INVALID_ARGUMENT naming the flag (`label`, `--slo` by default)
 * and the offending part, raised here where it is parsed rather than converted by each caller.
 */
export function parseSloString(text: string, at: { readonly label?: string; readonly field?: string } = {}): Slo {
  const label = at.label ?? '--slo';
  const field = at.field ?? 'slo';
  const bad = (why: string): LmBenchError => new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `${label}: ${why}`, { details: { field, value: text } });
  const obj: Record<string, number> = {};
  const parts = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (parts.length === 0) throw bad('empty; give key=value pairs such as ttft_p99_ms=350,itl_p99_ms=50');
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq <= 0 || eq === part.length - 1) throw bad(`"${part}" is not key=value (keys like ttft_p99_ms, itl_p99_ms, tpot_p99_ms, e2el_p99_ms)`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!(SLO_KEYS as readonly string[]).includes(key)) throw bad(`unknown key "${key}"; known: ${SLO_KEYS.join(', ')}`);
    // Twice is a contradiction, not an update: which of the two limits was meant cannot be told.
    if (key in obj) throw bad(`${key} is given twice (${String(obj[key])} and ${value}); give it once`);
    const num = readDecimal(value);
    if (num === undefined || num <= 0) throw bad(`${key}=${value}: the limit must be a positive number of milliseconds, in plain decimal`);
    obj[key] = num;
  }
  const res = Slo.safeParse(obj);
  if (!res.success) throw bad(formatZodIssues(res.error.issues));
  return res.data;
}

/** The aggregate keys of an SLO as `parseSloString` reads them (per-request thresholds left out). */
export function formatSloString(slo: Slo): string {
  return SLO_KEYS.filter((k) => slo[k] !== undefined).map((k) => `${k}=${String(slo[k])}`).join(',');
}

export interface SloCheck {
  readonly key: SloKey;
  readonly limitMs: number;
  readonly valueMs: number;
  readonly ok: boolean;
}

/** The metric and statistic an SLO key constrains, and the result field (vLLM's names) that holds it. */
export function sloField(key: SloKey): { metric: SloMetric; stat: SloStat; field: string } {
  const [metric, stat] = key.split('_') as [SloMetric, SloStat];
  return { metric, stat, field: stat === 'p50' ? `median_${metric}_ms` : `${stat}_${metric}_ms` };
}

/** Checks a result's percentile fields against the aggregate SLO keys it names. */
export function checkSlo(slo: Slo | undefined, result: Readonly<Record<string, unknown>>): SloCheck[] {
  if (slo === undefined) return [];
  const checks: SloCheck[] = [];
  for (const key of SLO_KEYS) {
    const limit = slo[key];
    if (limit === undefined) continue;
    const { metric, stat, field } = sloField(key);
    const raw = result[field] ?? result[`${stat}_${metric}_ms`];
    const value = typeof raw === 'number' ? raw : Number.POSITIVE_INFINITY;
    checks.push({ key, limitMs: limit, valueMs: value, ok: value <= limit });
  }
  return checks;
}

/**
 * Requests a run lost: sent but never answered in full (an HTTP error, a dropped connection, a
 * harness's `failed` count). The latency figures of a result describe only the requests that
 * completed, so a run that lost requests looks better than it was unless the loss is counted.
 */
export interface LostRequests {
  readonly lost: number;
  readonly total: number;
  /** lost ÷ total, 0 when nothing was sent. */
  readonly share: number;
}

export function lostRequests(result: { readonly completed: number; readonly failed: number }): LostRequests {
  const total = result.completed + result.failed;
  return { lost: result.failed, total, share: total === 0 ? 0 : result.failed / total };
}

/**
 * The share of requests an SLO key tolerates losing. A lost request counts as one that missed every
 * latency limit, so "p99 ≤ T" (99% of requests within T) survives at most 1% lost, p90 10%, p50
 * half; a mean has no room for a request that never finished.
 */
export function lostShareAllowed(key: SloKey): number {
  const { stat } = sloField(key);
  switch (stat) {
    case 'mean':
      return 0;
    case 'p50':
      return 0.5;
    case 'p90':
      return 0.1;
    case 'p95':
      return 0.05;
    case 'p99':
      return 0.01;
    default:
      return assertNever(stat, 'SLO statistic');
  }
}

/** The SLO keys whose limit the run's lost requests break on their own (empty when none do). */
export function lostBreaks(slo: Slo | undefined, result: { readonly completed: number; readonly failed: number }): SloKey[] {
  if (slo === undefined) return [];
  const { share } = lostRequests(result);
  if (share === 0) return [];
  return SLO_KEYS.filter((k) => slo[k] !== undefined && share > lostShareAllowed(k));
}

/**
 * The SLO verdict of a measured run: every latency limit holds for the requests that completed, and
 * the requests it lost are few enough that each limit would hold with them counted as misses.
 * (`checkSlo` alone reads only the percentiles, which describe the completed requests.)
 */
export function meetsSlo(
  slo: Slo | undefined,
  result: Readonly<Record<string, unknown>> & { readonly completed: number; readonly failed: number; readonly saturation?: { readonly saturated: boolean } | null | undefined },
): boolean {
  // A run whose queue grows without bound (metrics/saturation.ts) has percentiles that only say how long it
  // ran: it cannot sustain the load, whatever they read.
  if (result.saturation?.saturated === true) return false;
  return checkSlo(slo, result).every((c) => c.ok) && lostBreaks(slo, result).length === 0;
}
