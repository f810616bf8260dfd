import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { DATA_DIR, type Catalog } from '../catalog/index.js';
import { gpuFromDatasheet } from '../catalog/gpu-file.js';
import type { ResolvedModel } from '../catalog/resolve-model.js';
import { Workload, type Hardware } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import type { SearchSpace } from '../space/index.js';
import type { Store } from '../store/store.js';
import { loadYamlFile } from '../util/yaml.js';
import type { ServiceConfig } from './config.js';
import type { RouteDoc } from './openapi.js';
import type { GpuRef } from './schemas.js';
import type { Planner } from './planner.js';
import type { Recommender } from './recommender.js';
import type { StudyManager } from './study-manager.js';
import type { Trainer } from './trainer.js';

/** What every route plugin is given (registered as plugin options, not globals). */
export interface ServiceContext {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly space: SearchSpace;
  readonly config: ServiceConfig;
  readonly studies: StudyManager;
  readonly recommender: Recommender;
  readonly planner: Planner;
  readonly trainer: Trainer;
  readonly workloads: ReadonlyMap<string, Workload>;
  readonly now: () => number;
  /**
   * A request's `model` to its spec (resolve-model.ts: the catalog, a path on the service's disk, its
   * Hugging Face cache, the hub unless HF_HUB_OFFLINE=1), before anything is stored.
   */
  readonly resolveModel: (name: string) => Promise<ResolvedModel>;
  /** preHandler for routes that change state. */
  readonly auth: (req: FastifyRequest) => Promise<void>;
  /** Each route plugin adds its routes here for the OpenAPI document. */
  readonly docs: RouteDoc[];
}

export function bundledWorkloads(dir = join(DATA_DIR, 'workloads')): Map<string, Workload> {
  const out = new Map<string, Workload>();
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.yaml')).sort()) out.set(basename(f, '.yaml'), loadYamlFile(join(dir, f), Workload, 'LMB_ERR_WORKLOAD_INVALID'));
  return out;
}

/**
 * A request's `gpu`: a name the catalog answers (a stored study's datasheet included, registered when
 * the store opened), or a datasheet sent inline, checked like a `--gpu` file. Not registered here: a
 * request may still be refused, and a study registers the datasheet it keeps when it is created.
 */
export function gpuOf(ctx: Pick<ServiceContext, 'catalog'>, ref: GpuRef): Hardware {
  if (typeof ref === 'string') return ctx.catalog.gpu(ref);
  return gpuFromDatasheet(ref, ctx.catalog, { source: 'datasheet figures sent to the service', where: 'body.gpu', code: 'LMB_ERR_INVALID_ARGUMENT', idField: 'gpu.id' });
}

export function workloadOf(ctx: Pick<ServiceContext, 'workloads'>, ref: string | Workload): Workload {
  if (typeof ref !== 'string') return ref;
  const w = ctx.workloads.get(ref);
  if (w === undefined) {
    throw new LmBenchError('LMB_ERR_WORKLOAD_INVALID', `no bundled workload "${ref}"; known: ${[...ctx.workloads.keys()].join(', ')} (or send the workload itself)`, {
      details: { field: 'workload', value: ref },
    });
  }
  return w;
}
