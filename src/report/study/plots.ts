import { assertNever } from '../../errors.js';
import type { VlSpec } from '../render.js';
import { buildHistoryData } from './data/history.js';
import { buildLatencyData } from './data/latency.js';
import { buildImportanceData, buildParityData, buildPartialDependenceData } from './data/model-plots.js';
import { buildEnergyTradeData } from './data/energy.js';
import { buildParetoData, sloLine } from './data/pareto.js';
import { energyTradeSpec, historySpec, importanceSpec, latencySpec, paretoSpec, paritySpec, partialDependenceSpec, type CdfSlo } from './specs.js';
import type { PlotKind, StudyAnalysis } from './types.js';

/**
 * One plot of the report: its Vega-Lite spec, or why it cannot be drawn (no model, no measured trial),
 * which the report prints in its place.
 */
export type PlotOutcome = { readonly ok: true; readonly spec: VlSpec } | { readonly ok: false; readonly reason: string };

/** Points to “Why these flags” only when the report has that section (explain.ts: a pick, simplified). */
const cannotRank = (a: StudyAnalysis): string =>
  `The surrogate cannot rank the knobs yet: permuting any one of them changes none of its held-out predictions (too few trials, or trials too alike).${
    (a.explanation?.simplification ?? null) === null ? '' : ' “Why these flags” above gives each flag’s gain from vLLM’s defaults instead.'
  }`;

export const PLOT_TITLES: Record<PlotKind, string> = {
  pareto_ttft: 'Pareto front: throughput vs p99 TTFT',
  pareto_itl: 'Pareto front: throughput vs p99 ITL',
  pareto_energy: 'Pareto front: throughput vs joules per token',
  energy_trade: 'Energy against latency',
  history: 'Optimization history',
  importance: 'Knob importance',
  partial_dependence: 'Partial dependence',
  parity: 'Predicted vs measured',
  latency_cdf: 'Latency distributions',
};

export function latencyNote(a: StudyAnalysis): string {
  const sources = new Set(a.latency.map((s) => s.source));
  if (sources.has('sim_records') && !sources.has('result_stats')) return 'per-request records from re-simulating each trial with its own seed (the simulator is deterministic, so these are the records it was measured with)';
  if (sources.has('result_stats') && !sources.has('sim_records')) return `the ${a.targetKind} target keeps no per-request records: drawn through the p50, p90, p95 and p99 of each measured result`;
  return 'per-request records where the simulator could replay the trial, else the measured percentiles';
}

export function plotSpec(a: StudyAnalysis, kind: PlotKind): PlotOutcome {
  const measured = a.trials.some((t) => t.state === 'complete' && t.result !== null);
  const noModel = (): PlotOutcome => ({ ok: false, reason: a.model.available ? 'the surrogate produced nothing to draw' : `No model-based plot: ${a.model.reason}.` });
  switch (kind) {
    case 'pareto_ttft':
    case 'pareto_itl':
      if (!measured) return { ok: false, reason: 'No trial has been measured yet.' };
      return { ok: true, spec: paretoSpec(buildParetoData(a, kind === 'pareto_ttft' ? 'ttft' : 'itl')) };
    case 'pareto_energy':
    case 'energy_trade': {
      if (!measured) return { ok: false, reason: 'No trial has been measured yet.' };
      if (!a.trials.some((t) => t.state === 'complete' && (t.result?.energy?.energy_per_output_token_j ?? 0) > 0)) {
        return { ok: false, reason: 'No measured trial carries an energy figure: the simulator reports one when data/sim-profile.yaml has a power model; a real run measures power with a DCGM exporter or nvidia-smi beside the server.' };
      }
      return { ok: true, spec: kind === 'pareto_energy' ? paretoSpec(buildParetoData(a, 'energy')) : energyTradeSpec(buildEnergyTradeData(a)) };
    }
    case 'history':
      if (a.trials.length === 0) return { ok: false, reason: 'The study has no trials yet.' };
      return { ok: true, spec: historySpec(buildHistoryData(a)) };
    case 'importance': {
      const bars = buildImportanceData(a.model);
      if (bars === null || bars.length === 0) return noModel();
      // All zeros: permutation changes nothing the surrogate can see (too few or too alike trials).
      if (!bars.some((b) => b.importance > 0)) return { ok: false, reason: cannotRank(a) };
      return { ok: true, spec: importanceSpec(bars) };
    }
    case 'partial_dependence': {
      const pd = buildPartialDependenceData(a.model);
      if (pd === null && a.model.available) return { ok: false, reason: cannotRank(a) };
      return pd === null ? noModel() : { ok: true, spec: partialDependenceSpec(pd.rows, pd.knobs, pd.target) };
    }
    case 'parity': {
      const p = buildParityData(a.model);
      return p === null ? noModel() : { ok: true, spec: paritySpec(p) };
    }
    case 'latency_cdf': {
      const rows = buildLatencyData(a.latency);
      if (rows.length === 0) return { ok: false, reason: 'No trial meeting the SLOs (nor vLLM’s defaults) was measured, so there is no candidate to draw.' };
      const slo: CdfSlo = {};
      for (const [metric, key] of [['TTFT', 'ttft'], ['ITL', 'itl']] as const) {
        const line = sloLine(a.study.spec.slo, key);
        if (line !== null) slo[metric] = { key: line.key, limitMs: line.limitMs, q: Number(line.key.split('_')[1]?.slice(1)) / 100 };
      }
      return { ok: true, spec: latencySpec(rows, latencyNote(a), slo) };
    }
    default:
      return assertNever(kind, 'plot kind');
  }
}
