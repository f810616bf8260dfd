import { existsSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { z } from 'zod';
import { Hardware } from '../domain/index.js';
import { loadYamlFile } from '../util/yaml.js';
import { registerGpu, type Catalog } from './index.js';

/**
 * `--gpu NAME`: a GPU of the catalog (by id, alias or the name `nvidia-smi` prints), or a YAML file of
 * a GPU's datasheet figures for one the catalog lacks. The file needs what the cost model prices
 * (memory, HBM bandwidth, dense bf16 and fp8 FLOPs, interconnect, TDP); the rest has defaults, and every
 * field is checked with its line named. The GPU is registered, so later lookups by its id find it.
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

const YAML = new Set(['.yaml', '.yml']);

export function resolveGpu(name: string, catalog: Catalog, cwd: string = process.cwd()): Hardware {
  const path = resolve(cwd, name);
  if (!YAML.has(extname(name).toLowerCase()) || !existsSync(path)) return catalog.gpu(name);
  const f = loadYamlFile(path, GpuFile, 'LMB_ERR_CONFIG_INVALID');
  const id = f.id ?? basename(path, extname(path));
  const hw: Hardware = Hardware.parse({
    ...f,
    id,
    name: f.name ?? id,
    memory_visible_gib: f.memory_visible_gib ?? Math.round(f.memory_gb * 0.99 * 100) / 100,
    source: f.source ?? `datasheet figures from ${path}`,
  });
  registerGpu(hw);
  return hw;
}
