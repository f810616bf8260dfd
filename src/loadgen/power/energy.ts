import type { Energy, EnergySource, EnergyWindow, RequestRecord } from '../../domain/index.js';
import { energyOf, energyUnavailable } from '../../domain/index.js';
import type { GpuSeries, PowerReading } from './types.js';

/**
 * A power reading over a run's load window → the result's `energy` block. Each GPU's readings become
 * its cumulative energy over time (the counter itself, or the power gauge integrated by trapezoids) and
 * the window's energy is that curve's rise between the window's edges, interpolated; all GPUs summed.
 * The window is the load window (first measured request sent to last answer, rule `load`): the load
 * runner's own steady_state block follows another rule than ML.ENERGY's, so it is not called one.
 */

/**
 * How far past its first or last reading a GPU's curve may be extended to reach a window edge: a
 * sampler's readings come every fraction of a second to a second, so an edge falls between two at
 * most that far from one; beyond it the readings do not cover the window and nothing is claimed.
 */
export const EDGE_TOLERANCE_S = 1.5;

/** First measured request sent → last answer (its last byte, or when it failed); null without requests. */
export function loadWindow(records: readonly RequestRecord[]): { startS: number; endS: number } | null {
  let startS = Infinity;
  let endS = -Infinity;
  for (const r of records) {
    if (r.phase !== 'measure') continue;
    startS = Math.min(startS, r.send_time_s);
    const last = r.done_time_s ?? r.chunk_times_s[r.chunk_times_s.length - 1] ?? r.first_byte_time_s ?? r.send_time_s;
    endS = Math.max(endS, last);
  }
  return Number.isFinite(startS) && Number.isFinite(endS) ? { startS, endS } : null;
}

/** Joules a GPU used between `a` and `b` (seconds), or why its readings cannot tell. */
export function seriesEnergyJ(s: GpuSeries, a: number, b: number, toleranceS = EDGE_TOLERANCE_S): number | string {
  const n = s.tS.length;
  const t0 = s.tS[0];
  const tn = s.tS[n - 1];
  if (t0 === undefined || tn === undefined) return `GPU ${s.gpu} has no reading`;
  if (a < t0 - toleranceS || b > tn + toleranceS) {
    return `the readings of GPU ${s.gpu} cover ${t0.toFixed(2)}–${tn.toFixed(2)} s of the run, not its load window ${a.toFixed(2)}–${b.toFixed(2)} s`;
  }
  if (s.kind === 'energy_j') {
    if (n < 2) return `GPU ${s.gpu} has a single energy-counter reading`;
    for (let i = 1; i < n; i++) {
      if ((s.values[i] as number) < (s.values[i - 1] as number)) return `the energy counter of GPU ${s.gpu} went backwards (reset) during the run`;
    }
  }
  const cum = cumulative(s);
  const e = at(s, cum, b) - at(s, cum, a);
  return e < 0 ? `GPU ${s.gpu}: negative energy over the window` : e;
}

/** Cumulative joules at each reading: the counter's own values, or the gauge integrated by trapezoids. */
function cumulative(s: GpuSeries): number[] {
  if (s.kind === 'energy_j') return [...s.values];
  const out = [0];
  for (let i = 1; i < s.tS.length; i++) {
    const dt = (s.tS[i] as number) - (s.tS[i - 1] as number);
    out.push((out[i - 1] as number) + (((s.values[i] as number) + (s.values[i - 1] as number)) / 2) * dt);
  }
  return out;
}

/** The cumulative curve at `t`: interpolated inside, extended at the edge's rate outside (within the tolerance checked before). */
function at(s: GpuSeries, cum: readonly number[], t: number): number {
  const ts = s.tS;
  const n = ts.length;
  // A gauge holds its edge reading; a counter keeps the rate of its edge interval.
  const edgeRate = (first: boolean): number => {
    if (s.kind === 'power_w') return s.values[first ? 0 : n - 1] as number;
    if (n < 2) return 0;
    const [i, j] = first ? [0, 1] : [n - 2, n - 1];
    const dt = (ts[j] as number) - (ts[i] as number);
    return dt > 0 ? ((cum[j] as number) - (cum[i] as number)) / dt : 0;
  };
  if (t <= (ts[0] as number)) return (cum[0] as number) - edgeRate(true) * ((ts[0] as number) - t);
  if (t >= (ts[n - 1] as number)) return (cum[n - 1] as number) + edgeRate(false) * (t - (ts[n - 1] as number));
  let lo = 0;
  let hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((ts[mid] as number) <= t) lo = mid;
    else hi = mid;
  }
  const span = (ts[hi] as number) - (ts[lo] as number);
  const f = span > 0 ? (t - (ts[lo] as number)) / span : 0;
  return (cum[lo] as number) + f * ((cum[hi] as number) - (cum[lo] as number));
}

/**
 * The `energy` block of a run: average power and energy of all GPUs over the load window, and joules
 * per output token (the run's output tokens, all generated inside the window). Unavailable, with the
 * reason, when the source failed or its readings do not cover the window. `fallbackGpus` is the GPU
 * count an unavailable block names (the schema wants one; the deployment's when known).
 */
export function energyFromReading(reading: PowerReading, window: { startS: number; endS: number } | null, outputTokens: number, fallbackGpus: number): Energy {
  const source: EnergySource = reading.source;
  if (!reading.ok) return energyUnavailable(source, fallbackGpus, reading.reason);
  const gpus = reading.series.length;
  if (gpus === 0) return energyUnavailable(source, fallbackGpus, 'no GPU reported power');
  if (window === null) return energyUnavailable(source, gpus, 'no request was sent, so there is no load window');
  const durationS = window.endS - window.startS;
  if (!(durationS > 0)) return energyUnavailable(source, gpus, 'the load window is empty');
  let totalJ = 0;
  for (const s of reading.series) {
    const e = seriesEnergyJ(s, window.startS, window.endS);
    if (typeof e === 'string') return energyUnavailable(source, gpus, e);
    totalJ += e;
  }
  const w: EnergyWindow = { start_s: Math.max(0, window.startS), end_s: Math.max(0, window.endS), rule: 'load' };
  return energyOf(source, gpus, w, totalJ / durationS, outputTokens);
}
