import { existsSync, statSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { z } from 'zod';
import { Hardware } from '../domain/index.js';
import { LmBenchError, type ErrorCode } from '../errors.js';
import { loadYamlFile } from '../util/yaml.js';
import { registerGpu, type Catalog } from './index.js';

/**
 * A datasheet's memory size, GB. 2 TB is past any GPU (B300 and MI355X: 288 GB); nvidia-smi's MiB
 * figure for even a 24 GB card (24564) is past it too.
 */
const MEMORY_GB = { min: 1, max: 2048 } as const;

/**
 * `--gpu NAME`: a GPU of the catalog (by id, alias or the name `nvidia-smi` prints), or a YAML file of
 * a GPU's datasheet figures for one the catalog lacks. The file needs what the cost model prices
 * (memory, HBM bandwidth, dense bf16 and fp8 FLOPs, interconnect, TDP); the rest has defaults, and every
 * field is checked with its line named. The GPU is registered, so later lookups by its id find it.
 * The service takes the same fields inline (http/schemas.ts `InlineGpu`).
 */
export const GpuFile = Hardware.extend({
  id: z.string().min(1).optional(),
  // Each figure in the unit its name says. A datasheet states bandwidth in TB/s, Blackwell's FLOPs in
  // PFLOPS and nvidia-smi memory in MiB: such a number typed as is passes as positive but prices a GPU
  // a thousand times off, so a figure no GPU vLLM runs on has is refused, naming the unit it wants.
  memory_gb: z
    .number()
    .min(MEMORY_GB.min, `under ${MEMORY_GB.min} GB: write the datasheet's memory in GB (80 for an 80 GB card)`)
    .max(MEMORY_GB.max, `over ${MEMORY_GB.max} GB: write the datasheet's memory in GB, not MiB (nvidia-smi's 81559MiB is an 80 GB card)`),
  hbm_bandwidth_gbs: z.number().min(20, 'under 20 GB/s: write the memory bandwidth in GB/s, not TB/s (3.35 TB/s is 3350)'),
  bf16_tflops: z.number().min(5, 'under 5 TFLOPS: write the dense bf16 figure in TFLOPS, not PFLOPS (2.25 PFLOPS is 2250)'),
  fp8_tflops: z.number().min(5, 'under 5 TFLOPS: write the dense fp8 figure in TFLOPS, not PFLOPS (4.5 PFLOPS is 4500), or null for none').nullable(),
  interconnect: z.strictObject({
    kind: Hardware.shape.interconnect.shape.kind,
    bandwidth_gbs: z.number().min(10, 'under 10 GB/s: write the interconnect bandwidth in GB/s, not TB/s (1.8 TB/s is 1800)'),
  }),
  tdp_w: z.number().min(10, 'under 10 W: write the TDP in watts, not kW (1 kW is 1000)'),
  name: z.string().optional(),
  vendor: z.enum(['nvidia', 'amd']).default('nvidia'),
  arch: z.string().default('custom'),
  // vLLM compares capabilities as major × 10 + minor (75 for 7.5); typed that way here, 75 would pass
  // every minimum (a quantization method's, fp8 tensor cores' 8.9) for a GPU that has none of them.
  compute_capability: z
    .number()
    .min(1, 'under 1: write the CUDA compute capability as major.minor (7.5 for a T4, 9.0 for an H100), or null')
    .max(20, 'over 20: write the CUDA compute capability as major.minor (7.5 for a T4, 9.0 for an H100), not as vLLM prints it (75, 90)')
    .nullable()
    .default(null),
  /** Defaults to the vendor's: ROCm for AMD, CUDA for NVIDIA. */
  platform: z.enum(['cuda', 'rocm']).optional(),
  /** Defaults to 99% of the datasheet's memory (H100 80GB: 79.2 GiB visible to torch). */
  memory_visible_gib: z.number().positive().optional(),
  source: z.string().min(1).optional(),
});
export type GpuFile = z.infer<typeof GpuFile>;

const YAML = new Set(['.yaml', '.yml']);

export function resolveGpu(name: string, catalog: Catalog, cwd: string = process.cwd()): Hardware {
  const path = resolve(cwd, name);
  if (!YAML.has(extname(name).toLowerCase())) {
    const hit = catalog.findGpu(name);
    if (hit !== null) return hit;
    // A datasheet saved as .json or .txt would otherwise be reported as an unknown GPU name.
    if (existsSync(path) && statSync(path).isFile()) {
      throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${path}: a GPU datasheet file is YAML named *.yaml or *.yml`, { details: { field: 'gpu', value: name } });
    }
    return catalog.gpu(name);
  }
  if (!existsSync(path)) {
    // A mistyped path is not an unknown GPU name; a history's datasheet is named by its id, not its old file.
    if (catalog.findGpu(name) !== null) return catalog.gpu(name);
    throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `GPU datasheet ${path} does not exist (a datasheet a stored study began with is named by its id, the file's name without .yaml)`, {
      details: { field: 'gpu', value: name },
    });
  }
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
  checkMemory(f, origin);
  const own = catalogGpuNamed(catalog, f.id);
  if (own !== null) {
    throw new LmBenchError(origin.code, `${origin.where}: id "${f.id}" names the catalog's GPU ${own.id}; give the datasheet an id of its own`, {
      details: { field: origin.idField, value: f.id },
    });
  }
  const platform = f.platform ?? (f.vendor === 'amd' ? 'rocm' : 'cuda');
  if ((f.vendor === 'amd') !== (platform === 'rocm')) {
    // vLLM runs AMD GPUs on ROCm and NVIDIA's on CUDA; the rules that differ (C11) would apply the wrong one.
    throw new LmBenchError(origin.code, `${origin.where}: platform: ${platform} does not run ${f.vendor} GPUs (AMD: rocm, NVIDIA: cuda)`, {
      details: { field: origin.idField.replace(/id$/, 'platform') },
    });
  }
  return Hardware.parse({
    ...f,
    platform,
    name: f.name ?? f.id,
    memory_visible_gib: f.memory_visible_gib ?? Math.round(f.memory_gb * 0.99 * 100) / 100,
    source: f.source ?? origin.source,
  });
}

/**
 * The memory figures against each other and, for a service request whose schema bounds them more
 * loosely (http/schemas.ts), against MEMORY_GB. torch sees at most the card's size: an HBM "80 GB" is
 * 80 GiB of chips of which 79.2 are visible, so memory_visible_gib never exceeds memory_gb's number.
 */
function checkMemory(f: GpuFile, origin: DatasheetOrigin): void {
  // The fields sit beside the id: `gpu.id` → `gpu.memory_gb`, a file's `id` → `memory_gb`.
  const at = (field: string): string => origin.idField.replace(/id$/, field);
  const fail = (field: string, why: string): never => {
    throw new LmBenchError(origin.code, `${origin.where}: ${field}: ${why}`, { details: { field: at(field) } });
  };
  if (f.memory_gb < MEMORY_GB.min || f.memory_gb > MEMORY_GB.max) {
    fail('memory_gb', `${f.memory_gb} is not a GPU's memory in GB (${MEMORY_GB.min} to ${MEMORY_GB.max}; nvidia-smi's 81559MiB is an 80 GB card)`);
  }
  if (f.memory_visible_gib !== undefined && f.memory_visible_gib > f.memory_gb) {
    fail('memory_visible_gib', `${f.memory_visible_gib} GiB exceeds the card's ${f.memory_gb} GB; torch sees less than the datasheet's size (79.2 GiB of an 80 GB H100)`);
  }
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
