import type { Catalog } from '../catalog/index.js';
import type { ServerConfig, StudySpec, Trial } from '../domain/index.js';
import { ClassifiedFailure, classifyFailure, FAILURE_CLASS_TEXT } from '../optimize/failure-classes.js';
import { learnRules, ruleFor, type FailureEvidence, type FailureRule, type RuleBound } from '../optimize/failure-rules.js';
import { resolveConfig } from '../physics/index.js';
import type { Store } from '../store/store.js';
import type { TrialOutcome } from '../targets/types.js';
import { lostRequests } from '../domain/index.js';
import { tooManyLost } from './lost-requests.js';

/**
 * The study's book of failures: it classifies each failed trial from what the target said (kept as the
 * trial's `failure` attribute), learns the rules those failures teach together with the failures of
 * earlier studies of the same deployment (same GPU, GPU count and model; prompt-length and run-time
 * OOM rules only from studies of the same workload), and answers whether a configuration falls under one. The rules
 * are a pure function of the stored trials, so a resumed study, the HTTP API and the report all see
 * the same rules without a table of their own.
 */
export interface FailureBook {
  /** The classification of a failed outcome, of a run whose requests the server refused, or of one that lost too many (lost-requests.ts). */
  classify(outcome: TrialOutcome): ClassifiedFailure | null;
  /** Rules from this study's and earlier studies' failures. */
  rules(): FailureRule[];
  /** Forget the cached rules: a trial has failed since. */
  refresh(): void;
  /** The rule a configuration falls under, or null. */
  ruleFor(config: ServerConfig): FailureRule | null;
  /** Rules that appeared since the last call (for events and progress lines). */
  takeNew(): FailureRule[];
}

/** A trial's stored classification, or null (not failed, or failed before classes existed). */
export function trialFailure(t: Pick<Trial, 'attrs'>): ClassifiedFailure | null {
  const p = ClassifiedFailure.safeParse(t.attrs['failure']);
  return p.success ? p.data : null;
}

/** Studies whose failures carry over to `spec`: same GPU, GPU count and model. */
function relatedStudies(store: Store, spec: StudySpec): { name: string; id: number; sameWorkload: boolean }[] {
  return store
    .listStudies()
    .filter((s) => s.spec.name !== spec.name && s.spec.hardware.gpu === spec.hardware.gpu && s.spec.hardware.count === spec.hardware.count && s.spec.model === spec.model)
    .map((s) => ({ name: s.spec.name, id: s.id, sameWorkload: s.spec.workload.name === spec.workload.name }));
}

export function failureEvidence(store: Store, catalog: Catalog, studyId: number, studyName: string): FailureEvidence[] {
  const study = store.getStudy(studyId);
  const hw = catalog.gpu(study.spec.hardware.gpu);
  const model = catalog.model(study.spec.model);
  const out: FailureEvidence[] = [];
  for (const t of store.listTrials(studyId, { states: ['failed'] })) {
    const failure = trialFailure(t);
    if (failure !== null) out.push({ study: studyName, number: t.number, config: resolveConfig(t.config, hw, model), failure, started: t.started, chosen: Object.keys(t.config) });
  }
  return out;
}

/** The trials of a study that got further than a failure could: measured ones, and those whose server started. */
export function ruleBounds(store: Store, catalog: Catalog, studyId: number, studyName: string): RuleBound[] {
  const study = store.getStudy(studyId);
  const hw = catalog.gpu(study.spec.hardware.gpu);
  const model = catalog.model(study.spec.model);
  return store
    .listTrials(studyId, { states: ['complete', 'failed'] })
    .filter((t) => t.state === 'complete' || t.started === true)
    .map((t) => ({ study: studyName, number: t.number, config: resolveConfig(t.config, hw, model), measured: t.state === 'complete' }));
}

/** The rules a finished or running study has learned (its own failures only), for history, HTTP and the report. */
export function studyRules(store: Store, catalog: Catalog, studyId: number): FailureRule[] {
  const name = store.getStudy(studyId).spec.name;
  return learnRules(failureEvidence(store, catalog, studyId, name), name, ruleBounds(store, catalog, studyId, name));
}

export function createFailureBook(store: Store, catalog: Catalog, spec: StudySpec): FailureBook {
  const hw = catalog.gpu(spec.hardware.gpu);
  const model = catalog.model(spec.model);
  // Earlier studies do not change while this one runs: read them once.
  const related = relatedStudies(store, spec);
  // Rules whose scope is the workload (failure-rules.ts) carry only between studies of the same workload.
  const workloadBound = new Set(['prompt_too_long', 'oom_runtime', 'unknown', 'crash', 'timeout']);
  const carried = related.flatMap((s) => failureEvidence(store, catalog, s.id, s.name).filter((e) => s.sameWorkload || !workloadBound.has(e.failure.class)));
  const carriedBounds = related.filter((s) => s.sameWorkload).flatMap((s) => ruleBounds(store, catalog, s.id, s.name));
  // Recomputed only when the loop says a trial failed (refresh): samplers ask for every candidate.
  let cache: FailureRule[] | null = null;
  // Rules already recorded as events (a resumed study) are not announced again.
  const own = store.findStudy(spec.name);
  const announced = new Set<string>(
    own === null ? [] : store.listEvents({ studyId: own.id, kind: 'failure_rule' }).map((e) => {
      const text = (e.payload as { text?: unknown }).text;
      return typeof text === 'string' ? text : '';
    }),
  );
  const book: FailureBook = {
    classify(outcome) {
      if (outcome.status === 'failed') return classifyFailure({ code: outcome.code, reason: outcome.reason, started: outcome.started });
      const samples = outcome.result.lmb.error_samples ?? [];
      if (outcome.result.failed === 0) return null;
      if (tooManyLost(outcome.result)) {
        // Too many lost to call the run measured, whatever the cause: it fails, with whatever class its errors have.
        if (samples.length > 0) return classifyFailure({ reason: '', started: true, httpErrors: samples });
        const { lost, total } = lostRequests(outcome.result);
        return { class: 'unknown', facts: { requests: lost }, evidence: `${lost} of ${total} requests lost, with no error text` };
      }
      if (samples.length === 0) return null;
      const c = classifyFailure({ reason: '', started: true, httpErrors: samples });
      // Below the limit only a refusal the configuration causes makes a served run a failure (a flaky network does not).
      return c.class === 'prompt_too_long' ? c : null;
    },
    rules() {
      if (cache !== null) return cache;
      const own = store.findStudy(spec.name);
      cache = learnRules(
        [...carried, ...(own === null ? [] : failureEvidence(store, catalog, own.id, spec.name))],
        spec.name,
        [...carriedBounds, ...(own === null ? [] : ruleBounds(store, catalog, own.id, spec.name))],
      );
      return cache;
    },
    /** Called after every finished trial: a measured one bounds the rules learned by contrast. */
    refresh() {
      cache = null;
    },
    ruleFor(config) {
      const rules = book.rules();
      return rules.length === 0 ? null : ruleFor(rules, resolveConfig(config, hw, model));
    },
    takeNew() {
      const fresh = book.rules().filter((r) => !announced.has(r.text));
      for (const r of fresh) announced.add(r.text);
      return fresh;
    },
  };
  return book;
}

/** The failure line of a trial, in words: "out of memory at run time: torch.OutOfMemoryError: …". */
export function failureLine(f: ClassifiedFailure): string {
  return `${FAILURE_CLASS_TEXT[f.class]}${f.evidence === '' ? '' : `: ${f.evidence}`}`;
}
