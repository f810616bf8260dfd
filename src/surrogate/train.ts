import type { Catalog } from '../catalog/index.js';
import { LmBenchError } from '../errors.js';
import type { ModelRecord, Store } from '../store/store.js';
import { createRng } from '../util/rng.js';
import { datasetFromStore, type Dataset, type DatasetFilter } from './dataset.js';
import type { KnobEncoder } from './features.js';
import { saveSurrogate } from './registry.js';
import { DEFAULT_SURROGATE_SPEC, fitSurrogate, measuredRow, type Surrogate, type SurrogateSpec } from './surrogate.js';
import { crossValidate, type FitFn, type ValidationReport } from './validate.js';

/**
 * Training through the store: the history the filter lets in (by default all of it: the features
 * carry the context), k-fold validation, the final fit, saved with its feature schema, scope, the
 * history it saw and its validated metrics (src/surrogate/registry.ts). `lm-bench surrogate train` and the
 * end of every study call it.
 */
export interface TrainOptions {
  readonly spec?: SurrogateSpec;
  readonly seed?: number;
  /** k-fold validation before the final fit; 0 skips it. */
  readonly folds?: number;
  readonly filter?: DatasetFilter;
  /** Fit in a worker pool (src/workers/pool.ts) instead of on this thread. */
  readonly fit?: FitFn;
  readonly spaceName?: string;
  /** Save into this study's slot (replacing its previous surrogate). */
  readonly study?: string;
}

export interface TrainOutcome {
  readonly model: ModelRecord;
  readonly surrogate: Surrogate;
  readonly dataset: Dataset;
  readonly validation: ValidationReport | null;
}

/**
 * The fit of one validation fold. A fold holds out a share of the rows, so its training part can fall
 * below `minRows` on a history just past it (10 runs, 3 folds: 6 or 7 a fold). Such a fold trains its
 * trees on the rows it has, rather than being scored by the simulator prior: the validation reports the
 * error, interval scale and knob importance of the saved model, the tree ensembles, a little
 * pessimistic as k-fold always is, never the prior's (whose importance is 0 for every knob).
 */
export function foldFitOf(fit: FitFn = fitSurrogate): FitFn {
  return (rows, names, sp, r) => {
    const measured = rows.filter(measuredRow).length;
    return fit(rows, names, measured < sp.minRows ? { ...sp, minRows: Math.max(1, measured) } : sp, r);
  };
}

export async function trainFromStore(store: Store, catalog: Catalog, encoder: KnobEncoder, opts: TrainOptions = {}): Promise<TrainOutcome> {
  const spec = opts.spec ?? DEFAULT_SURROGATE_SPEC;
  const seed = opts.seed ?? 0;
  const fit = opts.fit ?? fitSurrogate;
  const dataset = datasetFromStore(store, catalog, encoder, opts.filter);
  const measured = dataset.rows.filter(measuredRow).length;
  if (measured < spec.minRows) {
    throw new LmBenchError(
      'LMB_ERR_HISTORY_TOO_THIN',
      `the store holds ${measured} measured runs with a workload (need ≥ ${spec.minRows}); ingest history or run a study first`,
      { details: { measured, needed: spec.minRows, skipped: dataset.skipped } },
    );
  }
  const rng = createRng(seed);
  const folds = opts.folds ?? 3;
  const validation = folds >= 2 && measured >= folds * 3 ? await crossValidate(dataset.rows, dataset.featureNames, spec, { folds, rng: rng.fork('cv'), fit: foldFitOf(fit) }) : null;
  const fitted = await fit(dataset.rows, dataset.featureNames, spec, rng.fork('final'));
  const surrogate: Surrogate = validation === null ? fitted : { ...fitted, intervalScale: validation.interval_scale };
  const model = saveSurrogate(store, {
    surrogate,
    dataset,
    validation,
    spec,
    seed,
    spaceName: opts.spaceName ?? null,
    scope: opts.filter ?? {},
    study: opts.study ?? null,
  });
  return { model, surrogate, dataset, validation };
}
