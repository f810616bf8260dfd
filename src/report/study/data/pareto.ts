import type { BenchmarkResult, KnobValue, Slo } from '../../../domain/index.js';
import { assertNever } from '../../../errors.js';
import type { TargetName } from '../../../surrogate/targets.js';
import { meetsSlo } from '../../../domain/index.js';
import { paretoFront } from '../../../optimize/pareto.js';
import type { StudyAnalysis } from '../types.js';

/**
 * The Pareto plot's data: output throughput per GPU against a p99 latency or against joules per output
 * token (the energy axis), one point per measured trial and one per configuration of the surrogate's
 * predicted front (with ±2σ intervals on both axes), each carrying its full effective configuration for
 * the tooltip. Dominance is in the plot's own plane (more throughput, less latency or fewer joules),
 * among the measured points; on the energy axis, trials whose runs had no power figure are left out.
 */
export type ParetoMetric = 'ttft' | 'itl' | 'energy';

export interface ParetoPoint {
  readonly kind: 'measured' | 'predicted';
  readonly trial: number | null;
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
  const measured = a.trials.filter((t) => t.state === 'complete' && t.result !== null && xOf(t.result, metric) !== null);
  const plane = measured.map((t) => {
    const r = t.result as NonNullable<typeof t.result>;
    return [xOf(r, metric) as number, -r.output_throughput / gpus];
  });
  const onFront = new Set(paretoFront(plane));
  const points: ParetoPoint[] = measured.map((t, i) => {
    const r = t.result as NonNullable<typeof t.result>;
    return {
      kind: 'measured',
      trial: t.number,
      origin: t.origin,
      latencyMs: xOf(r, metric) as number,
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
      const lat = c.predicted[PREDICTED_X[metric]];
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
