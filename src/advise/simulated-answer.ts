import type { Catalog } from '../catalog/index.js';
import { meetsSlo, type ServerConfig, type StudyObjective } from '../domain/index.js';
import { assertNever } from '../errors.js';
import { SIMULATOR_LOG_SD } from '../surrogate/prior.js';
import { targetsOf, type TargetName } from '../surrogate/targets.js';
import { DEFAULT_OBJECTIVES, meetsConstraints, objectiveTarget, sloConstraints, studyObjectiveOf } from '../optimize/objectives.js';
import { cachedSimulator, type PriorSimulator } from '../calibration/prior-simulator.js';
import { vllmConfigYaml, type Interval, type ParetoMember, type Recommendation, type RecommendedConfig } from '../optimize/recommend.js';
import { simulatorEvaluate } from '../optimize/evaluate.js';
import { DEFAULT_NOISE_REL } from '../optimize/repeats.js';
import { explainRecommendation } from './explain.js';
import { encodedDistance, pMeetsUnderError, saturatedRun, simulatedSearch, type SimulatedCandidate } from '../optimize/sim-search/index.js';
import { spaceEncoder, spaceSource } from '../optimize/space-source.js';
import { vllmServeArgs } from '../domain/server-config.js';
import type { SearchSpace } from '../space/index.js';
import { createRng } from '../util/rng.js';
import { commandDeployment, defaultSimulatorFor, type Answer, type Question } from './answer.js';
import { simulatorDoubts, withDoubts } from '../optimize/doubts.js';
import { effectiveFlags, spaceJudges } from '../optimize/simplify.js';
import { configKey } from '../optimize/sampler.js';
import { nearestAnswer, saturatedShare, SIMULATED_MIN_P_MEETS_SLO } from './nearest.js';
import { enqueueCommand, measureCommands, servableModel, servedModelWarning, vllmServeCommand } from './commands.js';
import { judgedOnLines } from './judged-on.js';
import { simulatableSource } from './simulatable-source.js';

/**
 * A recommendation with no history: the simulator answers. A simulated search of the pruned space
 * (optimize/sim-search/search.ts: the physics stage screens the candidates, the best diverse few are run
 * through the discrete-event simulator) gives simulated metrics; each is widened by the simulator's
 * measured error against real vLLM (model/prior.ts `SIMULATOR_LOG_SD`, from docs/calibration.md) into
 * an interval and a probability of meeting the SLOs. The answer says it is simulated, and names the
 * measurements that would most change it: the pick itself (everything rests on it), the best
 * configuration from another region of the Pareto set that could beat it within the simulator's error,
 * and the best one the error leaves unsure about the SLOs.
 */
export { SIMULATED_MIN_P_MEETS_SLO };
/** Candidates the discrete-event simulator runs for one answer (about 0.1 s each). */
export const SIMULATED_TOP = 32;

export function simulatedRule(minP: number, objective: StudyObjective = 'goodput'): string {
  const tail = `among configurations whose simulated run meets the SLOs with P(meets the SLOs) ≥ ${minP}; expected values within ${TIE * 100}% tie, and the tie goes to the one most likely to meet the SLOs (no runs of this GPU and model to train a model on)`;
  const goodput = `the highest expected goodput (simulated output throughput per GPU × P(meets the SLOs) under the simulator's measured error) ${tail}`;
  switch (objective) {
    case 'goodput':
      return `simulated, not measured: ${goodput}`;
    case 'usd_per_mtok':
      return `simulated, not measured: the fewest dollars per million output tokens, which at one GPU type's price per GPU-hour is ${goodput}`;
    case 'tokens_per_joule':
      return `simulated, not measured: the most expected output tokens per joule (the inverse of the simulated joules per output token, all the deployment's GPUs, × P(meets the SLOs) under the simulator's measured error) ${tail}`;
    default:
      return assertNever(objective, 'objective');
  }
}

const Z2 = 2;
/** A configuration whose P(meets the SLOs) is below this is one a measurement could settle either way. */
const UNSURE_BELOW = 0.8;
const TIE = 0.01;
/** How much of the pick's P(meets the SLOs) a simplification may give up. */
const KEEP_MARGIN_P = 0.05;

function intervalOf(value: number, t: TargetName): Interval {
  const sd = SIMULATOR_LOG_SD[t];
  return { mean: value, low: value * Math.exp(-Z2 * sd), high: value * Math.exp(Z2 * sd) };
}

/** P(every SLO holds) under the simulator's measured error (no measurements to correct it). */
const pMeets = (c: SimulatedCandidate, constraints: ReturnType<typeof sloConstraints>): number => (saturatedRun(c.result) ? 0 : pMeetsUnderError(c.values, constraints, {}, c.result));

export interface SimulatedAnswerOptions {
  readonly question: Question;
  readonly space: SearchSpace;
  readonly catalog: Catalog;
  readonly simulator: PriorSimulator;
  /** Candidates the discrete-event simulator runs (default SIMULATED_TOP). */
  readonly simulateTop?: number;
  /** The simulator of the deployment on another GPU count (what nothing-fits answers search). */
  readonly simulatorFor?: (gpus: number) => PriorSimulator;
}

export function simulatedAnswer(opts: SimulatedAnswerOptions): Answer {
  const { question: q, space, catalog } = opts;
  const spec = catalog.model(q.model);
  // As the commands serve it (commands.ts `servableModel`): the figures do not depend on the name.
  const model = servableModel(spec);
  const context = { hardware: catalog.gpu(q.gpu), gpuCount: q.gpus, model, workload: q.workload };
  const objectives = q.objectives ?? DEFAULT_OBJECTIVES;
  const objective = studyObjectiveOf({ objectives });
  const constraints = sloConstraints(q.slo);
  const search1 = (pins: boolean, top: number): ReturnType<typeof simulatedSearch> & { refused: number } => {
    // Only what the simulator lets start and survive its run (simulatable-source.ts): a larger pool must not fill the runs with failures.
    const source = simulatableSource(spaceSource(space, context, pins ? { pins: space.precisionPins() } : {}), opts.simulator);
    const s = simulatedSearch({
      source,
      context,
      encoder: spaceEncoder(space),
      slo: q.slo,
      objectives,
      objective,
      simulate: opts.simulator.simulate,
      rng: createRng(q.seed),
      candidates: q.candidates,
      simulateTop: top,
      refine: top,
    });
    return { ...s, refused: source.refused() };
  };
  const search = search1(q.keepPrecision, opts.simulateTop ?? SIMULATED_TOP);
  const targets = [...new Set<TargetName>(['output_throughput_per_gpu', 'output_throughput', 'ttft_p99_ms', 'itl_p99_ms', 'tpot_p99_ms', 'energy_per_output_token_j', ...objectives.map((o) => objectiveTarget(o.name)), ...constraints.map((c) => c.target)])];
  const describe = (c: SimulatedCandidate): RecommendedConfig => {
    const predicted: Partial<Record<TargetName, Interval>> = {};
    for (const t of targets) {
      const v = c.values[t];
      if (v !== undefined) predicted[t] = intervalOf(v, t);
    }
    return {
      config: c.config,
      predicted,
      p_start: c.result === null ? 0 : 1,
      p_meets_slo: pMeets(c, constraints),
      numerics_changes: space.numericsChanges(c.config),
      diagnosis: c.result?.diagnosis ?? null,
      saturation: c.result?.saturation ?? null,
    };
  };
  const pick = (cands: readonly SimulatedCandidate[]): SimulatedCandidate | null => {
    // Expected goodput (the objective's merit: throughput per GPU, or tokens per joule): a configuration
    // the error may well push past an SLO is worth that much less.
    const value = (c: SimulatedCandidate): number => c.merit * pMeets(c, constraints);
    const eligible = cands.filter((c) => c.result !== null && c.meetsSlo && pMeets(c, constraints) >= SIMULATED_MIN_P_MEETS_SLO).sort((a, b) => value(b) - value(a));
    const top = eligible[0];
    if (top === undefined) return null;
    // Values within 1% tie (a closed loop caps many configurations at the same throughput); the tie
    // goes to the one most likely to meet the SLOs.
    const tied = eligible.filter((c) => value(c) >= value(top) * (1 - TIE));
    return tied.sort((a, b) => pMeets(b, constraints) - pMeets(a, constraints))[0] ?? top;
  };
  const ran = search.simulated.filter((c) => c.result !== null && c.meetsSlo);
  const best = pick(search.simulated);
  // The precision-keeping alternative gets a search of its own: fp8 candidates crowd the first one.
  const keeper = best === null || space.numericsChanges(best.config).length === 0 ? null : pick(search1(true, Math.ceil((opts.simulateTop ?? SIMULATED_TOP) / 2)).simulated);
  const bestRecP = best === null ? null : pMeets(best, constraints);
  const pareto: ParetoMember[] = search.front
    .map((i) => search.simulated[i] as SimulatedCandidate)
    .sort((a, b) => b.goodputPerGpu - a.goodputPerGpu)
    .map((c) => {
      const d = describe(c);
      const beats = best !== null && c !== best && c.merit > best.merit;
      return { ...d, recommended: c === best, note: beats ? `less certain: P(meets the SLOs) ${(d.p_meets_slo * 100).toFixed(0)}% under the simulator's error against the recommendation's ${((bestRecP ?? 0) * 100).toFixed(0)}%` : null };
    });
  if (best !== null && !pareto.some((m) => m.recommended)) pareto.unshift({ ...describe(best), recommended: true, note: null });
  const next = measurementsThatMatter(best, ran, constraints, SIMULATOR_LOG_SD[search.rule.target]);
  const deployment = commandDeployment(q, catalog, spec);
  const sd = SIMULATOR_LOG_SD;
  const rec0: Recommendation = {
    rule: simulatedRule(SIMULATED_MIN_P_MEETS_SLO, objective),
    best: best === null ? null : describe(best),
    precision_keeping: keeper === null ? null : describe(keeper),
    pareto,
    vllm_args: best === null ? null : vllmServeArgs(model.hf_name, best.config),
    vllm_config_yaml: best === null ? null : vllmConfigYaml(model, best.config),
    trust: {
      level: 'thin',
      reasons: [
        // The history may hold runs of this deployment with no surrogate trained on them: say only what is sure.
        `no surrogate trained on measured runs of ${q.model} on ${q.gpu} (\`lm-bench surrogate train\` learns from those the history holds): this answer is simulated (${opts.simulator.profileSource}), not learned from measurements`,
        `the simulator's measured error against real vLLM is about ±${(sd.output_throughput_per_gpu * 100).toFixed(0)}% on throughput, ±${(sd.ttft_p99_ms * 100).toFixed(0)}% on p99 TTFT and ±${(sd.itl_p99_ms * 100).toFixed(0)}% on p99 ITL (one σ, log scale; docs/calibration.md); the intervals are ±2σ of that`,
      ],
      run_next: next,
    },
    // The candidates the simulator's memory model refused were screened as well.
    candidates_scored: search.screened + search.refused,
  };
  // Knobs whose change moves the simulated figure less than run-to-run noise go back to vLLM's defaults.
  // A revert may cost the pick a little of its P(meets the SLOs) under the simulator's error, not more.
  const simulator = cachedSimulator(opts.simulator, new Map());
  const evaluate = simulatorEvaluate(simulator, q.slo, q.gpus, Math.max(SIMULATED_MIN_P_MEETS_SLO, (bestRecP ?? 0) - KEEP_MARGIN_P));
  const evaluatePath = simulatorEvaluate(simulator, q.slo, q.gpus, SIMULATED_MIN_P_MEETS_SLO);
  const describeConfig = (config: ServerConfig): RecommendedConfig => {
    const result = simulator.simulate(config);
    const values = result === null ? {} : targetsOf(result, q.gpus);
    return describe({ config, result, values, meetsSlo: result !== null && !saturatedRun(result) && meetsSlo(q.slo, result), goodputPerGpu: 0, merit: 0, encoded: [] });
  };
  const explained = explainRecommendation(rec0, { space, context, evaluate, evaluatePath, describe: describeConfig, rule: search.rule, toleranceRel: DEFAULT_NOISE_REL });
  // The first run to measure is the pick: as the answer states it, the simplified flags. A rival the
  // search found apart from the pick may be those very flags (the pick's reverted knobs were all it
  // differed in): the same server twice is no second measurement, so the next rival takes its place.
  // Each is written as the flags it changes from vLLM's defaults, as the pick is, so they read side by side.
  const resolve = spaceJudges(space, context).resolve;
  const stated = explained.best?.config ?? null;
  const measured =
    best === null || stated === null
      ? next
      : measurementsThatMatter(best, ran, constraints, SIMULATOR_LOG_SD[search.rule.target], { serverKey: (c) => configKey(effectiveFlags(c, resolve)), stated }).map((c) => (c === best.config ? stated : effectiveFlags(c, resolve)));
  // A pick whose run survived this seed may still risk a run-time OOM: the answer says so (answer.ts),
  // and so does the precision-keeping alternative a user may deploy instead.
  const judged = (c: RecommendedConfig): RecommendedConfig => ({ ...c, doubts: simulatorDoubts(c.config, simulator.run(c.config), simulator) });
  const bestJudged = explained.best === null ? null : judged(explained.best);
  const trust0 = { ...explained.trust, reasons: [...explained.trust.reasons, ...noneRan(search.simulated, simulator, q)], run_next: measured };
  const trust = bestJudged === null ? trust0 : withDoubts(trust0, bestJudged);
  // The alternative is stated as the pick is: the flags it changes from vLLM's defaults, nothing vLLM sets anyway.
  const keeperStated = explained.precision_keeping === null ? null : judged({ ...explained.precision_keeping, config: effectiveFlags(explained.precision_keeping.config, resolve) });
  const rec = { ...explained, best: bestJudged, precision_keeping: keeperStated, trust };
  const near =
    rec.best !== null
      ? null
      : nearestAnswer({
          question: q,
          space,
          catalog,
          // A run that cannot sustain the load meets no SLO however far it is relaxed: not a near miss.
          judged: search.simulated.filter((c) => c.result !== null && !saturatedRun(c.result) && Object.keys(c.values).length > 0).map((c) => ({ config: c.config, values: c.values })),
          source: 'simulated',
          // The rule's test at a relaxed SLO: the simulated figures under the limits, and P(meets) under the simulator's error at least its floor.
          meets: (_config, values, slo) => {
            const cs = sloConstraints(slo);
            return meetsConstraints(values, cs) && pMeetsUnderError(values, cs) >= SIMULATED_MIN_P_MEETS_SLO;
          },
          simulatorFor: (gpus) => (gpus === q.gpus ? opts.simulator : (opts.simulatorFor ?? defaultSimulatorFor(catalog, q))(gpus)),
        });
  // Configurations that could not keep up with the arrivals are no near misses: the answer says how
  // many there were and the most any sustained, the rate a deployment of these GPUs can be sized at.
  const nearest = near === null ? null : { ...near, saturated: saturatedShare(search.simulated.map((c) => c.result)) };
  return {
    ...rec,
    surrogate_id: null,
    source: {
      kind: 'simulator',
      surrogate_id: null,
      study: null,
      validated: false,
      trained_at_ms: null,
      simulator: { profile: opts.simulator.profileSource, simulated: search.simulated.length, log_sd: { ...sd } },
    },
    slo: q.slo,
    keep_precision: q.keepPrecision,
    history_runs: 0,
    vllm_command: rec.best === null ? null : vllmServeCommand(model, rec.best.config),
    precision_keeping_command: rec.precision_keeping === null ? null : vllmServeCommand(model, rec.precision_keeping.config),
    measure_next: measureCommands(deployment, measured),
    enqueue_command: enqueueCommand(deployment, measured),
    warnings: [...judgedOnLines(q.slo, 'simulated'), ...servedModelWarning(spec), ...rec.warnings],
    nearest,
  };
}


/**
 * Why there is no pick when not one simulated configuration ran to the end: "nothing meets the SLOs"
 * alone reads as a latency shortfall, and a relaxed SLO or a near miss cannot help a deployment whose
 * servers do not start (the model does not fit these GPUs). Empty when any ran.
 */
function noneRan(simulated: readonly SimulatedCandidate[], simulator: PriorSimulator, q: Question): string[] {
  if (simulated.length === 0 || simulated.some((c) => c.result !== null)) return [];
  const first = simulated[0] as SimulatedCandidate;
  const run = simulator.run(first.config);
  const failures = simulated.map((c) => simulator.run(c.config)).filter((r) => !r.ok);
  const died = failures.filter((r) => !r.ok && r.failure.phase === 'runtime').length;
  const what = died === 0 ? 'starts' : died === failures.length ? 'survives its run (each died of a run-time CUDA OOM)' : 'runs to the end';
  return [`not one of the ${simulated.length} configurations simulated ${what} on ${q.gpus}× ${q.gpu}${run.ok ? '' : `; the first: ${run.failure.message}`}`];
}

/**
 * The 2–3 runs that would most change a simulated answer: the pick (a miss or a shortfall overturns
 * it), the strongest rival from elsewhere in the space whose figure of merit (throughput, or tokens per
 * joule) could beat the pick's within the simulator's error, and the best configuration whose SLO
 * verdict the error leaves open (a pass would make it the answer).
 */
function measurementsThatMatter(
  best: SimulatedCandidate | null,
  ran: readonly SimulatedCandidate[],
  constraints: ReturnType<typeof sloConstraints>,
  meritLogSd: number,
  // `serverKey`: which server a configuration starts (the flags it changes from vLLM's defaults), two
  // with one key being one run; `stated`: the pick as the answer states it, which the rivals must differ from.
  same: { readonly serverKey: (c: ServerConfig) => string; readonly stated: ServerConfig | null } = { serverKey: (c) => JSON.stringify(c), stated: null },
): ServerConfig[] {
  if (best === null) return [...ran].sort((a, b) => b.merit - a.merit).slice(0, 3).map((c) => c.config);
  const { serverKey, stated } = same;
  const out: SimulatedCandidate[] = [best];
  const taken = new Set([serverKey(best.config), ...(stated === null ? [] : [serverKey(stated)])]);
  const fresh = (c: SimulatedCandidate): boolean => !out.includes(c) && !taken.has(serverKey(c.config));
  const width = Math.exp(2 * Z2 * meritLogSd);
  const rivals = ran.filter((c) => fresh(c) && c.merit * width >= best.merit).sort((a, b) => encodedDistance(b.encoded, best.encoded) * b.merit - encodedDistance(a.encoded, best.encoded) * a.merit);
  if (rivals[0] !== undefined) {
    out.push(rivals[0]);
    taken.add(serverKey(rivals[0].config));
  }
  const unsure = ran
    .filter((c) => fresh(c) && c.merit > 0)
    .map((c) => ({ c, p: pMeets(c, constraints) }))
    .filter((x) => x.p > 0.2 && x.p < UNSURE_BELOW)
    .sort((a, b) => b.c.merit - a.c.merit);
  if (unsure[0] !== undefined) out.push(unsure[0].c);
  return out.slice(0, 3).map((c) => c.config);
}
