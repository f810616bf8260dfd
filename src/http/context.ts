import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DATA_DIR, type Catalog } from '../catalog/index.js';
import { gpuFromDatasheet } from '../catalog/gpu-file.js';
import type { ResolvedModel } from '../catalog/resolve-model.js';
import { Workload, type Hardware } from '../domain/index.js';
import { LmBenchError, isLmBenchError } from '../errors.js';
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
  /**
   * The onRequest hook of every route that changes state: it runs before the body is read, so a request
   * without the token is a 401 whatever its body (too large, not JSON) and costs no parsing.
   */
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
export function gpuOf(ctx: Pick<ServiceContext, 'catalog'>, ref: GpuRef, field = 'gpu'): Hardware {
  if (typeof ref === 'string') {
    try {
      return ctx.catalog.gpu(ref);
    } catch (err) {
      // The catalog names its own field (`gpu`); in a list (`gpus[2]` of a plan) the error names the entry.
      if (field === 'gpu' || !isLmBenchError(err)) throw err;
      throw new LmBenchError(err.code, err.message, { cause: err, details: { ...err.details, field } });
    }
  }
  try {
    return gpuFromDatasheet(ref, ctx.catalog, { source: 'datasheet figures sent to the service', where: `body.${field}`, code: 'LMB_ERR_INVALID_ARGUMENT', idField: `${field}.id` });
  } catch (err) {
    if (!(err instanceof z.ZodError)) throw err;
    // A figure the request's schema took, but what is derived from it is not a GPU (memory_gb so large
    // or small that 99% of it, the default memory_visible_gib, is infinite or rounds to 0): a 400, not a 500.
    const path = err.issues[0]?.path.map(String) ?? [];
    const derived = path[0] === 'memory_visible_gib' && ref.memory_visible_gib === undefined;
    const at = `${field}.${derived ? 'memory_gb' : path.join('.')}`;
    const why = derived ? `${ref.memory_gb} GB leaves no usable memory_visible_gib (99% of it, in GiB); give a real size or memory_visible_gib` : (err.issues[0]?.message ?? 'invalid');
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `body.${at}: ${why}`, { cause: err, details: { field: at } });
  }
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

/**
 * A request may name a config.json on the service's disk, so `model` can point at any file the service
 * can read, and JSON.parse's message quotes the text where it failed (`"root:x:0:0"...` for /etc/passwd).
 * The service says that such a file is not JSON, never what is in it (the CLI, run by the file's owner,
 * keeps the quote).
 */
export function withoutFileText(err: unknown): unknown {
  if (!isLmBenchError(err, 'LMB_ERR_MODEL_CONFIG_INVALID')) return err;
  const at = err.message.indexOf(': not JSON (');
  if (at < 0) return err;
  return new LmBenchError(err.code, `${err.message.slice(0, at)}: not JSON`, { details: err.details });
}
