import type { TargetName } from '../../../surrogate/targets.js';
import type { ModelAnalysis, ParityPair } from '../types.js';

/**
 * Data of the surrogate's plots: knob importance bars, partial-dependence curves of the most
 * important knobs, and the parity plot of predicted against measured values with its error band.
 * Each returns null when no model could be trained (the report says why instead of drawing).
 */
export interface ImportanceBar {
  readonly knob: string;
  /** Rise in MAPE (fraction) when the knob's columns are shuffled; ≤ 0 means it did not matter. */
  readonly importance: number;
}

export function buildImportanceData(m: ModelAnalysis): ImportanceBar[] | null {
  if (!m.available) return null;
  return Object.entries(m.importance)
    .map(([knob, importance]) => ({ knob, importance }))
    .sort((a, b) => b.importance - a.importance || a.knob.localeCompare(b.knob));
}

export interface PdRow {
  readonly knob: string;
  /** The knob value as text (ordinal axis) and its position in the knob's grid. */
  readonly value: string;
  readonly order: number;
  readonly mean: number;
  readonly low: number;
  readonly high: number;
}

export function buildPartialDependenceData(m: ModelAnalysis): { target: TargetName; rows: PdRow[]; knobs: string[] } | null {
  if (!m.available || m.partialDependence.length === 0) return null;
  const rows = m.partialDependence.flatMap((pd) => pd.points.map((p, order) => ({ knob: pd.knob, value: String(p.value), order, mean: p.mean, low: p.low, high: p.high })));
  return { target: m.pdTarget, rows, knobs: m.partialDependence.map((p) => p.knob) };
}

export interface ParityData {
  readonly method: 'cross_validation' | 'in_sample';
  readonly folds: number;
  readonly points: readonly ParityPair[];
  /** Per target: the y = x line and the ±MAPE band around it, over the measured range. */
  readonly bands: readonly { readonly target: TargetName; readonly x: number; readonly low: number; readonly high: number }[];
  readonly mape: Partial<Record<TargetName, number>>;
  readonly targets: readonly TargetName[];
}

export function buildParityData(m: ModelAnalysis): ParityData | null {
  if (!m.available || m.parity.length === 0) return null;
  const targets = [...new Set(m.parity.map((p) => p.target))];
  const bands = targets.flatMap((target) => {
    const xs = m.parity.filter((p) => p.target === target).flatMap((p) => [p.measured, p.predicted]);
    const lo = Math.min(...xs);
    const hi = Math.max(...xs);
    const e = m.mape[target] ?? 0;
    const steps = 12;
    return Array.from({ length: steps + 1 }, (_, i) => {
      // Log-spaced: the axes are logarithmic.
      const x = lo * (hi / lo) ** (i / steps);
      return { target, x, low: x * Math.max(0.01, 1 - e), high: x * (1 + e) };
    });
  });
  return { method: m.parityMethod, folds: m.folds, points: m.parity, bands, mape: m.mape, targets };
}
