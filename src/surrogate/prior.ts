import type { Surrogate, TrainingRow } from './surrogate.js';
import { PRIOR_MEMBERS, SIMULATOR_LOG_SD, unitQuantiles } from './simulator-spread.js';
import { TARGET_NAMES, type TargetName } from './targets.js';

export { normalQuantile, PRIOR_MEMBERS, SIMULATOR_LOG_SD } from './simulator-spread.js';

/**
 * The simulator as the surrogate's prior, for the rows before a tree ensemble can be trained (fewer
 * than `minRows` measured runs, down to none). Every candidate is priced by the physics baseline
 * (features.ts: the simulator's memory and roofline model), and the residual log(measured ÷ baseline)
 * is modelled as one offset per target shared by the whole deployment: a Gaussian with the
 * simulator's measured error as its prior spread, updated by each measured run (conjugate normal, the
 * the simulator's error split between that shared bias and one configuration's scatter about it). The members of the ensemble are
 * evenly spaced quantiles of the predictive distribution, so a prediction's ±2σ is the prior's
 * honest width: wide before any measurement, narrower as runs agree with the simulator.
 */

export interface PriorPosterior {
  /** Posterior mean of the shared log offset. */
  readonly mean: number;
  /** Predictive SD of a new configuration's log residual. */
  readonly sd: number;
  readonly rows: number;
}

export function priorPosterior(residuals: readonly number[], priorSd: number): PriorPosterior {
  const n = residuals.length;
  // The simulator's error split evenly between a bias shared by the deployment (what measurements
  // learn) and one configuration's scatter about it (what they cannot): zero rows give the full error.
  const half = (priorSd * priorSd) / 2;
  const precision = 1 / half + n / half;
  const mean = residuals.reduce((s, r) => s + r, 0) / half / precision;
  return { mean, sd: Math.sqrt(1 / precision + half), rows: n };
}

/**
 * The prior surrogate for `rows` (measured runs and launch failures; only runs that started carry
 * targets). Its feasibility is "starts": the space's rules, the memory model and the learned failure
 * rules are what keep failing configurations out until the classifier has data.
 */
export function priorSurrogate(rows: readonly TrainingRow[], featureNames: readonly string[], logSd: Readonly<Record<TargetName, number>> = SIMULATOR_LOG_SD): Surrogate {
  const z = unitQuantiles(PRIOR_MEMBERS);
  const offsets: Partial<Record<TargetName, number[]>> = {};
  const posterior: Partial<Record<TargetName, PriorPosterior>> = {};
  for (const t of TARGET_NAMES) {
    const res: number[] = [];
    for (const r of rows) {
      const v = r.targets[t];
      if (r.started && v !== undefined && v > 0) res.push(Math.log(v) - Math.log(r.baselines[t]));
    }
    const post = priorPosterior(res, logSd[t]);
    posterior[t] = post;
    offsets[t] = z.map((q) => post.mean + post.sd * q);
  }
  return { featureNames, members: PRIOR_MEMBERS, targets: {}, offsets, feasibility: { kind: 'constant', p: 1 }, prior: posterior };
}

