import type { RequestRecord, SteadyState } from '../domain/index.js';
import { isSuccess } from '../domain/index.js';
import { mean, percentileSorted } from './stats.js';
import { extentOf } from '../util/extent.js';

/**
 * The steady part of a run, from its per-request records alone (pure: the simulator's virtual-time
 * records and the load runner's measured ones go through the same code).
 *
 * - The drain starts at the last dispatch: after it no new work enters and the load only falls.
 * - The warm-up ends where the windowed variance of the output chunk rate has decayed to the level
 *   it keeps in the second half of the run (and the rate itself has reached that half's level): a
 *   ramp, cold caches or a queue filling up all show as a high variance of the rate over a window.
 * - Throughputs count what happened inside the window (chunks spread a request's output tokens
 *   evenly unless the record says how many each chunk carried; prompt tokens count at the first
 *   chunk); TTFT is over requests sent in it, ITL over gaps ending in it.
 * - The window's halves are compared with a two-sample Kolmogorov–Smirnov test on the per-request
 *   TPOT of requests finishing in each half: a small p-value says the window is not stationary.
 */
export interface SteadyStateOptions {
  /** Bins the window is cut into for the rate series (default 40). */
  readonly bins?: number;
}

export interface KsResult {
  readonly statistic: number;
  readonly pValue: number;
}

/** Two-sample KS statistic, p-value from the Kolmogorov distribution with Stephens' correction. */
export function ksTwoSample(a: readonly number[], b: readonly number[]): KsResult {
  const x = Float64Array.from(a).sort();
  const y = Float64Array.from(b).sort();
  const n = x.length;
  const m = y.length;
  if (n === 0 || m === 0) return { statistic: 0, pValue: 1 };
  let i = 0;
  let j = 0;
  let d = 0;
  while (i < n && j < m) {
    const v = Math.min(x[i] as number, y[j] as number);
    while (i < n && (x[i] as number) <= v) i++;
    while (j < m && (y[j] as number) <= v) j++;
    d = Math.max(d, Math.abs(i / n - j / m));
  }
  const en = Math.sqrt((n * m) / (n + m));
  return { statistic: d, pValue: kolmogorovQ((en + 0.12 + 0.11 / en) * d) };
}

function kolmogorovQ(lambda: number): number {
  if (lambda < 0.2) return 1;
  let sum = 0;
  for (let k = 1; k <= 100; k++) {
    const term = (k % 2 === 1 ? 2 : -2) * Math.exp(-2 * k * k * lambda * lambda);
    sum += term;
    if (Math.abs(term) < 1e-12) break;
  }
  return Math.min(1, Math.max(0, sum));
}

function variance(xs: ArrayLike<number>, from: number, to: number): number {
  let s = 0;
  for (let i = from; i < to; i++) s += xs[i] as number;
  const m = s / (to - from);
  let v = 0;
  for (let i = from; i < to; i++) v += ((xs[i] as number) - m) ** 2;
  return v / (to - from);
}

function median(xs: number[]): number {
  return percentileSorted(Float64Array.from(xs).sort(), 50);
}

/** Start of the steady window: where the windowed variance of `rate` decays to its late level. */
export function warmupEndBin(rate: ArrayLike<number>): number {
  const nb = rate.length;
  const k = Math.max(3, Math.round(nb / 8));
  if (nb < 2 * k) return 0;
  const v: number[] = [];
  for (let b = 0; b + k <= nb; b++) v.push(variance(rate, b, b + k));
  const late = v.slice(Math.floor(v.length / 2));
  const lateRates = Array.from(rate).slice(Math.floor(nb / 2));
  const vRef = median(late);
  const level = median(lateRates);
  for (let b = 0; b < v.length; b++) {
    let s = 0;
    for (let i = b; i < b + k; i++) s += rate[i] as number;
    if ((v[b] as number) <= 2 * vRef + 1e-12 && s / k >= 0.8 * level) return b;
  }
  return 0;
}

export function steadyState(records: readonly RequestRecord[], opts: SteadyStateOptions = {}): SteadyState | null {
  const all = records.filter((r) => r.phase === 'measure');
  const ok = all.filter(isSuccess);
  if (ok.length < 8) return null;
  let t0 = Number.POSITIVE_INFINITY;
  let lastSend = Number.NEGATIVE_INFINITY;
  for (const r of all) {
    t0 = Math.min(t0, r.send_time_s);
    lastSend = Math.max(lastSend, r.send_time_s);
  }
  const span = lastSend - t0;
  if (!(span > 0)) return null;
  const nb = Math.max(8, opts.bins ?? 40);
  const binS = span / nb;
  const rate = new Float64Array(nb);
  for (const r of ok) {
    for (const t of r.chunk_times_s) {
      const b = Math.floor((t - t0) / binS);
      if (b >= 0 && b < nb) rate[b] = (rate[b] as number) + 1;
    }
  }
  const startS = t0 + warmupEndBin(rate) * binS;
  const endS = lastSend;
  const durationS = endS - startS;
  if (!(durationS > 0)) return null;
  const inWin = (t: number): boolean => t >= startS && t < endS;

  let outTokens = 0;
  let inTokens = 0;
  const ttft: number[] = [];
  const itl: number[] = [];
  const finished: { t: number; tpot: number }[] = [];
  for (const r of ok) {
    const c = r.chunk_times_s;
    const first = c[0] as number;
    const last = c[c.length - 1] as number;
    const even = r.output_tokens / c.length;
    for (let i = 0; i < c.length; i++) {
      const t = c[i] as number;
      if (!inWin(t)) continue;
      outTokens += r.chunk_tokens?.[i] ?? even;
      if (i > 0) itl.push(t - (c[i - 1] as number));
    }
    if (inWin(first)) inTokens += r.prompt_tokens;
    if (inWin(r.send_time_s)) ttft.push(first - r.send_time_s);
    if (inWin(last)) {
      const e2el = last - r.send_time_s;
      finished.push({ t: last, tpot: r.output_tokens > 1 ? (last - first) / (r.output_tokens - 1) : e2el });
    }
  }
  finished.sort((a, b) => a.t - b.t);
  const mid = startS + durationS / 2;
  const h1 = finished.filter((f) => f.t < mid).map((f) => f.tpot);
  const h2 = finished.filter((f) => f.t >= mid).map((f) => f.tpot);
  const ks = h1.length >= 4 && h2.length >= 4 ? ksTwoSample(h1, h2) : null;

  const warnings: string[] = [];
  const runS = extentOf(ok.map((r) => r.chunk_times_s[r.chunk_times_s.length - 1] as number)).max - t0;
  if (runS > 0 && durationS / runS < 0.5) warnings.push(`the steady window covers only ${Math.round((100 * durationS) / runS)}% of the run`);
  if (finished.length < 20) warnings.push(`only ${finished.length} requests finished inside the steady window`);
  if (ks !== null && ks.pValue < 0.01) warnings.push(`the window's halves differ (KS p = ${ks.pValue.toPrecision(2)}): the load may not be stationary`);

  const sortedMs = (xs: number[]): Float64Array => Float64Array.from(xs, (x) => x * 1000).sort();
  const ttftMs = sortedMs(ttft);
  const itlMs = sortedMs(itl);
  return {
    start_s: startS,
    end_s: endS,
    duration_s: durationS,
    requests_completed_in_window: finished.length,
    request_throughput: finished.length / durationS,
    output_throughput: outTokens / durationS,
    total_token_throughput: (inTokens + outTokens) / durationS,
    mean_ttft_ms: mean(ttftMs),
    p99_ttft_ms: percentileSorted(ttftMs, 99),
    mean_itl_ms: mean(itlMs),
    p99_itl_ms: percentileSorted(itlMs, 99),
    ks_statistic: ks?.statistic ?? null,
    ks_p_value: ks?.pValue ?? null,
    warning: warnings.length === 0 ? null : warnings.join('; '),
  };
}
