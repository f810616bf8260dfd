import type { Catalog } from '../catalog/index.js';
import { LmBenchError } from '../errors.js';
import type { ModelRecord, Store } from '../store/store.js';
import { createRng } from '../util/rng.js';
import { datasetFromStore, type Dataset, type DatasetFilter } from './dataset.js';
import type { KnobEncoder } from './features.js';
import { DEFAULT_SURROGATE_SPEC, deserializeSurrogate, fitSurrogate, serializeSurrogate, type Surrogate, type SurrogateSpec } from './surrogate.js';
import { crossValidate, type FitFn, type ValidationReport } from './validate.js';

/**
 * Training and loading the surrogate through the store: one model across GPUs, models and workloads
 * (the features carry the context), saved as kind `surrogate` with its feature schema, the history
 * it saw and its cross-validated metrics.
 */
export const SURROGATE_KIND = 'surrogate';

export interface TrainOptions {
  readonly spec?: SurrogateSpec;
  readonly seed?: number;
  /** k-fold validation before the final fit; 0 skips it. */
  readonly folds?: number;
  readonly filter?: DatasetFilter;
  /** Fit in a worker pool (src/workers/pool.ts) instead of on this thread. */
  readonly fit?: FitFn;
  readonly spaceName?: string;
}

export interface TrainOutcome {
  readonly model: ModelRecord;
  readonly surrogate: Surrogate;
  readonly dataset: Dataset;
  readonly validation: ValidationReport | null;
}

/** Flat metrics for the store: `<target>.mape`, `<target>.r2`, `feasibility.accuracy`. */
export function validationMetrics(v: ValidationReport | null): Record<string, number | null> {
  if (v === null) return {};
  const out: Record<string, number | null> = { folds: v.folds, rows: v.rows, 'feasibility.accuracy': v.feasibilityAccuracy };
  for (const [t, s] of Object.entries(v.targets)) {
    out[`${t}.mape`] = Number.isFinite(s.mape) ? s.mape : null;
    out[`${t}.r2`] = Number.isFinite(s.r2) ? s.r2 : null;
  }
  return out;
}

/** Measured runs per `gpu|count|model`, for the trust rule in `recommend`. */
export function historyCounts(d: Dataset): Record<string, number> {
  const out: Record<string, number> = {};
  d.observations.forEach((o, i) => {
    if (d.rows[i]?.started !== true) return;
    const k = `${o.hardware.gpu}|${o.hardware.count}|${o.model}`;
    out[k] = (out[k] ?? 0) + 1;
  });
  return out;
}

export async function trainFromStore(store: Store, catalog: Catalog, encoder: KnobEncoder, opts: TrainOptions = {}): Promise<TrainOutcome> {
  const spec = opts.spec ?? DEFAULT_SURROGATE_SPEC;
  const seed = opts.seed ?? 0;
  const fit = opts.fit ?? fitSurrogate;
  const dataset = datasetFromStore(store, catalog, encoder, opts.filter);
  const measured = dataset.rows.filter((r) => r.started).length;
  if (measured < spec.minRows) {
    throw new LmBenchError(
      'LMB_ERR_HISTORY_TOO_THIN',
      `the store holds ${measured} measured runs with a workload (need ≥ ${spec.minRows}); ingest history or run a study first`,
      { details: { measured, needed: spec.minRows, skipped: dataset.skipped } },
    );
  }
  const rng = createRng(seed);
  const folds = opts.folds ?? 3;
  const validation = folds >= 2 && measured >= folds * 4 ? await crossValidate(dataset.rows, dataset.featureNames, spec, { folds, rng: rng.fork('cv'), fit }) : null;
  const fitted = await fit(dataset.rows, dataset.featureNames, spec, rng.fork('final'));
  const surrogate: Surrogate = validation === null ? fitted : { ...fitted, intervalScale: validation.intervalScale };
  const model = store.saveModel({
    kind: SURROGATE_KIND,
    blob: serializeSurrogate(surrogate),
    metadata: {
      format: 'lm-bench-surrogate/1',
      feature_names: dataset.featureNames,
      targets: Object.keys(surrogate.targets),
      spec,
      seed,
      space: opts.spaceName ?? null,
      rows: dataset.rows.length,
      measured,
      history: historyCounts(dataset),
      skipped: dataset.skipped,
      importance: validation?.importance ?? null,
      interval_scale: validation?.intervalScale ?? null,
    },
    metrics: validationMetrics(validation),
  });
  return { model, surrogate, dataset, validation };
}

/** The latest trained surrogate, or LMB_ERR_MODEL_NOT_TRAINED. */
export function loadLatestSurrogate(store: Store): { record: ModelRecord; surrogate: Surrogate } {
  const record = store.latestModel(SURROGATE_KIND);
  if (record === null) throw new LmBenchError('LMB_ERR_MODEL_NOT_TRAINED', 'no trained surrogate in the store; run `lm-bench model train` first');
  return { record, surrogate: deserializeSurrogate(record.blob) };
}
