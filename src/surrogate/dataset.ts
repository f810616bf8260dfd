import type { Catalog } from '../catalog/index.js';
import type { BenchmarkResult, HardwareRef, ServerConfig, StudySpec, Trial, Workload } from '../domain/index.js';
import { isLmBenchError } from '../errors.js';
import type { Store } from '../store/store.js';
import { buildFeatureRow, featureNames, type FeatureContext, type KnobEncoder } from './features.js';
import type { TrainingRow } from './surrogate.js';
import { saturatedResult, trainingTargetsOf } from './targets.js';

/**
 * The training set from the store: every stored run with a workload (measured: it started), plus
 * every study trial that failed to start (`started: false`), which the feasibility model needs, and
 * every one that started and broke under its load (`brokeUnderLoad`), which the sustain model needs. A run
 * that could not keep up with its arrivals is `saturated`, without its queue's figures (targets.ts).
 * Runs without a workload, or naming a GPU or model the catalog lacks, are counted and skipped.
 */
export interface Observation {
  readonly config: ServerConfig;
  readonly hardware: HardwareRef;
  readonly model: string;
  readonly workload: Workload;
  /** null for a launch failure, or for a trial that started and then broke under its load. */
  readonly result: BenchmarkResult | null;
  /** The server started, then failed the load (a run-time OOM, requests lost or refused): no figures. */
  readonly brokeUnderLoad?: boolean;
}

/**
 * Failure classes (optimize/failure-classes.ts, stored in a trial's `failure` attribute) that say a
 * started server broke under the load: the configuration cannot serve it, which the sustain classifier
 * learns. Other started failures (a harness that wrote no result, an unclassified error) say nothing
 * about the configuration and stay out of the training set.
 */
const LOAD_FAILURE_CLASSES: ReadonlySet<string> = new Set(['oom_runtime', 'crash', 'prompt_too_long']);

/** A failed trial whose server started and then broke under its load (class, or requests it lost). */
export function brokeUnderLoad(t: Pick<Trial, 'state' | 'started' | 'attrs'>): boolean {
  if (t.state !== 'failed' || t.started !== true) return false;
  const failure = t.attrs['failure'] as { class?: unknown } | null | undefined;
  if (typeof failure?.class === 'string' && LOAD_FAILURE_CLASSES.has(failure.class)) return true;
  const requests = t.attrs['requests'] as { lost?: unknown } | null | undefined;
  return typeof requests?.lost === 'number' && requests.lost > 0;
}

export interface Dataset {
  readonly featureNames: string[];
  readonly rows: TrainingRow[];
  readonly observations: Observation[];
  readonly skipped: { readonly no_workload: number; readonly unknown_context: number };
}

export interface DatasetFilter {
  readonly model?: string;
  readonly gpu?: string;
}

export function contextFor(o: Pick<Observation, 'hardware' | 'model' | 'workload'>, catalog: Catalog): FeatureContext {
  return { hardware: catalog.gpu(o.hardware.gpu), gpuCount: o.hardware.count, model: catalog.model(o.model), workload: o.workload };
}

export function observationsFromStore(store: Store, filter: DatasetFilter = {}): { observations: Observation[]; noWorkload: number } {
  const observations: Observation[] = [];
  let noWorkload = 0;
  const runFilter = { ...(filter.model === undefined ? {} : { model: filter.model }), ...(filter.gpu === undefined ? {} : { gpu: filter.gpu }) };
  for (const run of store.listRuns(runFilter)) {
    const workload = run.workload ?? run.result.workload;
    if (workload === null) {
      noWorkload++;
      continue;
    }
    observations.push({ config: run.server_config, hardware: run.hardware, model: run.model, workload, result: run.result });
  }
  for (const study of store.listStudies()) {
    const spec = study.spec;
    if (filter.model !== undefined && spec.model !== filter.model) continue;
    if (filter.gpu !== undefined && spec.hardware.gpu !== filter.gpu) continue;
    for (const t of store.listTrials(study.id, { states: ['failed'] })) {
      const broke = brokeUnderLoad(t);
      if (t.started !== false && !broke) continue;
      observations.push({ config: t.config, hardware: spec.hardware, model: spec.model, workload: spec.workload, result: null, ...(broke ? { brokeUnderLoad: true } : {}) });
    }
  }
  return { observations, noWorkload };
}

export function datasetFromObservations(observations: readonly Observation[], catalog: Catalog, encoder: KnobEncoder): Dataset {
  const rows: TrainingRow[] = [];
  const kept: Observation[] = [];
  let unknownContext = 0;
  for (const o of observations) {
    let ctx: FeatureContext;
    try {
      ctx = contextFor(o, catalog);
    } catch (err) {
      if (isLmBenchError(err, 'LMB_ERR_UNKNOWN_GPU') || isLmBenchError(err, 'LMB_ERR_UNKNOWN_MODEL')) {
        unknownContext++;
        continue;
      }
      throw err;
    }
    const f = buildFeatureRow(o.config, ctx, encoder);
    const r = o.result;
    // Some formats lack `completed` (stored as an unavailable 0); any output at all means it served.
    const served = r !== null && (r.completed > 0 || r.output_throughput > 0);
    // A stored run had a server to send its requests to (launch failures are failed trials, result
    // null): one whose every request failed started and broke under its load, so it teaches "cannot
    // sustain this load", not "does not start", and no figures (it has none of its workload's).
    const broke = o.brokeUnderLoad === true || (r !== null && !served && r.failed > 0);
    rows.push({
      x: f.row,
      baselines: f.baselines,
      targets: r === null || !served ? {} : trainingTargetsOf(r, o.hardware.count),
      started: served || broke,
      saturated: broke || (r !== null && saturatedResult(r)),
    });
    kept.push(o);
  }
  return { featureNames: featureNames(encoder), rows, observations: kept, skipped: { no_workload: 0, unknown_context: unknownContext } };
}

export function datasetFromStore(store: Store, catalog: Catalog, encoder: KnobEncoder, filter: DatasetFilter = {}): Dataset {
  const { observations, noWorkload } = observationsFromStore(store, filter);
  const d = datasetFromObservations(observations, catalog, encoder);
  return { ...d, skipped: { ...d.skipped, no_workload: noWorkload } };
}

/**
 * A study's finished trials as observations (the tuning loop refits the surrogate from these plus
 * the store's history): complete ones with their result, launch failures with `result: null`, and
 * trials that broke under their load with `result: null, brokeUnderLoad: true`.
 */
export function observationsFromTrials(trials: readonly Trial[], spec: StudySpec): Observation[] {
  const out: Observation[] = [];
  for (const t of trials) {
    const broke = brokeUnderLoad(t);
    const result = t.state === 'complete' ? t.result : t.state === 'failed' && (t.started === false || broke) ? null : undefined;
    if (result === undefined) continue;
    out.push({ config: t.config, hardware: spec.hardware, model: spec.model, workload: spec.workload, result, ...(broke ? { brokeUnderLoad: true } : {}) });
  }
  return out;
}
