import { answerQuestion, priceAnswer, questionDeployment, type Answer, type AnsweringModel, type Question } from '../advise/answer.js';
import { defaultCatalog } from '../catalog/index.js';
import { deserializeSurrogate } from '../surrogate/surrogate.js';
import { simulatedAnswer } from '../advise/simulated-answer.js';
import { cachedSimulator, priorSimulator, type PriorRun, type PriorSimulator } from '../calibration/prior-simulator.js';
import { loadSpace, type SearchSpace } from '../space/index.js';
import type { ModelRecord, Store } from '../store/store.js';

/**
 * One recommendation in the service, the same core as `lm-bench recommend` (src/advise). Runs in the
 * recommendation worker, which opens the store's file read-only; the question was validated on
 * the request thread (names resolved against the catalog, workload loaded).
 */
export type { Answer, Question } from '../advise/answer.js';

const spaces = new Map<string, SearchSpace>();

export function spaceAt(path: string): SearchSpace {
  let s = spaces.get(path);
  if (s === undefined) {
    s = loadSpace(path);
    spaces.set(path, s);
  }
  return s;
}

/** A saved model, deserialized once. */
export function answeringModel(record: ModelRecord): AnsweringModel {
  const { blob: _blob, ...info } = record;
  return { info, surrogate: deserializeSurrogate(record.blob) };
}

/** Bound on the simulated runs kept (a few KB each). */
const SIMULATIONS_KEPT = 2048;
const simulations = new Map<string, PriorRun>();

/**
 * The simulator's runs of the configurations an answer diagnoses, kept across questions and models.
 * A run depends on the deployment and the configuration only (the seed is fixed), not on the model
 * that proposed it; a study refits its surrogate after every trial, and successive fits mostly
 * propose the same Pareto members, so each new model's answers reuse the runs of the last one.
 */
function memoized(sim: PriorSimulator, deploymentKey: string): PriorSimulator {
  return cachedSimulator(sim, simulations, `${deploymentKey}|`, SIMULATIONS_KEPT);
}

export function answer(model: AnsweringModel, spacePath: string, question: Question): Answer {
  const catalog = defaultCatalog();
  // The default profile: the worker holds no store (a calibrated profile prices the simulated answers).
  const deployment = questionDeployment(question);
  const simulator = memoized(priorSimulator(null, catalog, deployment), JSON.stringify(deployment));
  return answerQuestion({ model, question, space: spaceAt(spacePath), catalog, simulator });
}

/** The simulator's answer to a question no saved model covers (`store` for a calibrated profile, or null). */
export function simulatedFor(store: Store | null, spacePath: string, q: Question): Answer {
  const catalog = defaultCatalog();
  const simulator = priorSimulator(store, catalog, questionDeployment(q));
  return priceAnswer(simulatedAnswer({ question: q, space: spaceAt(spacePath), catalog, simulator }), q, catalog);
}

