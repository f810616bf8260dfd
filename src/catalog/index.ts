import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { z } from 'zod';
import { Hardware, ModelSpec, SimProfileFile, releaseProfile, type SimProfile } from '../domain/index.js';
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
  /** The GPU `gpu(name)` would return, or null where it would throw LMB_ERR_UNKNOWN_GPU. */
  findGpu(name: string): Hardware | null;
  model(name: string): ModelSpec;
  /**
   * The catalog's own model (data/models.yaml) by id, alias or Hugging Face id, or null; never a
   * registered one, so `--model ORG/NAME` is read from its config.json even after a stored spec of the
   * same name was registered (resolve-model.ts).
   */
  findOwn(name: string): ModelSpec | null;
  /**
   * The efficiencies the simulator prices this GPU with under a vLLM release (undefined: a current one):
   * the default, with the GPU's overrides (domain/vllm-release.ts).
   */
  profileFor(hw: Hardware, vllmVersion?: string): SimProfile;
}

/**
 * Names compare case-insensitively with `_` and spaces as `-`, and without the vendor's prefix, so the
 * names `nvidia-smi` prints (`NVIDIA H100 80GB HBM3`, `NVIDIA A100-SXM4-80GB`, `AMD Instinct MI300X`)
 * find their GPU through its aliases.
 */
const norm = (s: string): string =>
  s
    .trim()
    .toLowerCase()
    .replace(/[_\s]+/g, '-')
    .replace(/^(nvidia|amd-instinct|amd)-/, '');

function find<T extends { id: string; aliases: string[] }>(items: readonly T[], name: string, extra: (t: T) => string[] = () => []): T | null {
  const n = norm(name);
  return items.find((t) => [t.id, ...t.aliases, ...extra(t)].some((a) => norm(a) === n)) ?? null;
}

/**
 * Models resolved from a config.json (resolve-model.ts) in this process, by id: a study, a stored run
 * or a trial's worker registers the spec it carries, so the catalog's synchronous lookups find it.
 */
const registered = new Map<string, ModelSpec>();
/** The normalised config.json hash each registered spec was derived from (null: unknown). */
const registeredHashes = new Map<string, string | null>();

export function registerModel(spec: ModelSpec, configHash: string | null = null): void {
  registered.set(spec.id, spec);
  if (configHash !== null || !registeredHashes.has(spec.id)) registeredHashes.set(spec.id, configHash);
}

/**
 * A registered (stored) model by id, else by Hugging Face name, with its config hash; null when none.
 * For names that no longer resolve from a file (a `ID@HASH8` id, a cache since emptied).
 */
export function findRegisteredModel(name: string): { spec: ModelSpec; configHash: string | null } | null {
  // A registered model's own id first: two checkpoints of one repo share a Hugging Face name
  // (`qwen/x` and `qwen/x@1a2b3c4d`), and a lookup by id must not land on the other by that name.
  const all = [...registered.values()];
  const spec = find(all, name) ?? find(all, name, (m) => [m.hf_name]);
  return spec === null ? null : { spec, configHash: registeredHashes.get(spec.id) ?? null };
}

/** GPUs read from a datasheet (gpu-file.ts) or carried by a study or trial (`hardware_spec`), by id, likewise. */
const registeredGpus = new Map<string, Hardware>();

/**
 * `replace`: what this process works on now (a file just read, the datasheet a study, trial or task
 * carries) wins. `keep`: a stored study's datasheet, registered as a store opens, never displaces
 * one this process registered first (opening the history must not undo the `--gpu` just given).
 */
export function registerGpu(hw: Hardware, mode: 'replace' | 'keep' = 'replace'): void {
  if (mode === 'keep' && registeredGpus.has(hw.id)) return;
  registeredGpus.set(hw.id, hw);
}

export function makeCatalog(gpus: readonly Hardware[], models: readonly ModelSpec[], profile: SimProfile): Catalog {
  const findOwn = (name: string): ModelSpec | null => find(models, name, (m) => [m.hf_name]);
  const findModel = (name: string): ModelSpec | null => findOwn(name) ?? findRegisteredModel(name)?.spec ?? null;
  const findGpu = (name: string): Hardware | null => find(gpus, name) ?? find([...registeredGpus.values()], name);
  return {
    gpus,
    models,
    profile,
    findGpu,
    gpu: (name) => {
      const hit = findGpu(name);
      if (hit !== null) return hit;
      throw new LmBenchError('LMB_ERR_UNKNOWN_GPU', `unknown GPU "${name}"; known: ${gpus.map((g) => g.id).join(', ')} (or the names nvidia-smi prints for them), or a YAML file of the GPU's datasheet figures`, {
        details: { field: 'gpu', value: name },
      });
    },
    findOwn,
    model: (name) => {
      const hit = findModel(name);
      if (hit !== null) return hit;
      throw new LmBenchError('LMB_ERR_UNKNOWN_MODEL', `unknown model "${name}"; known: ${models.map((m) => m.id).join(', ')}; --model also takes a config.json, a directory holding one, or a Hugging Face repo id`, {
        details: { field: 'model', value: name },
      });
    },
    profileFor: (hw, vllmVersion) => releaseProfile(profile, hw, vllmVersion),
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
