import { z } from 'zod';
import { lostRequests, type BenchmarkResult, type Trial } from '../domain/index.js';

/**
 * Requests a trial's run lost (failed, dropped, refused) and what that does to the trial. A run that lost
 * more than LOST_SHARE_LIMIT of its requests is a failed trial: the requests that survived are the
 * easier ones (the lost are often the longest prompts, or the ones that queued longest), so its
 * throughput and percentiles describe a different workload. 5% is also the most a p95 SLO can
 * tolerate at all; below it a trial stays measured, and its lost requests count as SLO misses
 * (domain/slo.ts `meetsSlo`), so a p99 SLO already fails past 1%.
 */
export const LOST_SHARE_LIMIT = 0.05;

/** Kept as the trial's `requests` attribute for every measured run, so a failed trial still says what it lost. */
export const RequestCounts = z.strictObject({ lost: z.int().nonnegative(), total: z.int().nonnegative() });
export type RequestCounts = z.infer<typeof RequestCounts>;

export function requestCounts(result: Pick<BenchmarkResult, 'completed' | 'failed'>): RequestCounts {
  const { lost, total } = lostRequests(result);
  return { lost, total };
}

export function tooManyLost(result: Pick<BenchmarkResult, 'completed' | 'failed'>): boolean {
  return lostRequests(result).share > LOST_SHARE_LIMIT;
}

/** A trial's request counts: from its result, else from the attribute a run that was failed for its losses keeps. */
export function trialRequests(t: Pick<Trial, 'result' | 'attrs'>): RequestCounts | null {
  if (t.result !== null) return requestCounts(t.result);
  const p = RequestCounts.safeParse(t.attrs['requests']);
  return p.success ? p.data : null;
}

/** "19 of 48 requests lost (40%; a trial may lose at most 5%): 17× HTTP 503 …; 2× …" — counts and the first error texts. */
export function lostReason(result: BenchmarkResult): string {
  const { lost, total, share } = lostRequests(result);
  const samples = [...(result.lmb.error_samples ?? [])].sort((a, b) => b.count - a.count).slice(0, 3);
  const said = samples.map((s) => `${s.count}× ${s.status === null ? '' : `HTTP ${s.status} `}${s.message.replace(/\s+/g, ' ').trim().slice(0, 200)}`);
  const pct = `${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%`;
  return `${lost} of ${total} requests lost (${pct}; a trial may lose at most ${LOST_SHARE_LIMIT * 100}%)${said.length === 0 ? ', no error text reported' : `: ${said.join('; ')}`}`;
}
