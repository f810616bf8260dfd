import type { LatencySeries } from '../types.js';

/** Long-format rows of the latency CDFs: one per (metric, candidate, point). */
export interface CdfRow {
  readonly metric: 'TTFT' | 'ITL';
  readonly candidate: string;
  readonly trial: number;
  readonly source: LatencySeries['source'];
  readonly ms: number;
  readonly q: number;
}

export function buildLatencyData(series: readonly LatencySeries[]): CdfRow[] {
  return series.flatMap((s) => [
    ...s.ttft.map((p) => ({ metric: 'TTFT' as const, candidate: s.label, trial: s.trial, source: s.source, ms: p.ms, q: p.q })),
    ...s.itl.map((p) => ({ metric: 'ITL' as const, candidate: s.label, trial: s.trial, source: s.source, ms: p.ms, q: p.q })),
  ]).filter((r) => r.ms > 0);
}
