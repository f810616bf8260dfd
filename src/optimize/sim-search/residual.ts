import { normalCdf } from '../../util/normal.js';
import { priorPosterior, SIMULATOR_LOG_SD } from '../../surrogate/prior.js';
import type { TargetName, TargetValues } from '../../surrogate/targets.js';
import type { Constraint } from '../objectives.js';
import { checkSlo, type BenchmarkResult, type SloKey } from '../../domain/index.js';

/**
 * The residual of the simulated search: measured runs against the same configurations simulated say
 * how far off the simulator is here (per target, as a log-normal posterior), and what that error does
 * to the chance a simulated configuration meets the SLOs (guide.ts re-ranks the search through it).
 */

/** What measured runs say about the simulator here: per target, the posterior of log(measured ÷ simulated). */
export type ResidualPosterior = Partial<Record<TargetName, { readonly mean: number; readonly sd: number }>>;

export function residualPosterior(pairs: readonly { readonly simulated: TargetValues; readonly measured: TargetValues }[]): ResidualPosterior {
  const out: ResidualPosterior = {};
  for (const t of Object.keys(SIMULATOR_LOG_SD) as TargetName[]) {
    const res: number[] = [];
    for (const p of pairs) {
      const s = p.simulated[t];
      const m = p.measured[t];
      if (s !== undefined && m !== undefined && s > 0 && m > 0) res.push(Math.log(m) - Math.log(s));
    }
    out[t] = priorPosterior(res, SIMULATOR_LOG_SD[t]);
  }
  return out;
}

/**
 * P(every SLO holds) for simulated metrics off by a log-normal error per metric (independent): the
 * residual's posterior where one is given, else the simulator's measured error. 0 when a constrained
 * metric is missing.
 */
export function pMeetsUnderError(values: TargetValues, constraints: readonly Constraint[], residual: ResidualPosterior = {}, result: BenchmarkResult | null = null): number {
  let p = 1;
  for (const k of constraints) {
    // A simulated run has every statistic: a p90 or mean limit is judged on the run's own p90 or mean
    // (the error of the target it maps to), not on the p99 or median the surrogate would model.
    const v = result === null ? values[k.target] : sloStatistic(result, k.key);
    if (v === undefined) return 0;
    const r = residual[k.target] ?? { mean: 0, sd: SIMULATOR_LOG_SD[k.target] };
    p *= normalCdf((Math.log(k.limitMs) - Math.log(v) - r.mean) / Math.max(1e-6, r.sd));
  }
  return p;
}

/** The statistic an SLO key limits, as the run measured it (undefined when the run lacks it). */
function sloStatistic(result: BenchmarkResult, key: SloKey): number | undefined {
  const v = checkSlo({ [key]: 1 }, result)[0]?.valueMs;
  return v === undefined || !Number.isFinite(v) || v <= 0 ? undefined : v;
}
