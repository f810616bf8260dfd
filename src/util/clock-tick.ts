/**
 * Trace times written to a clock tick coarser than the ms (BurstGPT writes whole seconds) lose where
 * in the tick each request came. Replayed as written, every request of a second is sent at its first
 * instant (a Poisson trace at 6 req/s becomes bursts that triple the simulated mean TTFT), and fitted
 * as written, ties and whole-tick gaps read as extreme bursts (Poisson fitted as gamma shape 0.2).
 * Spread uniformly over its tick, a Poisson process comes back exactly (its arrivals, given their count
 * in an interval, are uniform in it), and the burstiness the ticks show is kept. The trace's fit
 * (trace/fit.ts) and its replay (workload/sample.ts) both spread by these.
 */

/** The clock ticks coarser than the ms a trace may be written in, coarsest first (ms). */
const CLOCK_TICKS_MS = [1000, 100, 10] as const;

/** The coarsest of those ticks that every time is a whole number of; null for a ms clock or finer, or fewer than two times. */
export function clockTickMs(arrivalMs: readonly number[]): number | null {
  if (arrivalMs.length < 2) return null;
  for (const tick of CLOCK_TICKS_MS) {
    if (arrivalMs.every((ms) => Math.abs(ms / tick - Math.round(ms / tick)) < 1e-9 * Math.max(1, ms / tick))) return tick;
  }
  return null;
}

/** Each time moved uniformly within its tick by `next()` ∈ [0, 1), sorted again (requests of one tick change order among themselves only). */
export function spreadOverTick(arrivalMs: readonly number[], tickMs: number, next: () => number): number[] {
  return arrivalMs.map((ms) => ms + next() * tickMs).sort((a, b) => a - b);
}
