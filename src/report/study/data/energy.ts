import type { BenchmarkResult, KnobValue, StudyObjective, Trial } from '../../../domain/index.js';
import { studyObjectiveOf } from '../../../optimize/objectives.js';
import { paretoFront } from '../../../optimize/pareto.js';
import { mean } from '../../../metrics/stats.js';
import { BY_THROUGHPUT, configGroups } from '../../../optimize/repeats.js';
import type { StudyAnalysis } from '../types.js';
import { sloLine, type SloLine } from './pareto.js';

/**
 * The energy–latency trade of a study (issue 25 §4): each measured trial's joules per output token
 * against its p99 TTFT, coloured by the batch it could run (its effective max_num_seqs). A bigger batch
 * spreads each step's power over more tokens, so it saves joules, and makes new requests wait longer
 * for their first token: the trade a `tokens_per_joule` study searches along, under the TTFT SLO drawn
 * as a line. The front is the trials meeting the SLOs that no other such trial beats on both. A
 * configuration measured more than once is one point at the mean of its runs (those with a power
 * figure), as the answer states the pick: run by run, the ring sat on the pick's first run.
 */
export interface EnergyTradePoint {
  /** The configuration's first trial, which names it. */
  readonly trial: number;
  /** The measured trials with a power figure the point is the mean of. */
  readonly runs: readonly number[];
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
  const hasEnergy = (t: Trial): boolean => (t.result?.energy?.energy_per_output_token_j ?? 0) > 0;
  const base = configGroups(a.trials, spec.slo, BY_THROUGHPUT, a.deployment).flatMap((g) => {
    const runs = g.measured.filter(hasEnergy);
    if (runs.length === 0) return [];
    const first = g.trials[0] as Trial;
    const rs = runs.map((t) => t.result as BenchmarkResult);
    const power = rs.map((r) => r.energy?.avg_power_w).filter((w): w is number => typeof w === 'number');
    const cfg = a.effectiveConfigs[first.number] ?? first.config;
    return [
      {
        trial: first.number,
        runs: runs.map((t) => t.number),
        origin: first.origin,
        ttftMs: mean(rs.map((r) => r.p99_ttft_ms)),
        jPerToken: mean(rs.map((r) => r.energy?.energy_per_output_token_j as number)),
        throughputPerGpu: mean(rs.map((r) => r.output_throughput)) / gpus,
        avgPowerW: power.length === 0 ? null : mean(power),
        batch: typeof cfg.max_num_seqs === 'number' ? cfg.max_num_seqs : null,
        // The configuration's verdict, as the summary ranks it: every run finished and met the SLOs.
        meetsSlo: g.feasible,
        recommended: first.number === recTrial,
        config: cfg as Record<string, KnobValue>,
      },
    ];
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
    withoutEnergy: measured.filter((t) => !hasEnergy(t)).length,
  };
}
