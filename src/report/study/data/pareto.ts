import type { BenchmarkResult, KnobValue, Slo, Trial } from '../../../domain/index.js';
import { assertNever } from '../../../errors.js';
import type { TargetName } from '../../../surrogate/targets.js';
import { paretoFront } from '../../../optimize/pareto.js';
import { mean } from '../../../metrics/stats.js';
import { BY_THROUGHPUT, configGroups } from '../../../optimize/repeats.js';
import type { StudyAnalysis } from '../types.js';

/**
 * The Pareto plot's data: output throughput per GPU against a p99 latency or against joules per output
 * token (the energy axis), one point per measured configuration and one per configuration of the
 * surrogate's predicted front (with ±2σ intervals on both axes), each carrying its full effective
 * configuration for the tooltip. A configuration measured more than once (re-measurements) is one
 * point at the mean of its runs, as the study's answer ranks and states it: plotted run by run, the
 * pick sat at its first run's figures, not the answer's, and could look dominated by its own repeat.
 * Dominance is in the plot's own plane (more throughput, less latency or fewer joules), among the
 * measured points; on the energy axis, runs without a power figure are left out.
 */
export type ParetoMetric = 'ttft' | 'itl' | 'energy';

export interface ParetoPoint {
  readonly kind: 'measured' | 'predicted';
  /** The configuration's first trial, which names it (as the answer does); null for a predicted point. */
  readonly trial: number | null;
  /** The measured trials the point is the mean of (empty for a predicted point). */
  readonly runs: readonly number[];
  readonly origin: string;
  /** The x axis: the p99 latency in ms, or joules per output token on the energy axis (the names stay for the specs). */
  readonly latencyMs: number;
  readonly latencyLowMs: number | null;
  readonly latencyHighMs: number | null;
  readonly throughputPerGpu: number;
  readonly throughputLow: number | null;
  readonly throughputHigh: number | null;
  readonly memoryGib: number | null;
  readonly dominated: boolean;
  readonly meetsSlo: boolean | null;
  readonly recommended: boolean;
  readonly config: Readonly<Record<string, KnobValue>>;
}

export interface SloLine {
  readonly key: string;
  readonly limitMs: number;
}

export interface ParetoData {
  readonly metric: ParetoMetric;
  readonly points: readonly ParetoPoint[];
  /** The measured non-dominated points, by latency (the staircase drawn through them). */
  readonly front: readonly { readonly latencyMs: number; readonly throughputPerGpu: number }[];
  readonly slo: SloLine | null;
}

/** The SLO limit drawn on the p99 axis: the p99 key, else the tighter-stat key the optimizer checks against p99. */
export function sloLine(slo: Slo, metric: ParetoMetric): SloLine | null {
  if (metric === 'energy') return null;
  for (const stat of ['p99', 'p95', 'p90'] as const) {
    const key = `${metric}_${stat}_ms` as const;
    const v = slo[key];
    if (v !== undefined) return { key, limitMs: v };
  }
  return null;
}

/** A measured result's figure on the x axis (null: a run without a power figure, on the energy axis). */
function xOf(r: BenchmarkResult, metric: ParetoMetric): number | null {
  switch (metric) {
    case 'ttft':
      return r.p99_ttft_ms;
    case 'itl':
      return r.p99_itl_ms;
    case 'energy': {
      const j = r.energy?.energy_per_output_token_j;
      return typeof j === 'number' && j > 0 ? j : null;
    }
    default:
      return assertNever(metric, 'Pareto metric');
  }
}

const PREDICTED_X: Record<ParetoMetric, TargetName> = { ttft: 'ttft_p99_ms', itl: 'itl_p99_ms', energy: 'energy_per_output_token_j' };

export function buildParetoData(a: StudyAnalysis, metric: ParetoMetric): ParetoData {
  const spec = a.study.spec;
  const gpus = spec.hardware.count;
  const recTrial = a.summary.recommendation?.trial ?? null;
  // Configurations, as the summary ranks them: a configuration's runs (the trial and its re-measurements) are one point at their mean.
  const measured = configGroups(a.trials, spec.slo, BY_THROUGHPUT, a.deployment)
    .map((g) => ({ first: g.trials[0] as Trial, feasible: g.feasible, runs: g.measured.filter((t) => xOf(t.result as BenchmarkResult, metric) !== null) }))
    .filter((g) => g.runs.length > 0);
  const plane = measured.map((g) => [mean(g.runs.map((t) => xOf(t.result as BenchmarkResult, metric) as number)), -mean(g.runs.map((t) => (t.result as BenchmarkResult).output_throughput)) / gpus]);
  const onFront = new Set(paretoFront(plane));
  const points: ParetoPoint[] = measured.map((g, i) => {
    const results = g.runs.map((t) => t.result as BenchmarkResult);
    const memory = results.map((r) => r.server_metrics?.gpu_memory_reserved_gib).filter((m): m is number => typeof m === 'number');
    return {
      kind: 'measured',
      trial: g.first.number,
      runs: g.runs.map((t) => t.number),
      origin: g.first.origin,
      latencyMs: (plane[i] as number[])[0] as number,
      latencyLowMs: null,
      latencyHighMs: null,
      throughputPerGpu: -((plane[i] as number[])[1] as number),
      throughputLow: null,
      throughputHigh: null,
      memoryGib: memory.length === 0 ? null : mean(memory),
      dominated: !onFront.has(i),
      // The configuration's verdict, as the summary ranks it: every run finished and met the SLOs.
      meetsSlo: g.feasible,
      recommended: g.first.number === recTrial,
      config: (a.effectiveConfigs[g.first.number] ?? g.first.config) as Record<string, KnobValue>,
    };
  });
  if (a.model.available) {
    for (const c of a.model.predictedFront) {
      const lat = c.predicted[PREDICTED_X[metric]];
      const tp = c.predicted.output_throughput_per_gpu;
      if (lat === undefined || tp === undefined) continue;
      points.push({
        kind: 'predicted',
        trial: null,
        runs: [],
        origin: 'surrogate',
        latencyMs: lat.mean,
        latencyLowMs: lat.low,
        latencyHighMs: lat.high,
        throughputPerGpu: tp.mean,
        throughputLow: tp.low,
        throughputHigh: tp.high,
        memoryGib: c.predicted.gpu_memory_reserved_gib?.mean ?? null,
        // Predicted points are the surrogate's front in the study's objectives, not in this plane: compared with nothing here.
        dominated: false,
        meetsSlo: null,
        recommended: false,
        config: c.config as Record<string, KnobValue>,
      });
    }
  }
  const front = points
    .filter((p) => p.kind === 'measured' && !p.dominated)
    .map((p) => ({ latencyMs: p.latencyMs, throughputPerGpu: p.throughputPerGpu }))
    .sort((x, y) => x.latencyMs - y.latencyMs);
  return { metric, points, front, slo: sloLine(spec.slo, metric) };
}
