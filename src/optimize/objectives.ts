import type { BenchmarkResult, Objective, ObjectiveName, Slo, StudyObjective } from '../domain/index.js';
import { SLO_KEYS, type SloKey } from '../domain/slo.js';
import { LmBenchError, assertNever } from '../errors.js';
import { targetsOf, type TargetName, type TargetValues } from '../surrogate/targets.js';

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
    case 'energy_per_output_token_j':
      return 'energy_per_output_token_j';
    case 'max_rate_under_slo':
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'max_rate_under_slo is measured by a rate search, not predicted by the surrogate');
    default:
      return assertNever(name, 'objective');
  }
}

/**
 * Objectives a measurement may lack without failing: power is never a reason to lose a run
 * (domain/energy.ts), so a run without an energy figure stays measured and is left off the energy axis.
 */
export function objectiveMayBeMissing(name: ObjectiveName): boolean {
  return name === 'energy_per_output_token_j';
}

/**
 * The Pareto axes each study objective puts to the sampler (constrained EHVI over two axes, its fast
 * exact form). `goodput`: today's throughput per GPU against p99 TTFT. `tokens_per_joule`: joules per
 * output token against p99 TTFT, the trade a bigger batch makes (fewer joules, more waiting).
 * `usd_per_mtok`: goodput per GPU (throughput per GPU counted only under the SLOs) against p99 TTFT,
 * since at one GPU type's fixed price per GPU-hour $/Mtok is the inverse of it; its first axis also
 * tells an answer from `goodput`'s (`studyObjectiveOf`).
 */
export function objectivesFor(kind: StudyObjective): Objective[] {
  switch (kind) {
    case 'goodput':
      return [...DEFAULT_OBJECTIVES];
    case 'tokens_per_joule':
      return [
        { name: 'energy_per_output_token_j', direction: 'minimize' },
        { name: 'ttft_p99_ms', direction: 'minimize' },
      ];
    case 'usd_per_mtok':
      return [
        { name: 'goodput_per_gpu', direction: 'maximize' },
        { name: 'ttft_p99_ms', direction: 'minimize' },
      ];
    default:
      return assertNever(kind, 'objective');
  }
}

/**
 * The study objective a list of objectives stands for: the one whose preset leads with the same axis
 * (joules per token, goodput per GPU), else `goodput`. A stored spec's `objective` wins over this.
 */
export function studyObjectiveOf(spec: { readonly objective?: StudyObjective | undefined; readonly objectives?: readonly Objective[] | undefined }): StudyObjective {
  if (spec.objective !== undefined) return spec.objective;
  const first = spec.objectives?.[0]?.name;
  if (first === 'energy_per_output_token_j') return 'tokens_per_joule';
  if (first === 'goodput_per_gpu') return 'usd_per_mtok';
  return 'goodput';
}

/** How one configuration is picked among those meeting the SLOs: the figure it ranks by, and which way is better. */
export interface PickRule {
  readonly objective: StudyObjective;
  readonly target: TargetName;
  readonly direction: 'maximize' | 'minimize';
}

export function pickRule(kind: StudyObjective): PickRule {
  switch (kind) {
    case 'goodput':
    case 'usd_per_mtok':
      return { objective: kind, target: 'output_throughput_per_gpu', direction: 'maximize' };
    case 'tokens_per_joule':
      return { objective: kind, target: 'energy_per_output_token_j', direction: 'minimize' };
    default:
      return assertNever(kind, 'objective');
  }
}

/**
 * A figure where more is better, for ranking by the rule: throughput per GPU itself, or the inverse of
 * joules per token (output tokens per joule); 0 when the values lack the rule's target.
 */
export function merit(values: TargetValues, rule: PickRule): number {
  const v = values[rule.target];
  if (v === undefined || !(v > 0)) return 0;
  return rule.direction === 'maximize' ? v : 1 / v;
}

/** The rule's figure of a measured result (null when the result lacks it: a run without power). */
export function measuredScore(result: BenchmarkResult, rule: PickRule, gpuCount: number): number | null {
  return targetsOf(result, gpuCount)[rule.target] ?? null;
}

/** The measured pick's rule in words (tune's summary and the report print it). */
export function measuredPickText(kind: StudyObjective): string {
  switch (kind) {
    case 'goodput':
      return 'the measured configuration with the most output throughput per GPU among those meeting the SLOs';
    case 'usd_per_mtok':
      return 'the measured configuration with the fewest dollars per million output tokens among those meeting the SLOs (at one GPU type’s price per GPU-hour, the most output throughput per GPU)';
    case 'tokens_per_joule':
      return 'the measured configuration with the fewest joules per output token (all the deployment’s GPUs) among those meeting the SLOs';
    default:
      return assertNever(kind, 'objective');
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
 * A simulated or measured run has every statistic and is judged on the one the key names
 * (sim-search `meetsSlo`, `pMeetsUnderError` given the run); the target then only says whose error applies.
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
