import type { Catalog } from '../catalog/index.js';
import type { Trial } from '../domain/index.js';
import { isLmBenchError } from '../errors.js';
import { datasetFromStore } from '../model/dataset.js';
import type { KnobEncoder } from '../model/features.js';
import { DEFAULT_SURROGATE_SPEC, fitSurrogate, type Surrogate, type SurrogateSpec } from '../model/surrogate.js';
import type { Store } from '../store/store.js';
import type { Rng } from '../util/rng.js';

/**
 * The surrogate the study's sampler asks for each round: fitted on the store's history for this GPU
 * and model (ingested runs, earlier studies, and this study's measured trials, which the loop records
 * as runs) plus every launch failure. Refitted only when the training set has grown.
 */
export function studySurrogate(opts: {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly encoder: KnobEncoder;
  readonly gpu: string;
  readonly model: string;
  readonly rng: Rng;
  readonly spec?: SurrogateSpec;
}): (trials: readonly Trial[]) => Promise<Surrogate | null> {
  let cached: { rows: number; surrogate: Surrogate } | null = null;
  let fits = 0;
  return async () => {
    const ds = datasetFromStore(opts.store, opts.catalog, opts.encoder, { gpu: opts.gpu, model: opts.model });
    if (cached !== null && cached.rows === ds.rows.length) return cached.surrogate;
    try {
      const surrogate = await fitSurrogate(ds.rows, ds.featureNames, opts.spec ?? DEFAULT_SURROGATE_SPEC, opts.rng.fork(`fit-${fits++}`));
      cached = { rows: ds.rows.length, surrogate };
      return surrogate;
    } catch (err) {
      if (isLmBenchError(err, 'LMB_ERR_HISTORY_TOO_THIN')) return null;
      throw err;
    }
  };
}
