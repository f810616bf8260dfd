import type { RequestRecord } from '../domain/index.js';
import { percentileSorted } from '../metrics/stats.js';

/**
 * How late the runner sent against its schedule: send − intended send of every measured request of
 * an open loop (a trace's own times, or the arrival process's). Without a concurrency cap this is the
 * runner's own delay (timer granularity, a busy event loop); with one it includes the wait for a slot.
 */
export interface SendLateness {
  readonly sent: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export function sendLateness(records: readonly RequestRecord[]): SendLateness | null {
  const lateMs = Float64Array.from(
    records.filter((r) => r.phase === 'measure'),
    (r) => (r.send_time_s - r.sched_time_s) * 1000,
  ).sort();
  if (lateMs.length === 0) return null;
  return { sent: lateMs.length, p50Ms: percentileSorted(lateMs, 50), p99Ms: percentileSorted(lateMs, 99), maxMs: lateMs[lateMs.length - 1] as number };
}
