import { existsSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { z } from 'zod';
import { Hardware } from '../domain/index.js';
import { LmBenchError, type ErrorCode } from '../errors.js';
import { loadYamlFile } from '../util/yaml.js';
import { registerGpu, type Catalog } from './index.js';

/**
 * `--gpu NAME`: a GPU of the catalog (by id, alias or the name `nvidia-smi` prints), or a YAML file of
 * a GPU's datasheet figures for one the catalog lacks. The file needs what the cost model prices
 * (memory, HBM bandwidth, dense bf16 and fp8 FLOPs, interconnect, TDP); the rest has defaults, and every
 * field is checked with its line named. The GPU is registered, so later lookups by its id find it.
 * The service takes the same fields inline (http/schemas.ts `InlineGpu`).
 */
export const GpuFile = Hardware.extend({
  id: z.string().min(1).optional(),
  name: z.string().optional(),
  vendor: z.enum(['nvidia', 'amd']).default('nvidia'),
  arch: z.string().default('custom'),
  compute_capability: z.number().nullable().default(null),
  platform: z.enum(['cuda', 'rocm']).default('cuda'),
  /** Defaults to 99% of the datasheet's memory (H100 80GB: 79.2 GiB visible to torch). */
  memory_visible_gib: z.number().positive().optional(),
  source: z.string().min(1).optional(),
});
export type GpuFile = z.infer<typeof GpuFile>;

const YAML = new Set(['.yaml', '.yml']);

export function resolveGpu(name: string, catalog: Catalog, cwd: string = process.cwd()): Hardware {
  const path = resolve(cwd, name);
  if (!YAML.has(extname(name).toLowerCase()) || !existsSync(path)) return catalog.gpu(name);
  const f = loadYamlFile(path, GpuFile, 'LMB_ERR_CONFIG_INVALID');
  const hw = gpuFromDatasheet({ ...f, id: f.id ?? basename(path, extname(path)) }, catalog, {
    source: `datasheet figures from ${path}`,
    where: path,
    code: 'LMB_ERR_CONFIG_INVALID',
    idField: 'id',
  });
  registerGpu(hw);
  return hw;
}

/** Where a datasheet came from: its default `source`, and how its errors name it. */
export interface DatasheetOrigin {
  readonly source: string;
  /** The file, or the request field (`body.gpu`). */
  readonly where: string;
  readonly code: ErrorCode;
  /** `details.field` of an error about the id. */
  readonly idField: string;
}

/**
 * A datasheet's GPU with its defaults filled in (not registered). Its id may not name a catalog GPU:
 * the catalog answers lookups of its own ids first, so the datasheet's figures would silently go unused.
 */
export function gpuFromDatasheet(f: GpuFile & { readonly id: string }, catalog: Catalog, origin: DatasheetOrigin): Hardware {
  const own = catalogGpuNamed(catalog, f.id);
  if (own !== null) {
    throw new LmBenchError(origin.code, `${origin.where}: id "${f.id}" names the catalog's GPU ${own.id}; give the datasheet an id of its own`, {
      details: { field: origin.idField, value: f.id },
    });
  }
  return Hardware.parse({
    ...f,
    name: f.name ?? f.id,
    memory_visible_gib: f.memory_visible_gib ?? Math.round(f.memory_gb * 0.99 * 100) / 100,
    source: f.source ?? origin.source,
  });
}

function catalogGpuNamed(catalog: Catalog, name: string): Hardware | null {
  const hit = catalog.findGpu(name);
  return hit !== null && catalog.gpus.includes(hit) ? hit : null;
}

/**
 * The datasheet a study, trial or task carries for its GPU: none for a catalog GPU (every process and
 * node reads data/hardware.yaml), the whole Hardware otherwise (a worker thread, a Slurm node or a later
 * process has no other way to know it).
 */
export function datasheetToCarry(hw: Hardware, catalog: Catalog): Hardware | undefined {
  return catalog.gpus.some((g) => g.id === hw.id) ? undefined : hw;
}

/**
 * What prices a GPU, as a comparable string: the datasheet without its `source` (the same file read from
 * another path is the same GPU). Hardware.parse orders the keys by the schema.
 */
export function gpuFigures(hw: Hardware): string {
  return JSON.stringify(Hardware.parse({ ...hw, source: '-' }));
}
