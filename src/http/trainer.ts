import type { Catalog } from '../catalog/index.js';
import { DEFAULT_SURROGATE_SPEC, type SurrogateSpec } from '../surrogate/surrogate.js';
import { trainFromStore } from '../surrogate/train.js';
import { spaceEncoder } from '../optimize/space-source.js';
import type { SearchSpace } from '../space/index.js';
import type { ModelInfo, Store } from '../store/store.js';
import { createFitPool, poolFit, type FitPool } from '../surrogate/fit-pool.js';

/**
 * Model training for `POST /v1/surrogates/train` (and its deprecated old name `POST /v1/models/train`): the fits run in the piscina fit pool (src/workers),
 * never on the request thread; trainings run one after another (a second request waits its turn).
 */
export interface TrainRequest {
  readonly folds: number;
  readonly members?: number | undefined;
  readonly rounds?: number | undefined;
  readonly seed: number;
}

export interface TrainReply {
  readonly model: ModelInfo;
  readonly rows: number;
  readonly targets: string[];
}

export interface Trainer {
  train(req: TrainRequest): Promise<TrainReply>;
  readonly busy: boolean;
  close(): Promise<void>;
}

export function createTrainer(opts: { store: Store; catalog: Catalog; space: SearchSpace; threads?: number; onSaved?: () => void }): Trainer {
  let pool: FitPool | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let pending = 0;
  return {
    get busy() {
      return pending > 0;
    },
    train(req) {
      pending++;
      const job = queue.then(async (): Promise<TrainReply> => {
        pool ??= createFitPool(opts.threads === undefined ? {} : { threads: opts.threads });
        const spec: SurrogateSpec = {
          ...DEFAULT_SURROGATE_SPEC,
          members: req.members ?? DEFAULT_SURROGATE_SPEC.members,
          xgb: { ...DEFAULT_SURROGATE_SPEC.xgb, rounds: req.rounds ?? DEFAULT_SURROGATE_SPEC.xgb.rounds ?? 120 },
        };
        const out = await trainFromStore(opts.store, opts.catalog, spaceEncoder(opts.space), { spec, seed: req.seed, folds: req.folds, spaceName: opts.space.name, fit: poolFit(pool) });
        opts.onSaved?.();
        const { blob: _blob, ...info } = out.model;
        return { model: info, rows: out.dataset.rows.length, targets: Object.keys(out.surrogate.targets) };
      });
      queue = job.catch(() => undefined).finally(() => pending--);
      return job;
    },
    async close() {
      await queue;
      await pool?.close();
    },
  };
}
