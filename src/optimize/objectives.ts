import type { Objective, ObjectiveName, Slo } from '../domain/index.js';
import { SLO_KEYS, type SloKey } from '../domain/slo.js';
import { LmBenchError, assertNever } from '../errors.js';
import type { TargetName, TargetValues } from '../model/targets.js';

/**
 * Declared objectives and SLO constraints over predicted or measured target values. Internally every
 * objective is minimized: a maximized one enters the Pareto and hypervolume code negated.
 * Goodput is throughput subject to the SLOs: the SLOs are constraints, not objectives.
 */
export const DEFAULT_OBJECTIVES: readonly Objective[] = Object.freeze([
  { name: 'output_throughput_per_gpu', direction: 'maximize' },
  { name: 'ttft_p99_ms', direction: 'minimize' },
]);

export function objectiveTarget(name: ObjectiveName): TargetName {
  switch (name) {
    case 'output_throughput_per_gpu':
    case 'goodput_per_gpu':
      return 'output_throughput_per_gpu';
    case 'output_throughput':
      return 'output_throughput';
    case 'ttft_p99_ms':
      return 'ttft_p99_ms';
    case 'itl_p99_ms':
      return 'itl_p99_ms';
    case 'tpot_p99_ms':
      return 'tpot_p99_ms';
    case 'e2el_p99_ms':
      return 'e2el_p99_ms';
    case 'gpu_memory_reserved_gib':
      return 'gpu_memory_reserved_gib';
    case 'max_rate_under_slo':
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'max_rate_under_slo is measured by a rate search, not predicted by the surrogate');
    default:
      return assertNever(name, 'objective');
  }
}

/** An SLO limit on one predicted target. */
export interface Constraint {
  readonly key: SloKey;
  readonly target: TargetName;
  readonly limitMs: number;
}

/**
 * The SLO's aggregate keys as constraints on targets. The surrogate models p50 and p99; a p90/p95 limit
 * is checked against p99 and a mean limit against p50 (the conservative and the closest statistics).
 */
export function sloConstraints(slo: Slo | undefined): Constraint[] {
  if (slo === undefined) return [];
  const out: Constraint[] = [];
  for (const key of SLO_KEYS) {
    const limit = slo[key];
    if (limit === undefined) continue;
    const [metric, stat] = key.split('_') as [string, string];
    const tail = stat === 'mean' || stat === 'p50' ? 'p50' : 'p99';
    const target = (metric === 'e2el' ? 'e2el_p99_ms' : `${metric}_${tail}_ms`) as TargetName;
    out.push({ key, target, limitMs: limit });
  }
  return out;
}

export function meetsConstraints(values: TargetValues, constraints: readonly Constraint[]): boolean {
  for (const c of constraints) {
    const v = values[c.target];
    if (v === undefined || !(v <= c.limitMs)) return false;
  }
  return true;
}

/** The minimization vector of target values (NaN where a target is missing). */
export function objectiveVector(values: TargetValues, objectives: readonly Objective[]): number[] {
  return objectives.map((o) => {
    const v = values[objectiveTarget(o.name)] ?? Number.NaN;
    return o.direction === 'maximize' ? -v : v;
  });
}

/** Goodput per GPU: throughput per GPU when the SLOs hold, else 0. */
export function goodputPerGpu(values: TargetValues, constraints: readonly Constraint[]): number {
  return meetsConstraints(values, constraints) ? (values.output_throughput_per_gpu ?? 0) : 0;
}

/**
 * The hypervolume reference point (minimization space). A maximized objective's reference is 0
 * (no throughput); a minimized one's is its SLO limit when one applies, else 1.2 × the worst observed.
 */
export function referencePoint(
  objectives: readonly Objective[],
  constraints: readonly Constraint[],
  observed: readonly (readonly number[])[],
): number[] {
  return objectives.map((o, k) => {
    if (o.direction === 'maximize') return 0;
    const target = objectiveTarget(o.name);
    const c = constraints.find((x) => x.target === target);
    if (c !== undefined) return c.limitMs;
    const worst = Math.max(0, ...observed.map((p) => p[k] ?? 0).filter(Number.isFinite));
    return worst > 0 ? worst * 1.2 : 1;
  });
}
