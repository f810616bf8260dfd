import type { Catalog } from '../../catalog/index.js';
import type { Study, StudySpec, Trial } from '../../domain/index.js';
import { OptimizationStudy, studyRanking } from '../../optimize/study.js';
import { configKey, type KeyDeployment, type Sampler } from '../../optimize/sampler.js';
import { configGroups, rankFeasible } from '../../optimize/repeats.js';
import { loadSpace, type SearchSpace } from '../../space/index.js';
import type { Store } from '../../store/store.js';
import { featureContext, registerStudySpecs } from '../../tune/study-runner.js';
import { summarizeStudy } from '../../tune/summary.js';
import { explainStudyPick, type StudyExplanation } from '../../tune/explain-study.js';
import { priorSimulator } from '../../calibration/prior-simulator.js';
import { studyRules } from '../../tune/failure-book.js';
import type { StopReason } from '../../tune/loop.js';
import { createRng } from '../../util/rng.js';
import { latencySeries } from './latency.js';
import { analyzeModel } from './model-analysis.js';
import type { StudyAnalysis } from './types.js';
import { simSpecProfile, simSpecRelease } from '../../targets/sim-target.js';
import { TargetSpec } from '../../targets/spec.js';

/**
 * Gathers a study's report material from the store: trials and the measured summary, effective
 * configurations, the random-search baseline, the prune report of the space, the surrogate's analysis
 * and the latency distributions of the top candidates. The only part of the report with I/O (it reads
 * the study's saved surrogate; it fits none); everything downstream is pure.
 */
export interface AnalyzeOptions {
  readonly catalog: Catalog;
  /** Name or id of a random-search study to compare with; by default one is looked for (same deployment, random trials). */
  readonly baseline?: string | number;
  readonly candidates?: number;
  /** Skip the surrogate (plots that need it say so) or the re-simulation. */
  readonly withModel?: boolean;
  readonly withLatency?: boolean;
  /** Skip the simplification of the pick (it simulates the configurations the study did not measure). */
  readonly withExplanation?: boolean;
  /** The pick's explanation when the caller has it already (the end of `tune` prints it): not computed again. */
  readonly explanation?: StudyExplanation;
  /** Skip the prune report (most of a bare analysis's cost: ~0.8 s for the 12-knob space). */
  readonly withPrune?: boolean;
  /** The space file to load when it is not the study's own (tests). */
  readonly space?: SearchSpace;
}

/** Top candidates whose latency distributions are drawn: the best feasible trials, then vLLM's defaults. */
export const LATENCY_CANDIDATES = 3;

const noSampler: Sampler = { name: 'none', propose: () => Promise.resolve([]) };

/**
 * The trials whose latency distributions are drawn: the best configurations meeting the SLOs ranked as
 * the answer ranks them (summary.ts: one per configuration as vLLM resolves it on `deployment`, its
 * repeats averaged, by the study's own figure), so the first, labelled "recommended", is the pick and
 * names it as the answer does; each is drawn from its first run. Then vLLM's defaults, when they are not
 * among them: their configuration's group, named by its first trial as the answer's "vs vLLM defaults"
 * names it, drawn from its first measured run. The `default` trial itself may be a crash's orphan (failed
 * as stale, run again under another number and origin).
 */
export function latencyCandidates(spec: StudySpec, trials: readonly Trial[], deployment?: KeyDeployment): { label: string; trial: Trial }[] {
  const ranking = studyRanking(spec);
  const groups = configGroups(trials, spec.slo, ranking, deployment);
  const ranked = rankFeasible(groups, ranking).slice(0, LATENCY_CANDIDATES);
  const top = ranked.map((g, i) => ({ label: `${i === 0 ? 'recommended' : `#${i + 1}`} (trial ${(g.trials[0] as Trial).number})`, trial: g.measured[0] as Trial }));
  const def = trials.find((t) => t.origin === 'default');
  const defGroup = def === undefined ? undefined : groups.find((g) => g.key === configKey(def.config, deployment));
  const defRun = defGroup?.measured[0];
  if (defGroup !== undefined && defRun !== undefined && !ranked.includes(defGroup)) top.push({ label: `vLLM defaults (trial ${(defGroup.trials[0] as Trial).number})`, trial: defRun });
  return top;
}

/** A study whose sampler-chosen trials are all random draws (the random-search baseline). */
export function isRandomStudy(trials: readonly Trial[]): boolean {
  const chosen = trials.filter((t) => t.origin !== 'default' && t.origin !== 'history' && t.origin !== 'enqueued');
  return chosen.length > 0 && chosen.every((t) => t.origin === 'random');
}

function sameDeployment(a: StudySpec, b: StudySpec): boolean {
  return a.model === b.model && a.hardware.gpu === b.hardware.gpu && a.hardware.count === b.hardware.count && a.workload.name === b.workload.name && JSON.stringify(a.slo) === JSON.stringify(b.slo);
}

export function findBaseline(store: Store, study: Study, trials: readonly Trial[], explicit?: string | number): { name: string; trials: Trial[]; random: boolean; sameDeployment: boolean } | null {
  if (explicit !== undefined) {
    // Any study may be named: what it is (a random search? the same deployment and SLOs?) is recorded, not assumed.
    const b = store.getStudy(explicit);
    const ts = store.listTrials(b.id);
    return { name: b.spec.name, trials: ts, random: isRandomStudy(ts), sameDeployment: sameDeployment(b.spec, study.spec) };
  }
  if (isRandomStudy(trials)) return null;
  for (const other of store.listStudies()) {
    if (other.id === study.id || !sameDeployment(other.spec, study.spec)) continue;
    const ts = store.listTrials(other.id);
    if (isRandomStudy(ts)) return { name: other.spec.name, trials: ts, random: true, sameDeployment: true };
  }
  return null;
}

function lastStopReason(store: Store, studyId: number): StopReason | null {
  const events = store.listEvents({ studyId, kind: 'study_stopped' });
  const p = events[events.length - 1]?.payload as { reason?: StopReason } | undefined;
  return p?.reason ?? null;
}

export function analyzeStudy(store: Store, studyIdOrName: number | string, opts: AnalyzeOptions): StudyAnalysis {
  const study = store.getStudy(studyIdOrName);
  const spec = study.spec;
  // The model and GPU the study ran, as it ran them (a spec derived from a config.json, a datasheet, travel with the study).
  registerStudySpecs(spec);
  const trials = store.listTrials(study.id);
  const model = opts.catalog.model(spec.model);
  const ctx = featureContext(spec, opts.catalog);
  // Configurations are told apart as vLLM resolves them on the study's GPU and model, as the tuner did.
  const deployment: KeyDeployment = { hardware: ctx.hardware, model: ctx.model };
  // bestTrials only reads the store; the sampler is never asked.
  const front = new OptimizationStudy(store, study, noSampler, createRng(spec.seed), { deployment }).bestTrials();
  let space: SearchSpace | null = opts.space ?? null;
  let spaceError: string | null = null;
  if (space === null) {
    try {
      space = loadSpace(spec.space);
    } catch (err) {
      spaceError = err instanceof Error ? err.message : String(err);
    }
  }
  const summary = summarizeStudy({ study, trials, front, model, hardware: ctx.hardware, stopReason: lastStopReason(store, study.id), rules: studyRules(store, opts.catalog, study.id), ...(space === null ? {} : { numericsChanges: (c: Trial['config']) => (space).numericsChanges(c) }) });
  const effectiveConfigs: Record<number, Trial['config']> = {};
  for (const t of trials) effectiveConfigs[t.number] = space === null ? t.config : space.complete(t.config, ctx);
  const target = ((): TargetSpec | null => {
    try {
      const parsed = TargetSpec.safeParse(JSON.parse(spec.target));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  })();
  const targetKind = target?.kind ?? 'unknown';
  // A sim study's trials are re-simulated with the profile the study priced them with.
  const simProfile = target?.kind === 'sim' ? simSpecProfile(target) : undefined;
  const vllmVersion = target === null ? undefined : simSpecRelease(target);
  const complete = trials.filter((t) => t.state === 'complete' && t.result !== null);
  const recTrial = summary.recommendation === null ? undefined : trials.find((t) => t.number === summary.recommendation?.trial);
  const modelAnalysis =
    opts.withModel === false
      ? ({ available: false, reason: 'the surrogate was not fitted for this rendering' } as const)
      : space === null
        ? ({ available: false, reason: `the study's search space could not be loaded (${spaceError ?? 'unknown'})` } as const)
        : analyzeModel({
            store,
            catalog: opts.catalog,
            space,
            spec,
            context: ctx,
            measured: complete.map((t) => ({ trial: t, config: effectiveConfigs[t.number] ?? t.config })),
            recommended: recTrial === undefined ? null : (effectiveConfigs[recTrial.number] ?? recTrial.config),
            rng: createRng(spec.seed).fork('report'),
            ...(opts.candidates === undefined ? {} : { candidates: opts.candidates }),
          });
  const top = latencyCandidates(spec, trials, deployment);
  return {
    study,
    trials,
    deployment,
    summary,
    effectiveConfigs,
    baseline: findBaseline(store, study, trials, opts.baseline),
    model: modelAnalysis,
    prune: space === null || opts.withPrune === false ? null : space.prune(ctx),
    latency: opts.withLatency === false ? [] : latencySeries({ spec, targetKind, candidates: top, catalog: opts.catalog, profile: simProfile, vllmVersion }),
    targetKind,
    // The pick defended: flags within the noise back at vLLM's defaults, and each remaining flag's gain.
    explanation: space === null || opts.withExplanation === false ? null : opts.explanation ?? explainStudyPick({ summary, trials, spec, space, catalog: opts.catalog, simulator: priorSimulator(store, opts.catalog, { ...spec, vllmVersion }) }),
  };
}
