import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { z } from 'zod';
import { Hardware, ModelSpec, SimProfileFile, withOverrides, type SimProfile } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { loadYamlFile } from '../util/yaml.js';

/** The project root (where data/, configs/ and search-spaces/ live). */
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DATA_DIR = join(PROJECT_ROOT, 'data');

const HardwareFile = z.strictObject({ gpus: z.array(Hardware).min(1) });
const ModelsFile = z.strictObject({ models: z.array(ModelSpec).min(1) });

export interface Catalog {
  readonly gpus: readonly Hardware[];
  readonly models: readonly ModelSpec[];
  /** The simulator's default efficiencies (data/sim-profile.yaml). */
  readonly profile: SimProfile;
  gpu(name: string): Hardware;
  model(name: string): ModelSpec;
  /** The efficiencies the simulator prices this GPU with: the default, with the GPU's platform overrides. */
  profileFor(hw: Hardware): SimProfile;
}

const norm = (s: string): string => s.trim().toLowerCase().replaceAll('_', '-');

function lookup<T extends { id: string; aliases: string[] }>(
  items: readonly T[],
  name: string,
  code: 'LMB_ERR_UNKNOWN_GPU' | 'LMB_ERR_UNKNOWN_MODEL',
  extra: (t: T) => string[] = () => [],
): T {
  const n = norm(name);
  const hit = items.find((t) => [t.id, ...t.aliases, ...extra(t)].some((a) => norm(a) === n));
  if (hit) return hit;
  const what = code === 'LMB_ERR_UNKNOWN_GPU' ? 'GPU' : 'model';
  throw new LmBenchError(code, `unknown ${what} "${name}"; known: ${items.map((t) => t.id).join(', ')}`, {
    details: { field: what === 'GPU' ? 'gpu' : 'model', value: name },
  });
}

export function makeCatalog(gpus: readonly Hardware[], models: readonly ModelSpec[], profile: SimProfile): Catalog {
  return {
    gpus,
    models,
    profile,
    gpu: (name) => lookup(gpus, name, 'LMB_ERR_UNKNOWN_GPU'),
    model: (name) => lookup(models, name, 'LMB_ERR_UNKNOWN_MODEL', (m) => [m.hf_name]),
    profileFor: (hw) => withOverrides(profile, hw.sim),
  };
}

let cached: Catalog | undefined;

/** The catalog from data/hardware.yaml and data/models.yaml, read once per process. */
export function defaultCatalog(): Catalog {
  cached ??= loadCatalog(DATA_DIR);
  return cached;
}

export function loadCatalog(dataDir: string): Catalog {
  const hw = loadYamlFile(join(dataDir, 'hardware.yaml'), HardwareFile);
  const models = loadYamlFile(join(dataDir, 'models.yaml'), ModelsFile);
  const profile = loadYamlFile(join(dataDir, 'sim-profile.yaml'), SimProfileFile);
  return makeCatalog(hw.gpus, models.models, profile.profile);
}
