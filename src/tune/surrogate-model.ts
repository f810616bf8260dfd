import type { Catalog } from '../catalog/index.js';
import type { Trial } from '../domain/index.js';
import { isLmBenchError } from '../errors.js';
import { datasetFromStore } from '../surrogate/dataset.js';
import type { KnobEncoder } from '../surrogate/features.js';
import { saveSurrogate } from '../surrogate/registry.js';
import { DEFAULT_SURROGATE_SPEC, fitSurrogate, type Surrogate, type SurrogateSpec } from '../surrogate/surrogate.js';
import { priorSurrogate } from '../surrogate/prior.js';
import { trainFromStore } from '../surrogate/train.js';
import type { Store } from '../store/store.js';
import type { Rng } from '../util/rng.js';

/**
 * The surrogate the study's sampler asks for each round: fitted on the store's history for this GPU
 * and model (ingested runs, earlier studies, and this study's measured trials, which the loop records
 * as runs) plus every launch failure. Refitted only when the training set has grown. Each refit is
 * saved into the study's model slot (when `study` is given), so a crash leaves the latest model behind
 * and `recommend`, the service and the report use it without fitting again.
 */
export interface StudySurrogateOptions {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly encoder: KnobEncoder;
  readonly gpu: string;
  readonly model: string;
  readonly rng: Rng;
  readonly spec?: SurrogateSpec;
  /** Save every refit into this study's slot; undefined keeps them in memory only. */
  readonly study?: string | undefined;
  readonly spaceName?: string | undefined;
  /** Answer from the simulator prior while the history is too thin to train (default true). */
  readonly prior?: boolean;
}

export function studySurrogate(opts: StudySurrogateOptions): (trials: readonly Trial[]) => Promise<Surrogate | null> {
  let cached: { rows: number; surrogate: Surrogate } | null = null;
  let fits = 0;
  const spec = opts.spec ?? DEFAULT_SURROGATE_SPEC;
  return async () => {
    const ds = datasetFromStore(opts.store, opts.catalog, opts.encoder, { gpu: opts.gpu, model: opts.model });
    if (cached !== null && cached.rows === ds.rows.length) return cached.surrogate;
    try {
      const surrogate = await fitSurrogate(ds.rows, ds.featureNames, spec, opts.rng.fork(`fit-${fits++}`));
      cached = { rows: ds.rows.length, surrogate };
      if (opts.study !== undefined) {
        saveSurrogate(opts.store, { surrogate, dataset: ds, validation: null, spec, seed: fits, spaceName: opts.spaceName ?? null, scope: { gpu: opts.gpu, model: opts.model }, study: opts.study });
      }
      return surrogate;
    } catch (err) {
      // Too few runs for trees: the simulator prior, corrected by what has been measured.
      if (isLmBenchError(err, 'LMB_ERR_HISTORY_TOO_THIN')) return opts.prior === false ? null : priorSurrogate(ds.rows, ds.featureNames);
      throw err;
    }
  };
}

/**
 * When a study ends: the surrogate fitted once more on everything the store now holds for its GPU
 * and model, with 3-fold validation (errors, interval calibration, held-out pairs, knob importance),
 * into the study's slot. Null when the history is still too thin for a model.
 */
export async function finalStudySurrogate(opts: Omit<StudySurrogateOptions, 'rng'> & { readonly study: string; readonly seed: number }): Promise<number | null> {
  try {
    const out = await trainFromStore(opts.store, opts.catalog, opts.encoder, {
      filter: { gpu: opts.gpu, model: opts.model },
      folds: 3,
      seed: opts.seed,
      study: opts.study,
      ...(opts.spec === undefined ? {} : { spec: opts.spec }),
      ...(opts.spaceName === undefined ? {} : { spaceName: opts.spaceName }),
    });
    return out.model.id;
  } catch (err) {
    if (isLmBenchError(err, 'LMB_ERR_HISTORY_TOO_THIN')) return null;
    throw err;
  }
}
