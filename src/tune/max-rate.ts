import type { BenchmarkResult, Slo, Workload } from '../domain/index.js';
import { checkSlo, withoutTraceData } from '../domain/index.js';
import type { Executor, TrialInput, TrialOutcome } from '../targets/types.js';

/**
 * The "max rate under the SLO" measurement of one configuration, by bisection on the request rate in
 * at most `maxRuns` load runs (vLLM's auto_tune steps the rate down 1 req/s at a time, so its cost grows
 * with the throughput). Run 1 sends everything at once and measures the saturated throughput T; if the
 * SLOs hold even then, T is the answer. Otherwise the rate is bisected in (0, T] with Poisson arrivals,
 * and the trial's result is the run at the highest rate that met the SLOs.
 */
export interface RateRun {
  readonly rateRps: number | 'inf';
  readonly meetsSlo: boolean;
  readonly requestThroughput: number;
}

export interface MaxRateResult {
  readonly maxRateRps: number;
  readonly result: BenchmarkResult;
  readonly runs: RateRun[];
}

/**
 * The workload at another rate. A trace's requests cannot arrive at another rate and stay the trace's,
 * so a trace workload searched this way drops them and draws from its fitted lengths (the CLI refuses
 * `--trace` with a rate search rather than do this silently; the service's studies get this).
 */
export function withRate(w: Workload, rateRps: number | 'inf'): Workload {
  const arrival = rateRps === 'inf' ? { kind: 'burst' as const } : { kind: 'poisson' as const, rate_rps: rateRps };
  return { ...withoutTraceData(w), arrival };
}

/** A load run meets the SLOs: something completed, nothing failed, every limit held. */
export const meetsSlo = (slo: Slo, r: BenchmarkResult): boolean => r.completed > 0 && r.failed === 0 && checkSlo(slo, r).every((c) => c.ok);

export async function searchMaxRate(
  run: (w: Workload, k: number) => Promise<TrialOutcome>,
  workload: Workload,
  slo: Slo,
  maxRuns = 5,
): Promise<TrialOutcome & { maxRate?: MaxRateResult }> {
  const first = await run(withRate(workload, 'inf'), 0);
  if (first.status !== 'ok') return first;
  const runs: RateRun[] = [{ rateRps: 'inf', meetsSlo: meetsSlo(slo, first.result), requestThroughput: first.result.request_throughput }];
  let durationMs = first.durationMs;
  const saturated = first.result.request_throughput;
  if (runs[0]?.meetsSlo === true) {
    return { ...first, maxRate: { maxRateRps: saturated, result: first.result, runs } };
  }
  let lo = 0;
  let hi = saturated;
  let best: { rate: number; result: BenchmarkResult } | null = null;
  let lowest: BenchmarkResult = first.result;
  for (let k = 1; k < maxRuns && hi > 0; k++) {
    const rate = (lo + hi) / 2;
    const out = await run(withRate(workload, rate), k);
    if (out.status !== 'ok') return { ...out, durationMs: durationMs + out.durationMs };
    durationMs += out.durationMs;
    const ok = meetsSlo(slo, out.result);
    runs.push({ rateRps: rate, meetsSlo: ok, requestThroughput: out.result.request_throughput });
    if (ok) {
      lo = rate;
      best = { rate, result: out.result };
    } else {
      hi = rate;
      lowest = out.result;
    }
  }
  const chosen = best ?? { rate: 0, result: lowest };
  return { status: 'ok', result: chosen.result, durationMs, maxRate: { maxRateRps: chosen.rate, result: chosen.result, runs } };
}

/** The tuning loop's `measure` for max-rate studies: each load run is one executor trial. */
export function maxRateMeasure(maxRuns = 5): (input: TrialInput, executor: Executor) => Promise<TrialOutcome> {
  return async (input, executor) => {
    const out = await searchMaxRate((w, k) => executor.run({ ...input, workload: w, seed: input.seed + k * 7919 }), input.workload, input.slo, maxRuns);
    if (out.status !== 'ok' || out.maxRate === undefined) return out;
    return {
      status: 'ok',
      result: out.result,
      durationMs: out.durationMs,
      attrs: { max_rate_rps: out.maxRate.maxRateRps, rate_runs: out.maxRate.runs },
    };
  };
}
