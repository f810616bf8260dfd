import type { BenchmarkResult, Objective, StudySpec, Trial } from '../../../domain/index.js';
import { targetsOf } from '../../../surrogate/targets.js';
import { hypervolume } from '../../../optimize/hypervolume.js';
import { meetsConstraints, objectiveVector, referencePoint, sloConstraints } from '../../../optimize/objectives.js';
import { createRng } from '../../../util/rng.js';
import type { StudyAnalysis } from '../types.js';

/**
 * Optimization history (Optuna's `_get_optimization_history_info_list`): per trial number, the trial's
 * goodput per GPU (its throughput per GPU when it meets the SLOs, else 0), the best so far and the
 * hypervolume of the SLO-feasible measured front so far, for the study and its random-search baseline.
 * Both series share one reference point, so their hypervolumes compare.
 */
export interface HistoryRow {
  readonly series: string;
  readonly trial: number;
  readonly state: Trial['state'];
  readonly goodputPerGpu: number;
  readonly bestGoodputPerGpu: number;
  readonly hypervolume: number;
}

export interface HistoryData {
  readonly rows: readonly HistoryRow[];
  readonly series: readonly string[];
  readonly reference: readonly number[];
  readonly objectives: readonly Objective[];
}

/** Objectives the history can compute from a result (the max-rate objective is a search, not a value). */
function plottable(spec: StudySpec): Objective[] {
  return spec.objectives.filter((o) => o.name !== 'max_rate_under_slo');
}

function feasiblePoints(trials: readonly Trial[], spec: StudySpec): Map<number, number[]> {
  const constraints = sloConstraints(spec.slo);
  const out = new Map<number, number[]>();
  for (const t of trials) {
    if (t.state !== 'complete' || t.result === null) continue;
    const v = targetsOf(t.result, spec.hardware.count);
    if (meetsConstraints(v, constraints)) out.set(t.number, objectiveVector(v, plottable(spec)));
  }
  return out;
}

export function historyRows(series: string, trials: readonly Trial[], spec: StudySpec, ref: readonly number[]): HistoryRow[] {
  const pts = feasiblePoints(trials, spec);
  const gpus = spec.hardware.count;
  const sofar: number[][] = [];
  let best = 0;
  const rng = createRng(spec.seed);
  return [...trials]
    .sort((a, b) => a.number - b.number)
    .map((t) => {
      const p = pts.get(t.number);
      const goodput = p === undefined ? 0 : (t.result as BenchmarkResult).output_throughput / gpus;
      if (p !== undefined) sofar.push(p);
      best = Math.max(best, goodput);
      return { series, trial: t.number, state: t.state, goodputPerGpu: goodput, bestGoodputPerGpu: best, hypervolume: hypervolume(sofar, ref, { rng: rng.fork(t.number), samples: 20_000 }) };
    });
}

export function buildHistoryData(a: StudyAnalysis): HistoryData {
  const spec = a.study.spec;
  const objectives = plottable(spec);
  const observed = [...feasiblePoints(a.trials, spec).values(), ...(a.baseline === null ? [] : feasiblePoints(a.baseline.trials, spec).values())];
  const reference = referencePoint(objectives, sloConstraints(spec.slo), observed);
  const rows = historyRows(spec.name, a.trials, spec, reference);
  const series = [spec.name];
  if (a.baseline !== null) {
    // A study named with --baseline need not be a random search: the legend says so only when it is.
    const name = a.baseline.random ? `${a.baseline.name} (random search)` : a.baseline.name;
    rows.push(...historyRows(name, a.baseline.trials, spec, reference));
    series.push(name);
  }
  return { rows, series, reference, objectives };
}
