import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Time for records: seconds since the run's origin on the monotonic clock. `process.hrtime` reads
 * CLOCK_MONOTONIC, the same clock in every worker thread, so records from several threads merge on
 * one time axis without skew. The origin travels to workers as a decimal string (bigint ns).
 */
export function clockFrom(originNs: bigint): () => number {
  // performance.now() reads the same monotonic clock without a BigInt per call; the offset to the
  // shared origin is fixed once per thread.
  const offsetMs = Number(process.hrtime.bigint() - originNs) / 1e6 - performance.now();
  return () => (performance.now() + offsetMs) / 1000;
}

export function nowNs(): bigint {
  return process.hrtime.bigint();
}

/** Event-loop lag: the drift of a 10 ms timer (the lag a send would see now) and the run's peak. */
export interface LagMonitor {
  currentMs(): number;
  maxMs(): number;
  /** The 99th percentile of the lag over the monitor's life. */
  p99Ms(): number;
  stop(): void;
}

/**
 * The percentile reported as the p99: under 200 samples (2 s of a 10 ms timer) the 99th is the single
 * worst, so one pause (a GC, another process on a loaded machine) would flag a short run client-bound;
 * there it is the second worst instead, which one pause cannot move.
 */
export function tailPercentile(samples: number): number {
  // Rank ⌈p·n/100⌉ = n − 1 (half a rank below, so rounding never reaches the worst).
  return samples >= 200 ? 99 : Math.max(50, (100 * (samples - 1.5)) / samples);
}

export function startLagMonitor(intervalMs = 10): LagMonitor {
  let last = performance.now();
  let current = 0;
  const hist = monitorEventLoopDelay({ resolution: intervalMs });
  hist.enable();
  const timer = setInterval(() => {
    const now = performance.now();
    current = Math.max(0, now - last - intervalMs);
    last = now;
  }, intervalMs);
  timer.unref();
  return {
    currentMs: () => current,
    maxMs: () => Math.max(0, hist.max / 1e6 - intervalMs),
    p99Ms: () => (hist.count === 0 ? 0 : Math.max(0, hist.percentile(tailPercentile(hist.count)) / 1e6 - intervalMs)),
    stop: () => {
      clearInterval(timer);
      hist.disable();
    },
  };
}
