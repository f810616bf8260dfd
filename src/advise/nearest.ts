import type { Catalog } from '../catalog/index.js';
import { formatSloString, type BenchmarkResult, type Objective, type Saturation, type ServerConfig, type Slo, type Workload } from '../domain/index.js';
import type { FeatureContext } from '../surrogate/features.js';
import { effectiveFlags, spaceJudges } from '../optimize/simplify.js';
import type { TargetValues } from '../surrogate/targets.js';
import { nearestMisses, type MeetsRule, type NearMiss } from '../optimize/nearest.js';
import { DEFAULT_OBJECTIVES, sloConstraints, studyObjectiveOf } from '../optimize/objectives.js';
import type { PriorSimulator } from '../calibration/prior-simulator.js';
import { pMeetsUnderError, saturatedRun, simulatedSearch } from '../optimize/sim-search/index.js';
import { spaceEncoder, spaceSource } from '../optimize/space-source.js';
import type { SearchSpace } from '../space/index.js';
import { createRng } from '../util/rng.js';
import { servableModel, vllmServeCommand } from './commands.js';
import { simulatableSource } from './simulatable-source.js';

/**
 * What to say when nothing meets the SLOs (issue 30): the configurations that come nearest, each with
 * the SLO it would meet, and the smallest changes that make one feasible — relax the SLO to the
 * nearest one's figures, add GPUs (twice, then four times as many, up to 8), or allow fp8 when the
 * question kept the checkpoint's precision. The deployment alternatives are searched on the simulator
 * and labelled so.
 */
export interface NearestCandidate extends NearMiss {
  readonly vllm_command: string;
}

export type FeasibleChangeKind = 'relax_slo' | 'add_gpus' | 'accept_fp8';

export interface FeasibleChange {
  readonly kind: FeasibleChangeKind;
  readonly description: string;
  /** The SLO to ask for instead (relax_slo), else the question's. */
  readonly slo: Slo;
  readonly gpus: number;
  readonly config: ServerConfig;
  readonly vllm_command: string;
  /** Output throughput per GPU of that configuration, and whether the figures are predicted or simulated. */
  readonly output_throughput_per_gpu: number | null;
  readonly source: 'predicted' | 'simulated';
}

/** The simulated answer's floor on P(meets the SLOs) under the simulator's measured error (simulated-answer.ts states its rule with it). */
export const SIMULATED_MIN_P_MEETS_SLO = 0.5;

/** How many simulated configurations could not sustain an open-loop load, and the most any sustained. */
export interface SaturatedShare {
  readonly count: number;
  readonly of: number;
  /** The highest rate a saturated one sustained (sim/saturation.ts), and the rate it was offered. */
  readonly best_sustained_rps: number;
  readonly offered_rps: number;
}

export interface Nearest {
  readonly candidates: NearestCandidate[];
  /** Each change that makes a configuration meet the SLOs, the least disruptive first. */
  readonly changes: FeasibleChange[];
  /**
   * Simulated configurations whose queue grew without bound: they meet no SLO however far it is
   * relaxed, so they are not among the candidates. Null or absent when none did (or nothing was simulated).
   */
  readonly saturated?: SaturatedShare | null;
}

/** The share of simulated runs that could not sustain the load, or null when none saturated. */
export function saturatedShare(results: readonly (BenchmarkResult | null)[]): SaturatedShare | null {
  const ran = results.filter((r): r is BenchmarkResult => r !== null);
  const sat = ran.map((r) => r.saturation).filter((s): s is Saturation => s !== null && s !== undefined && s.saturated);
  const best = sat.reduce<Saturation | null>((b, s) => (b === null || s.sustained_rps > b.sustained_rps ? s : b), null);
  return best === null ? null : { count: sat.length, of: ran.length, best_sustained_rps: best.sustained_rps, offered_rps: best.offered_rps };
}

/** The parts of a recommendation question (answer.ts `Question`) the alternatives are searched with. */
export interface NearestQuestion {
  readonly gpu: string;
  readonly gpus: number;
  readonly model: string;
  readonly workload: Workload;
  readonly slo: Slo;
  readonly objectives?: readonly Objective[] | undefined;
  readonly candidates: number;
  readonly seed: number;
  readonly keepPrecision: boolean;
}

export interface NearestOptions {
  readonly question: NearestQuestion;
  readonly space: SearchSpace;
  readonly catalog: Catalog;
  /** The configurations the answer judged, with their figures (predicted or simulated). */
  readonly judged: readonly { readonly config: ServerConfig; readonly values: TargetValues }[];
  readonly source: 'predicted' | 'simulated';
  /** The simulator for the same deployment on another GPU count. */
  readonly simulatorFor: (gpus: number) => PriorSimulator;
  /** GPUs a deployment may grow to (default 8: one node). */
  readonly maxGpus?: number;
  /** Whether the answer's rule counts a configuration as meeting an SLO (what a relaxed SLO must satisfy); absent: its figures under the limits. */
  readonly meets?: MeetsRule;
}

const pct = (from: number, to: number): string => `+${Math.round((to / from - 1) * 100)}%`;

/** The best simulated configuration meeting the SLOs on `gpus` GPUs (precision pinned or not), or null. */
/** A config as the flags it changes from vLLM's defaults on `gpus` GPUs (what a command line needs). */
function flagsOnly(opts: NearestOptions, config: ServerConfig, gpus: number): ServerConfig {
  return effectiveFlags(config, spaceJudges(opts.space, contextOn(opts, gpus)).resolve);
}

function contextOn(opts: NearestOptions, gpus: number): FeatureContext {
  const q = opts.question;
  return { hardware: opts.catalog.gpu(q.gpu), gpuCount: gpus, model: opts.catalog.model(q.model), workload: q.workload };
}

function feasibleOn(opts: NearestOptions, gpus: number, keepPrecision: boolean): { config: ServerConfig; tput: number | null } | null {
  const q = opts.question;
  const context = contextOn(opts, gpus);
  const objectives = q.objectives ?? DEFAULT_OBJECTIVES;
  const simulator = opts.simulatorFor(gpus);
  const search = simulatedSearch({
    source: simulatableSource(spaceSource(opts.space, context, keepPrecision ? { pins: opts.space.precisionPins() } : {}), simulator),
    context,
    encoder: spaceEncoder(opts.space),
    slo: q.slo,
    objectives,
    objective: studyObjectiveOf({ objectives }),
    simulate: simulator.simulate,
    rng: createRng(q.seed),
    candidates: Math.min(q.candidates, 5000),
    simulateTop: 12,
  });
  // "A configuration meets the SLOs" as the simulated answer's rule counts it: its run meets them and
  // the simulator's error leaves it at least even odds, or asking again on those GPUs finds nothing.
  const cs = sloConstraints(q.slo);
  const best = search.simulated.filter((c) => c.meetsSlo && !saturatedRun(c.result) && pMeetsUnderError(c.values, cs, {}, c.result) >= SIMULATED_MIN_P_MEETS_SLO).sort((a, b) => b.merit - a.merit)[0];
  return best === undefined ? null : { config: flagsOnly(opts, best.config, gpus), tput: best.values.output_throughput_per_gpu ?? null };
}

export function nearestAnswer(opts: NearestOptions): Nearest {
  const q = opts.question;
  const model = servableModel(opts.catalog.model(q.model));
  const candidates = nearestMisses(opts.judged, q.slo, 3, opts.meets).map((m) => {
    const config = flagsOnly(opts, m.config, q.gpus);
    return { ...m, config, vllm_command: vllmServeCommand(model, config) };
  });
  const changes: FeasibleChange[] = [];
  const first = candidates[0];
  if (first !== undefined) {
    // Every limit the nearest one needs moved: one it meets on its figures may still need room for the rule's margin.
    const what = sloConstraints(q.slo)
      .filter((c) => (first.would_meet[c.key] ?? c.limitMs) !== c.limitMs)
      .map((c) => `${c.key} ${c.limitMs} → ${first.would_meet[c.key] ?? c.limitMs} ms (${pct(c.limitMs, first.would_meet[c.key] ?? c.limitMs)})`)
      .join(', ');
    changes.push({
      kind: 'relax_slo',
      description: `relax the SLO: ${what}; the nearest configuration then meets it${opts.meets === undefined ? '' : ' as the rule asks'} (${opts.source})`,
      slo: first.would_meet,
      gpus: q.gpus,
      config: first.config,
      vllm_command: first.vllm_command,
      output_throughput_per_gpu: first.values.output_throughput_per_gpu ?? null,
      source: opts.source,
    });
  }
  if (q.keepPrecision) {
    const f = feasibleOn(opts, q.gpus, false);
    if (f !== null) {
      changes.push({ kind: 'accept_fp8', description: `allow fp8 weights or KV cache on the same ${q.gpus} GPU${q.gpus === 1 ? '' : 's'}: a configuration meets ${formatSloString(q.slo)} (simulated)`, slo: q.slo, gpus: q.gpus, config: f.config, vllm_command: vllmServeCommand(model, f.config), output_throughput_per_gpu: f.tput, source: 'simulated' });
    }
  }
  for (const gpus of [q.gpus * 2, q.gpus * 4].filter((n) => n <= (opts.maxGpus ?? 8))) {
    const f = feasibleOn(opts, gpus, q.keepPrecision);
    if (f === null) continue;
    changes.push({ kind: 'add_gpus', description: `use ${gpus} GPUs instead of ${q.gpus}: a configuration meets ${formatSloString(q.slo)} (simulated)`, slo: q.slo, gpus, config: f.config, vllm_command: vllmServeCommand(model, f.config), output_throughput_per_gpu: f.tput, source: 'simulated' });
    break;
  }
  return { candidates, changes };
}
