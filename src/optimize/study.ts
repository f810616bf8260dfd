import { lostBreaks, type BenchmarkResult, type Objective, type ServerConfig, type Slo, type Study, type StudySpec, type Trial } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { Rng } from '../util/rng.js';
import { goodputPerGpu, measuredScore, objectiveMayBeMissing, objectiveTarget, objectiveVector, pickRule, sloConstraints, studyObjectiveOf } from './objectives.js';
import { paretoFront } from './pareto.js';
import type { Sampler } from './sampler.js';
import { targetsOf, type TargetValues } from '../surrogate/targets.js';
import { remeasureCandidate, type Ranking } from './repeats.js';
import { configKey, type KeyDeployment } from './sampler.js';
import { initialDesignSize } from './surrogate-sampler.js';

/**
 * A study with ask/tell over the store (Optuna's Study facade, `optuna/study/study.py`). The store
 * holds all state — trials move waiting → running → complete | failed | pruned and finished ones are
 * immutable there — so a crashed process resumes by opening the same study again.
 */
export type TellOutcome =
  | { readonly state: 'complete'; readonly result: BenchmarkResult }
  | { readonly state: 'failed'; readonly reason: string; readonly started: boolean | null }
  | { readonly state: 'pruned'; readonly reason?: string };

/**
 * Objective values of a measured result (goodput is throughput per GPU when the SLOs hold, else 0; the
 * SLOs hold only if the requests the run lost, counted as misses, break none of them).
 */
export function valuesFromResult(result: BenchmarkResult, objectives: readonly Objective[], slo: Slo, gpuCount: number): Record<string, number | null> {
  const t = targetsOf(result, gpuCount);
  const out: Record<string, number | null> = {};
  for (const o of objectives) {
    if (o.name === 'goodput_per_gpu') out[o.name] = lostBreaks(slo, result).length > 0 ? 0 : goodputPerGpu(t, sloConstraints(slo));
    else if (o.name === 'max_rate_under_slo') out[o.name] = null;
    else out[o.name] = t[objectiveTarget(o.name)] ?? null;
  }
  return out;
}

/** How a study's measured configurations are ranked: by its objective's figure (throughput per GPU, or joules per token). */
export function studyRanking(spec: StudySpec): Ranking {
  const rule = pickRule(studyObjectiveOf(spec));
  return { score: (r) => measuredScore(r, rule, spec.hardware.count), direction: rule.direction };
}

export class OptimizationStudy {
  readonly #store: Store;
  readonly #sampler: Sampler;
  readonly #rng: Rng;
  readonly #remeasure: boolean;
  readonly #deployment: KeyDeployment | undefined;
  readonly id: number;

  /** Use `createOptimizationStudy`. */
  constructor(store: Store, study: Study, sampler: Sampler, rng: Rng, opts: StudyOptions = {}) {
    this.#store = store;
    this.#sampler = sampler;
    this.#rng = rng;
    this.#remeasure = opts.remeasure ?? true;
    this.#deployment = opts.deployment;
    this.id = study.id;
  }

  get study(): Study {
    return this.#store.getStudy(this.id);
  }
  get spec(): StudySpec {
    return this.study.spec;
  }
  trials(): Trial[] {
    return this.#store.listTrials(this.id);
  }

  /** Queues a configuration to be asked before any the sampler proposes (Optuna `enqueue_trial`). */
  enqueue(config: ServerConfig, attrs: Record<string, unknown> = {}): Trial {
    return this.#store.createTrial(this.id, { config, origin: 'enqueued', state: 'waiting', attrs });
  }

  /**
   * Up to q running trials: enqueued (waiting) ones first, then a re-measurement when the best measured
   * configurations are within noise of each other (repeats.ts; one per ask, once the initial design is
   * done), then the sampler's proposals, each created running so another executor cannot take it.
   */
  async ask(q = 1): Promise<Trial[]> {
    const out: Trial[] = [];
    while (out.length < q) {
      const claimed = this.#store.claimWaitingTrial(this.id);
      if (claimed === null) break;
      out.push(claimed);
    }
    const spec = this.spec;
    const finished = this.trials().filter((t) => t.state === 'complete' || t.state === 'failed').length;
    if (out.length < q && this.#remeasure && finished >= initialDesignSize(spec.budget_trials)) {
      // A pick within noise of others is not a pick: measuring one of them again is worth more than a new candidate.
      const again = remeasureCandidate(this.trials(), spec.slo, spec.budget_trials, studyRanking(spec), this.#deployment);
      if (again !== null) out.push(this.#store.createTrial(this.id, { config: again.config, origin: 'remeasure', state: 'running', attrs: { tied: again.tied } }));
    }
    if (out.length < q) {
      const proposals = await this.#sampler.propose(
        { study: this.study, trials: this.trials(), rng: this.#rng.fork(`ask-${this.trials().length}`), ...(this.#deployment === undefined ? {} : { deployment: this.#deployment }) },
        q - out.length,
      );
      for (const p of proposals) {
        out.push(this.#store.createTrial(this.id, { config: p.config, origin: p.origin, state: 'running', ...(p.attrs === undefined ? {} : { attrs: p.attrs }) }));
      }
    }
    return out;
  }

  /**
   * Records a trial's outcome. A complete outcome whose objectives come out missing or NaN is recorded
   * as failed instead (Optuna's `_tell_with_warning`), except an energy figure: a run without power is
   * still a measurement (its value is null). Telling a finished trial throws LMB_ERR_TRIAL_FINISHED.
   */
  tell(trialId: number, outcome: TellOutcome): Trial {
    const trial = this.#store.getTrial(trialId);
    if (trial.study_id !== this.id) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `trial ${trialId} belongs to another study`);
    const spec = this.spec;
    let told: Trial;
    switch (outcome.state) {
      case 'complete': {
        const values = valuesFromResult(outcome.result, spec.objectives, spec.slo, spec.hardware.count);
        const bad = spec.objectives.filter((o) => {
          if (objectiveMayBeMissing(o.name)) return false;
          const v = values[o.name];
          return v === null || v === undefined || Number.isNaN(v);
        });
        if (bad.length > 0 && outcome.result.completed === 0) {
          told = this.#store.failTrial(trialId, { reason: 'no request completed', started: true, values, result: outcome.result });
        } else if (bad.length > 0) {
          told = this.#store.failTrial(trialId, { reason: `objective(s) ${bad.map((o) => o.name).join(', ')} missing in the result`, started: true, values, result: outcome.result });
        } else {
          told = this.#store.completeTrial(trialId, { values, result: outcome.result });
        }
        break;
      }
      case 'failed':
        told = this.#store.failTrial(trialId, { reason: outcome.reason, started: outcome.started });
        break;
      case 'pruned':
        told = this.#store.pruneTrial(trialId, outcome.reason === undefined ? {} : { reason: outcome.reason });
        break;
    }
    this.#sampler.afterTrial?.(told);
    return told;
  }

  /**
   * Complete trials on the Pareto front of the objectives, among those meeting the SLOs (lost requests
   * counted). A configuration measured more than once is one point, the mean of its measurements, named
   * by its first trial; one that missed the SLOs on any measurement is out, and so is one whose runs
   * lack an objective (no energy figure) and cannot be placed.
   */
  bestTrials(): Trial[] {
    const spec = this.spec;
    const constraints = sloConstraints(spec.slo);
    const groups = new Map<string, { first: Trial; targets: TargetValues[]; ok: boolean }>();
    for (const t of this.#store.listTrials(this.id, { states: ['complete'] })) {
      if (t.result === null) continue;
      const targets = targetsOf(t.result, spec.hardware.count);
      const ok = lostBreaks(spec.slo, t.result).length === 0 && constraints.every((c) => (targets[c.target] ?? Number.POSITIVE_INFINITY) <= c.limitMs);
      const k = configKey(t.config, this.#deployment);
      const g = groups.get(k);
      if (g === undefined) groups.set(k, { first: t, targets: [targets], ok });
      else {
        g.targets.push(targets);
        g.ok &&= ok;
      }
    }
    const placed = [...groups.values()].filter((g) => g.ok).map((g) => ({ g, pt: objectiveVector(meanTargets(g.targets), spec.objectives) }));
    const ok = placed.filter((x) => x.pt.every(Number.isFinite)).map((x) => x.g);
    const pts = placed.filter((x) => x.pt.every(Number.isFinite)).map((x) => x.pt);
    return paretoFront(pts).map((i) => (ok[i] as { first: Trial }).first);
  }
}

export interface StudyOptions {
  /** Re-measure tied best configurations before proposing new ones (default true; benchmarks of samplers turn it off). */
  readonly remeasure?: boolean;
  /**
   * The study's GPU and model: configurations are told apart as vLLM resolves them there (`configKey`),
   * so vLLM's defaults written out are the defaults. Without it, as written.
   */
  readonly deployment?: KeyDeployment;
}

/** The mean of each target over repeated measurements of one configuration. */
function meanTargets(all: readonly TargetValues[]): TargetValues {
  const out: Record<string, number> = {};
  const keys = new Set(all.flatMap((t) => Object.keys(t)));
  for (const k of keys) {
    const xs = all.map((t) => (t as Record<string, number | undefined>)[k]).filter((x): x is number => x !== undefined);
    if (xs.length > 0) out[k] = xs.reduce((a, b) => a + b, 0) / xs.length;
  }
  return out;
}

/** Creates (or resumes, when the same spec exists) a study in the store. */
export function createOptimizationStudy(store: Store, spec: StudySpec, sampler: Sampler, rng: Rng, opts: StudyOptions = {}): OptimizationStudy {
  const study = store.createStudy(spec);
  return new OptimizationStudy(store, study, sampler, rng, opts);
}
