import { normalCdf } from '../../util/normal.js';
import { priorPosterior, SIMULATOR_LOG_SD } from '../../surrogate/prior.js';
import type { TargetName, TargetValues } from '../../surrogate/targets.js';
import type { Constraint } from '../objectives.js';

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
export function pMeetsUnderError(values: TargetValues, constraints: readonly Constraint[], residual: ResidualPosterior = {}): number {
  let p = 1;
  for (const k of constraints) {
    const v = values[k.target];
    if (v === undefined) return 0;
    const r = residual[k.target] ?? { mean: 0, sd: SIMULATOR_LOG_SD[k.target] };
    p *= normalCdf((Math.log(k.limitMs) - Math.log(v) - r.mean) / Math.max(1e-6, r.sd));
  }
  return p;
}
