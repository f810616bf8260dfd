import { registerModel, type Catalog } from '../catalog/index.js';
import { configAssignments, type ServerConfig, type StudySpec, type Trial } from '../domain/index.js';
import type { FeatureContext } from '../surrogate/features.js';
import { keyOn } from '../optimize/sampler.js';
import { studyObjectiveOf } from '../optimize/objectives.js';
import { spaceEncoder, spaceSource } from '../optimize/space-source.js';
import { createOptimizationStudy, type OptimizationStudy } from '../optimize/study.js';
import { randomSampler, restrictSource, sampleStartable, type CandidateSource } from '../optimize/samplers.js';
import { surrogateSampler } from '../optimize/surrogate-sampler.js';
import type { Sampler } from '../optimize/sampler.js';
import type { SearchSpace } from '../space/index.js';
import type { Store } from '../store/store.js';
import { assertGpuFitsHistory, registerStudyGpu } from '../store/adopt-gpu.js';
import { createExecutor } from '../targets/executor.js';
import { simSpecRelease } from '../targets/sim-target.js';
import type { TargetSpec } from '../targets/spec.js';
import type { TrialInput } from '../targets/types.js';
import { LmBenchError } from '../errors.js';
import { createRng, type Rng } from '../util/rng.js';
import { createFailureBook, type FailureBook } from './failure-book.js';
import { historySeeds } from './history.js';
import { priorSimulator } from '../calibration/prior-simulator.js';
import { simulatorGuide } from '../optimize/sim-search/index.js';
import { countsAgainstBudget, runTuneLoop, type TuneEvent, type TuneSummary } from './loop.js';
import { earlierRunMs } from './controller-claim.js';
import { maxRateMeasure } from './max-rate.js';
import { finalStudySurrogate, studySurrogate } from './surrogate-model.js';

/**
 * Composition of one tuning study: the store, the search space bound to the study's hardware, model
 * and workload, the sampler (surrogate by default, random as a baseline), the executor for the target,
 * and the loop. Shared by `lm-bench tune`, the benchmarks and (later) the HTTP service.
 */
export interface StudyRunOptions {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly space: SearchSpace;
  readonly spec: StudySpec;
  readonly target: TargetSpec;
  readonly now: () => number;
  readonly sampler?: 'surrogate' | 'random';
  readonly historySeeds?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (e: TuneEvent) => void;
  readonly measure?: Parameters<typeof runTuneLoop>[0]['measure'];
  /** Surrogate sampler tuning (candidate count etc.), mostly for benchmarks and tests. */
  readonly candidates?: number;
  /**
   * Save the study's surrogate at each refit and, validated, at the end (default true), for
   * `recommend`, the service and the report. Benchmarks that only compare tuners turn it off.
   */
  readonly keepSurrogate?: boolean;
  /** Configurations queued right after vLLM's defaults when the study is new (`tune --enqueue`). */
  readonly enqueue?: readonly ServerConfig[];
  /**
   * Where the study's `model_spec` was resolved from (resolve-model.ts `origin`, `location`): recorded
   * with the spec in the history when the study is created, not before, so a study refused on the way
   * (an empty space, a cluster that refuses the job) leaves the database as it was.
   */
  readonly modelSource?: { readonly origin: string; readonly location: string };
}

/**
 * Registers the specs a study carries (a model derived from a config.json, a GPU's datasheet) with the catalog, on create
 * and on resume alike: the study runs the model it began with, whatever the Hugging Face cache (or
 * another study of the same name's checkpoint) says now.
 */
export function registerStudySpecs(spec: StudySpec): void {
  if (spec.model_spec !== undefined) registerModel(spec.model_spec, spec.model_config_hash ?? null);
  // Likewise the GPU a datasheet defined: the study prices the GPU it began with, file or no file.
  registerStudyGpu(spec);
}

/** Stores a new study's derived model spec (store.ts `adoptModelSpec`), under the id the edge gave it. */
function adoptStudyModel(opts: StudyRunOptions): void {
  const { model_spec: spec, model_config_hash: hash } = opts.spec;
  if (spec === undefined || hash === undefined || hash === null) return;
  const adopted = opts.store.adoptModelSpec({ spec, config_hash: hash, origin: opts.modelSource?.origin ?? 'study', location: opts.modelSource?.location ?? `study ${opts.spec.name}` });
  if (adopted.id !== spec.id) {
    // Another writer stored a checkpoint under this id since the edge looked: the study would name the wrong spec.
    throw new LmBenchError('LMB_ERR_STUDY_EXISTS', `the history now holds another config.json under the model id ${spec.id}; run the command again`, { details: { field: 'model' } });
  }
}

export function featureContext(spec: StudySpec, catalog: Catalog): FeatureContext {
  return { hardware: catalog.gpu(spec.hardware.gpu), gpuCount: spec.hardware.count, model: catalog.model(spec.model), workload: spec.workload };
}

export function trialInputOf(spec: StudySpec, trial: Pick<Trial, 'id' | 'number' | 'config'>): TrialInput {
  return {
    trial_id: trial.id,
    trial_number: trial.number,
    study: spec.name,
    // Each trial its own noise stream, reproducible from the study seed.
    seed: (spec.seed * 1000 + trial.number) >>> 0,
    config: trial.config,
    workload: spec.workload,
    hardware: spec.hardware,
    ...(spec.hardware_spec === undefined ? {} : { hardware_spec: spec.hardware_spec }),
    model: spec.model,
    ...(spec.model_spec === undefined ? {} : { model_spec: spec.model_spec }),
    slo: spec.slo,
  };
}

export function buildStudy(opts: StudyRunOptions, failures: FailureBook = createFailureBook(opts.store, opts.catalog, opts.spec)): OptimizationStudy {
  registerStudySpecs(opts.spec);
  const ctx = featureContext(opts.spec, opts.catalog);
  checkEnqueued(opts, ctx);
  const rng = createRng(opts.spec.seed);
  const bound = spaceSource(opts.space, ctx, opts.spec.keep_precision === true ? { pins: opts.space.precisionPins() } : {});
  // The model-based sampler never proposes what a learned failure rule predicts will fail; random
  // search stays the plain baseline it is meant to be.
  const source = opts.sampler === 'random' ? bound : restrictSource(bound, (c) => failures.ruleFor(c) !== null);
  const encoder = spaceEncoder(opts.space);
  let sampler: Sampler;
  if (opts.sampler === 'random') {
    sampler = randomSampler(source);
  } else {
    const guide = simulatorGuide({
      source,
      context: ctx,
      encoder,
      slo: opts.spec.slo,
      objectives: opts.spec.objectives,
      objective: studyObjectiveOf(opts.spec),
      simulate: priorSimulator(opts.store, opts.catalog, { ...opts.spec, vllmVersion: simSpecRelease(opts.target) }).simulate,
      rng: rng.fork('initial-design'),
      simulateTop: 40,
    });
    sampler = surrogateSampler({
      source,
      context: ctx,
      encoder,
      model: studySurrogate({
        store: opts.store,
        catalog: opts.catalog,
        encoder,
        gpu: ctx.hardware.id,
        model: ctx.model.id,
        rng: rng.fork('surrogate'),
        study: opts.keepSurrogate === false ? undefined : opts.spec.name,
        spaceName: opts.space.name,
      }),
      initialDesign: (k, taken) => guide.design(k, taken),
      priorProposals: (k, trials, taken) => guide.propose(k, trials, taken),
      ...(opts.candidates === undefined ? {} : { candidates: opts.candidates }),
    });
  }
  const isNew = opts.store.findStudy(opts.spec.name) === null;
  if (isNew) assertGpuFitsHistory(opts.store, opts.spec.hardware_spec);
  if (isNew && nothingStarts(opts.space, source, ctx, rng)) {
    // Nothing to tune: say which rules leave nothing, before a study is stored.
    const report = opts.space.prune(ctx);
    const culprits = report.rules.filter((r) => r.removed > 0).map((r) => `${r.id} (${r.message})`);
    throw new LmBenchError('LMB_ERR_SPACE_EMPTY', `no configuration of ${opts.spec.space} survives its rules for ${ctx.model.id} on ${opts.spec.hardware.count}× ${ctx.hardware.id}: ${culprits.join('; ') || 'every point is removed'}`, {
      details: { field: 'space', rules: report.rules.filter((r) => r.removed > 0).map((r) => r.id) },
    });
  }
  if (isNew) adoptStudyModel(opts);
  const study = createOptimizationStudy(opts.store, opts.spec, sampler, rng.fork('study'), { deployment: ctx });
  // Keys as vLLM resolves the config on this deployment: `{}` and its defaults spelled out are one configuration.
  const key = keyOn(ctx);
  const seen = new Set(study.trials().map((t) => key(t.config)));
  if (isNew) {
    // A new study: vLLM's defaults first (the baseline every answer is compared with), unless the
    // space's own rules forbid them (a user's policy file): then there is no baseline trial.
    const verdict = opts.space.isFeasible({}, ctx);
    const learned = verdict.ok ? failures.ruleFor({}) : null;
    if (verdict.ok && learned === null) opts.store.createTrial(study.id, { config: {}, origin: 'default', state: 'waiting' });
    else if (learned !== null) opts.store.appendEvent({ studyId: study.id, kind: 'defaults_skipped', payload: { rule: `learned:${learned.class}`, message: learned.text } });
    else opts.store.appendEvent({ studyId: study.id, kind: 'defaults_skipped', payload: { rule: verdict.rule ?? null, message: verdict.message ?? null } });
    seen.add(key({}));
  }
  // Configurations the user queued, once each however often the command is repeated.
  for (const config of opts.enqueue ?? []) {
    if (seen.has(key(config))) continue;
    seen.add(key(config));
    study.enqueue(config, { enqueued_by: 'user' });
  }
  if (isNew) {
    // Then the best configurations the history already has for this deployment.
    for (const config of historySeeds(opts.store, study.study, opts.historySeeds ?? 2, ctx)) {
      if (seen.has(key(config)) || !opts.space.isFeasible(config, ctx).ok || failures.ruleFor(config) !== null) continue;
      seen.add(key(config));
      opts.store.createTrial(study.id, { config, origin: 'history', state: 'waiting' });
    }
  }
  return study;
}

/**
 * True when no configuration of the space can start on the study's deployment. `sample` skips the
 * memory rules (the physics stage screens them), so a model that fits on no configuration of these GPUs
 * (70B on one L4) passed the first check, stored a study, ran no trial and stopped "exhausted" with
 * advice to give it more trials. Draws that all fail to start are confirmed by the exact count
 * (`prune`, seconds) before the study is refused, since startable points can be rare (70B on one
 * H100: 0.25% of the grid); an estimated count never refuses.
 */
function nothingStarts(space: SearchSpace, source: CandidateSource, ctx: FeatureContext, rng: Rng): boolean {
  if (source.sample(1, rng.fork('space-check')).length === 0) return true;
  if (sampleStartable(source, 1, rng.fork('space-check-start')).length > 0) return false;
  // An estimated count (a fine grid too costly to count) can miss rare startable points: not proof.
  const report = space.prune(ctx);
  return report.method === 'exact' && report.points_after === 0;
}

/**
 * Refuses, before anything is stored, a queued configuration the study would not run as asked: one
 * that changes the numerics a `--keep-precision` study holds, or any that the budget leaves no room for
 * (it would wait for ever: the budget of an existing study does not change).
 */
function checkEnqueued(opts: StudyRunOptions, ctx: FeatureContext): void {
  const queued = opts.enqueue ?? [];
  if (queued.length === 0) return;
  const refuse = (c: ServerConfig, why: string): LmBenchError => new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--enqueue ${configAssignments(c)}: ${why}`, { details: { field: 'enqueue' } });
  for (const c of queued) {
    // A configuration the space's rules (vLLM's validation) refuse is still run when queued: the target's
    // refusal is what a user who queues one wants to see, and it becomes a learned rule.
    const changes = opts.spec.keep_precision === true ? opts.space.numericsChanges(c) : [];
    if (changes.length > 0) throw refuse(c, `changes the model's numerics (${changes.join(', ')}), which the study's --keep-precision rules out`);
  }
  // Room in the budget: a queued configuration past it waits for ever. A new study runs vLLM's defaults
  // first; an existing one has its spent trials and those still waiting (queued before, or requeued).
  const existing = opts.store.findStudy(opts.spec.name);
  const trials = existing === null ? [] : opts.store.listTrials(existing.id);
  const budget = existing?.spec.budget_trials ?? opts.spec.budget_trials;
  // (buildStudy creates the defaults trial when the space allows them.)
  const defaultsFirst = existing === null && opts.space.isFeasible({}, ctx).ok;
  const key = keyOn(ctx);
  const stored = new Set(trials.map((t) => key(t.config)));
  if (defaultsFirst) stored.add(key({}));
  const fresh = [...new Map(queued.filter((c) => !stored.has(key(c))).map((c) => [key(c), c])).values()];
  const waiting = trials.filter((t) => t.state === 'waiting');
  const waitingKeys = new Set(waiting.map((t) => key(t.config)));
  const ahead = trials.filter(countsAgainstBudget).length + waiting.length + (defaultsFirst ? 1 : 0);
  const left = queued.filter((c) => waitingKeys.has(key(c))).concat(fresh);
  const first = left[0];
  if (first === undefined || ahead + fresh.length <= budget) return;
  const room = Math.max(0, budget - ahead);
  throw refuse(
    first,
    existing === null
      ? `--budget-trials ${budget} runs vLLM's defaults and ${budget - 1} more, so ${fresh.length - room} of the ${fresh.length} queued would never run; give --budget-trials ${ahead + fresh.length} or more`
      : `study "${existing.spec.name}" has room for ${room} more of its ${budget} trials, so ${ahead + fresh.length - budget} queued would never run; queue them in a new --study`,
  );
}

export async function runStudy(opts: StudyRunOptions): Promise<{ study: OptimizationStudy; summary: TuneSummary }> {
  if (opts.target.kind === 'slurm' && opts.spec.measure === 'max_rate' && opts.measure === undefined) {
    // The bisection runs several loads per configuration; as Slurm jobs each would queue anew.
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--objective max-rate is not available with --target slurm yet (each probe would be a job of its own); use --objective throughput', { details: { field: 'objective' } });
  }
  registerStudySpecs(opts.spec);
  const executor = createExecutor(opts.target, opts.spec.parallel);
  try {
    // A partition, account or GPU request the cluster refuses fails here, before a study is stored.
    await executor.preflight?.(trialInputOf(opts.spec, { id: 0, number: 0, config: {} }));
    const failures = createFailureBook(opts.store, opts.catalog, opts.spec);
    const study = buildStudy(opts, failures);
    // The time budget is the study's running time, whatever ran of it before this resume.
    const deadlineMs = opts.spec.budget_hours === null ? null : opts.now() + opts.spec.budget_hours * 3_600_000 - earlierRunMs(opts.store, study.id);
    const summary = await runTuneLoop({
      study,
      store: opts.store,
      executor,
      budgetTrials: opts.spec.budget_trials,
      deadlineMs,
      now: opts.now,
      trialInput: (t) => trialInputOf(opts.spec, t),
      failures,
      ...(opts.measure !== undefined ? { measure: opts.measure } : opts.spec.measure === 'max_rate' ? { measure: maxRateMeasure() } : {}),
      ...(opts.signal === undefined ? {} : { signal: opts.signal }),
      ...(opts.onEvent === undefined ? {} : { onEvent: opts.onEvent }),
    });
    if (opts.keepSurrogate !== false) {
      const ctx = featureContext(opts.spec, opts.catalog);
      await finalStudySurrogate({
        store: opts.store,
        catalog: opts.catalog,
        encoder: spaceEncoder(opts.space),
        gpu: ctx.hardware.id,
        model: ctx.model.id,
        study: opts.spec.name,
        seed: opts.spec.seed,
        spaceName: opts.space.name,
      });
    }
    return { study, summary };
  } finally {
    await executor.close();
  }
}
