import type { KnobValue } from '../../../domain/index.js';
import { meetsSlo, type StudyObjective } from '../../../domain/index.js';
import { studyObjectiveOf } from '../../../optimize/objectives.js';
import { paretoFront } from '../../../optimize/pareto.js';
import type { StudyAnalysis } from '../types.js';
import { sloLine, type SloLine } from './pareto.js';

/**
 * The energy–latency trade of a study (issue 25 §4): each measured trial's joules per output token
 * against its p99 TTFT, coloured by the batch it could run (its effective max_num_seqs). A bigger batch
 * spreads each step's power over more tokens, so it saves joules, and makes new requests wait longer
 * for their first token: the trade a `tokens_per_joule` study searches along, under the TTFT SLO drawn
 * as a line. The front is the trials meeting the SLOs that no other such trial beats on both.
 */
export interface EnergyTradePoint {
  readonly trial: number;
  readonly origin: string;
  readonly ttftMs: number;
  readonly jPerToken: number;
  readonly throughputPerGpu: number;
  /** Average power of all the deployment's GPUs over the run's energy window, W. */
  readonly avgPowerW: number | null;
  /** The trial's effective max_num_seqs (unset knobs at vLLM's defaults); null when unknown. */
  readonly batch: number | null;
  readonly meetsSlo: boolean;
  readonly onFront: boolean;
  readonly recommended: boolean;
  readonly config: Readonly<Record<string, KnobValue>>;
}

export interface EnergyTradeData {
  readonly points: readonly EnergyTradePoint[];
  /** The SLO-meeting non-dominated trials, by TTFT (the staircase drawn through them). */
  readonly front: readonly { readonly ttftMs: number; readonly jPerToken: number }[];
  readonly slo: SloLine | null;
  /** What the study's pick ranked by (the ring's label says it). */
  readonly objective: StudyObjective;
  /** Measured trials left out for want of a power figure. */
  readonly withoutEnergy: number;
}

export function buildEnergyTradeData(a: StudyAnalysis): EnergyTradeData {
  const spec = a.study.spec;
  const gpus = spec.hardware.count;
  const recTrial = a.summary.recommendation?.trial ?? null;
  const measured = a.trials.filter((t) => t.state === 'complete' && t.result !== null);
  const withEnergy = measured.filter((t) => (t.result?.energy?.energy_per_output_token_j ?? 0) > 0);
  const base = withEnergy.map((t) => {
    const r = t.result as NonNullable<typeof t.result>;
    const cfg = a.effectiveConfigs[t.number] ?? t.config;
    return {
      trial: t.number,
      origin: t.origin,
      ttftMs: r.p99_ttft_ms,
      jPerToken: r.energy?.energy_per_output_token_j as number,
      throughputPerGpu: r.output_throughput / gpus,
      avgPowerW: r.energy?.avg_power_w ?? null,
      batch: typeof cfg.max_num_seqs === 'number' ? cfg.max_num_seqs : null,
      meetsSlo: meetsSlo(spec.slo, r),
      recommended: t.number === recTrial,
      config: cfg as Record<string, KnobValue>,
    };
  });
  const feasible = base.map((p, i) => ({ p, i })).filter((x) => x.p.meetsSlo);
  const front = new Set(paretoFront(feasible.map((x) => [x.p.ttftMs, x.p.jPerToken])).map((k) => feasible[k]?.i ?? -1));
  const points = base.map((p, i) => ({ ...p, onFront: front.has(i) }));
  return {
    points,
    front: points
      .filter((p) => p.onFront)
      .map((p) => ({ ttftMs: p.ttftMs, jPerToken: p.jPerToken }))
      .sort((x, y) => x.ttftMs - y.ttftMs),
    slo: sloLine(spec.slo, 'ttft'),
    objective: studyObjectiveOf(spec),
    withoutEnergy: measured.length - withEnergy.length,
  };
}
