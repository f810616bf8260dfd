import type { KnobValue, Slo } from '../../../domain/index.js';
import { meetsSlo } from '../../../domain/index.js';
import { paretoFront } from '../../../optimize/pareto.js';
import type { StudyAnalysis } from '../types.js';

/**
 * The Pareto plot's data: output throughput per GPU against a p99 latency, one point per measured
 * trial and one per configuration of the surrogate's predicted front (with ±2σ intervals on both axes),
 * each carrying its full effective configuration for the tooltip. Dominance is in the plot's own
 * plane (more throughput, less latency), among the measured points.
 */
export type ParetoMetric = 'ttft' | 'itl';

export interface ParetoPoint {
  readonly kind: 'measured' | 'predicted';
  readonly trial: number | null;
  readonly origin: string;
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
  for (const stat of ['p99', 'p95', 'p90'] as const) {
    const key = `${metric}_${stat}_ms` as const;
    const v = slo[key];
    if (v !== undefined) return { key, limitMs: v };
  }
  return null;
}

export function buildParetoData(a: StudyAnalysis, metric: ParetoMetric): ParetoData {
  const spec = a.study.spec;
  const gpus = spec.hardware.count;
  const recTrial = a.summary.recommendation?.trial ?? null;
  const measured = a.trials.filter((t) => t.state === 'complete' && t.result !== null);
  const plane = measured.map((t) => {
    const r = t.result as NonNullable<typeof t.result>;
    return [r[`p99_${metric}_ms`], -r.output_throughput / gpus];
  });
  const onFront = new Set(paretoFront(plane));
  const points: ParetoPoint[] = measured.map((t, i) => {
    const r = t.result as NonNullable<typeof t.result>;
    return {
      kind: 'measured',
      trial: t.number,
      origin: t.origin,
      latencyMs: r[`p99_${metric}_ms`],
      latencyLowMs: null,
      latencyHighMs: null,
      throughputPerGpu: r.output_throughput / gpus,
      throughputLow: null,
      throughputHigh: null,
      memoryGib: r.server_metrics?.gpu_memory_reserved_gib ?? null,
      dominated: !onFront.has(i),
      meetsSlo: meetsSlo(spec.slo, r),
      recommended: t.number === recTrial,
      config: (a.effectiveConfigs[t.number] ?? t.config) as Record<string, KnobValue>,
    };
  });
  if (a.model.available) {
    for (const c of a.model.predictedFront) {
      const lat = c.predicted[`${metric}_p99_ms`];
      const tp = c.predicted.output_throughput_per_gpu;
      if (lat === undefined || tp === undefined) continue;
      points.push({
        kind: 'predicted',
        trial: null,
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
