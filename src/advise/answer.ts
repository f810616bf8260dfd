import { deploymentCost, loadPrices, type Prices } from '../cost/prices.js';
import type { Catalog } from '../catalog/index.js';
import type { ModelSpec, Objective, RecommendationAnswer as Answer, ServerConfig, Slo, Workload } from '../domain/index.js';
import type { ModelInfo } from '../store/store.js';
import { modelsTarget, type Surrogate } from '../surrogate/surrogate.js';
import { DEFAULT_MIN_P_MEETS_SLO, recommend, type Recommendation, type RecommendedConfig } from '../optimize/recommend.js';
import { surrogateJudge } from '../optimize/evaluate.js';
import { DEFAULT_OBJECTIVES, pickRule, studyObjectiveOf } from '../optimize/objectives.js';
import { DEFAULT_NOISE_REL } from '../optimize/repeats.js';
import { priorSimulator, type PriorDeployment, type PriorRun, type PriorSimulator } from '../calibration/prior-simulator.js';
import type { Evaluate } from '../optimize/simplify.js';
import type { FeatureContext } from '../surrogate/features.js';
import type { TargetValues } from '../surrogate/targets.js';
import { nearestAnswer } from './nearest.js';
import { judgedOnLines } from './judged-on.js';
import { spaceEncoder, spaceSource } from '../optimize/space-source.js';
import type { SearchSpace } from '../space/index.js';
import { createRng } from '../util/rng.js';
import { explainRecommendation } from './explain.js';
import { simulatorDoubts, withDoubts } from '../optimize/doubts.js';
import { enqueueCommand, measureCommands, modelRefOf, servableModel, servedModelWarning, vllmServeCommand, type Deployment } from './commands.js';

/**
 * One recommendation as plain data: the answer `lm-bench recommend`, `POST /v1/recommendations` and
 * the report give for a deployment question, from one saved surrogate. Pure given its inputs (the
 * surrogate and its record are loaded by the caller, once), so the service can memoise it.
 */
export interface Question {
  readonly gpu: string;
  readonly gpus: number;
  readonly model: string;
  readonly workload: Workload;
  /** How the user named the workload file (printed in the commands); the service uses `workload.yaml`. */
  readonly workloadRef: string;
  readonly slo: Slo;
  readonly objectives?: readonly Objective[] | undefined;
  readonly candidates: number;
  readonly seed: number;
  /** Pin the knobs that change the checkpoint's numerics (quantization, KV-cache dtype). */
  readonly keepPrecision: boolean;
  /** The vLLM release served, which the simulator's answers and diagnoses imitate (undefined: a current one). */
  readonly vllmVersion?: string | undefined;
}

/** The answer and where it came from: the public API's schemas (domain/recommendation.ts), the one definition. */
export type { AnswerSource, RecommendationAnswer as Answer } from '../domain/recommendation.js';

let prices: Prices | null = null;

/**
 * The answer with the cost of its pick (issue 25 §3): the deployment's GPUs at their price
 * (data/prices.yaml, or a datasheet's own) and that over the predicted output throughput. Within one
 * GPU type this ranks configurations as throughput per GPU does; it is stated, not optimised here.
 */
export function priceAnswer<A extends Answer>(a: A, q: Pick<Question, 'gpu' | 'gpus'>, catalog: Catalog): A {
  const tput = a.best?.predicted['output_throughput']?.mean;
  if (tput === undefined) return { ...a, cost: null };
  prices ??= loadPrices(catalog);
  return { ...a, cost: deploymentCost(prices, catalog.gpu(q.gpu), q.gpus, tput) };
}

/** The saved model behind an answer: deserialized once by the caller. */
export interface AnsweringModel {
  readonly info: ModelInfo;
  readonly surrogate: Surrogate;
}

/**
 * Measured runs for this deployment the model saw when it was trained (the record's `history`), not
 * the store's count now: an answer depends on the question and the model alone, so a study adding runs
 * in the background does not invalidate every cached answer.
 */
export function historyRunsOf(info: Pick<ModelInfo, 'metadata'>, q: Pick<Question, 'gpu' | 'gpus' | 'model'>): number {
  const h = info.metadata['history'];
  if (typeof h !== 'object' || h === null) return 0;
  const v = (h as Record<string, unknown>)[`${q.gpu}|${q.gpus}|${q.model}`];
  return typeof v === 'number' ? v : 0;
}

/**
 * Each configuration of an answer with what limits it on the workload: the simulator runs it (the
 * calibrated profile when one is stored) and its run's diagnosis rides along, labelled simulated. When
 * the simulator doubts the pick itself (`simulatorDoubts`), the answer's trust says why and asks for the
 * pick to be measured.
 */
export function withSimulatedDiagnoses<R extends Pick<Recommendation, 'best' | 'precision_keeping' | 'pareto' | 'trust'>>(rec: R, simulator: PriorSimulator | undefined): R {
  if (simulator === undefined) return rec;
  type Simulated = Pick<RecommendedConfig, 'diagnosis' | 'saturation'>;
  const cache = new Map<string, { simulated: Simulated; run: PriorRun | null }>();
  const simulatedOf = (c: RecommendedConfig): { simulated: Simulated; run: PriorRun | null } => {
    const key = JSON.stringify(c.config);
    let hit = cache.get(key);
    if (hit === undefined) {
      const run = c.diagnosis === undefined || c.diagnosis === null ? simulator.run(c.config) : null;
      const result = run?.ok === true ? run.result : null;
      hit = { simulated: { diagnosis: c.diagnosis ?? result?.diagnosis ?? null, saturation: c.saturation ?? result?.saturation ?? null }, run };
      cache.set(key, hit);
    }
    return hit;
  };
  const add = <C extends RecommendedConfig>(c: C): C => ({ ...c, ...simulatedOf(c).simulated });
  // The pick and the alternative a user may deploy instead carry the simulator's doubts about them.
  const judged = (c: RecommendedConfig): RecommendedConfig => ({ ...add(c), doubts: simulatorDoubts(c.config, simulatedOf(c).run ?? simulator.run(c.config), simulator) });
  const best = rec.best === null ? null : judged(rec.best);
  const trust = best === null ? rec.trust : withDoubts(rec.trust, best);
  return { ...rec, best, precision_keeping: rec.precision_keeping === null ? null : judged(rec.precision_keeping), pareto: rec.pareto.map(add), trust };
}

/** The deployment a question asks about, as the prior simulator takes it (on `gpus` GPUs, default the question's), its vLLM release included. */
export function questionDeployment(q: Question, gpus = q.gpus): PriorDeployment {
  return { hardware: { gpu: q.gpu, count: gpus }, model: q.model, workload: q.workload, slo: q.slo, vllmVersion: q.vllmVersion };
}

/** The deployment a question asks about, as the commands it prints name it (commands.ts). */
export function commandDeployment(q: Question, catalog: Catalog, model: ModelSpec): Deployment {
  return { gpu: q.gpu, gpus: q.gpus, model: servableModel(model), modelRef: modelRefOf(catalog, model), workload: q.workload, workloadRef: q.workloadRef, slo: q.slo, vllmVersion: q.vllmVersion, keepPrecision: q.keepPrecision };
}

/** The simulator of the question's deployment on another GPU count (the default profile). */
export function defaultSimulatorFor(catalog: Catalog, q: Question): (gpus: number) => PriorSimulator {
  return (gpus) => priorSimulator(null, catalog, questionDeployment(q, gpus));
}

function judgedSample(space: SearchSpace, context: FeatureContext, q: Question, evaluate: Evaluate): { config: ServerConfig; values: TargetValues }[] {
  const pool = spaceSource(space, context, q.keepPrecision ? { pins: space.precisionPins() } : {}).sample(2000, createRng(q.seed).fork('nearest'));
  return evaluate(pool).flatMap((e, i) => (e === null ? [] : [{ config: pool[i] as ServerConfig, values: e.values }]));
}

export function answerQuestion(opts: { readonly model: AnsweringModel; readonly question: Question; readonly space: SearchSpace; readonly catalog: Catalog; readonly simulator?: PriorSimulator; readonly simulatorFor?: (gpus: number) => PriorSimulator }): Answer {
  const { question: q, space, catalog } = opts;
  const { info, surrogate } = opts.model;
  const spec = catalog.model(q.model);
  // As the commands serve it (commands.ts `servableModel`): the figures do not depend on the name.
  const model = servableModel(spec);
  const context = { hardware: catalog.gpu(q.gpu), gpuCount: q.gpus, model, workload: q.workload };
  const historyRuns = historyRunsOf(info, q);
  const mape = info.metrics['output_throughput_per_gpu.mape'];
  const rec0 = recommend({
    surrogate,
    context,
    encoder: spaceEncoder(space),
    source: spaceSource(space, context, q.keepPrecision ? { pins: space.precisionPins() } : {}),
    slo: q.slo,
    ...(q.objectives === undefined ? {} : { objectives: q.objectives }),
    historyRuns,
    validationMape: mape ?? null,
    rng: createRng(q.seed),
    candidates: q.candidates,
    numericsChanges: (c) => space.numericsChanges(c),
  });
  const objective = studyObjectiveOf({ objectives: q.objectives ?? DEFAULT_OBJECTIVES });
  const energyUnknown = objective === 'tokens_per_joule' && !modelsTarget(surrogate, 'energy_per_output_token_j');
  const judge = surrogateJudge({ surrogate, context, encoder: spaceEncoder(space), slo: q.slo, minPMeetsSlo: DEFAULT_MIN_P_MEETS_SLO, numericsChanges: (c) => space.numericsChanges(c) });
  // Knobs whose change the surrogate cannot tell from run-to-run noise go back to vLLM's defaults.
  const explained = explainRecommendation(rec0, { space, context, evaluate: judge.evaluate, describe: judge.describe, rule: pickRule(energyUnknown ? 'goodput' : objective), toleranceRel: DEFAULT_NOISE_REL });
  const rec = withSimulatedDiagnoses(explained, opts.simulator);
  // A relaxed SLO the answer offers must be one the rule then meets (P(meets) ≥ its floor), not one
  // the means merely meet: judged by the same surrogate at that SLO.
  const judgeAt = new Map<string, Evaluate>();
  const meets = (config: ServerConfig, _values: unknown, slo: Slo): boolean => {
    const key = JSON.stringify(slo);
    let evaluate = judgeAt.get(key);
    if (evaluate === undefined) {
      evaluate = surrogateJudge({ surrogate, context, encoder: spaceEncoder(space), slo, minPMeetsSlo: DEFAULT_MIN_P_MEETS_SLO, numericsChanges: (c) => space.numericsChanges(c) }).evaluate;
      judgeAt.set(key, evaluate);
    }
    return evaluate([config])[0]?.meetsSlo === true;
  };
  const nearest = rec.best !== null ? null : nearestAnswer({
    question: q,
    space,
    catalog,
    // Nothing qualified: judge a fresh sample of the space by the surrogate's means, to say what comes nearest.
    judged: judgedSample(space, context, q, judge.evaluate),
    source: 'predicted',
    meets,
    simulatorFor: opts.simulatorFor ?? defaultSimulatorFor(catalog, q),
  });
  const deployment = commandDeployment(q, catalog, spec);
  const study = info.metadata['study'];
  return priceAnswer({
    ...rec,
    surrogate_id: info.id,
    source: { kind: 'surrogate', surrogate_id: info.id, study: typeof study === 'string' ? study : null, validated: info.metadata['validated'] === true, trained_at_ms: info.created_at_ms, simulator: null },
    slo: q.slo,
    keep_precision: q.keepPrecision,
    history_runs: historyRuns,
    vllm_command: rec.best === null ? null : vllmServeCommand(model, rec.best.config),
    precision_keeping_command: rec.precision_keeping === null ? null : vllmServeCommand(model, rec.precision_keeping.config),
    measure_next: measureCommands(deployment, rec.trust.run_next),
    enqueue_command: enqueueCommand(deployment, rec.trust.run_next),
    // A p90/p95 limit read on the predicted p99, a mean on the median: said where it happens.
    warnings: [...judgedOnLines(q.slo, 'predicted'), ...servedModelWarning(spec), ...rec.warnings],
    nearest,
  }, q, catalog);
}
