import { defaultCatalog } from '../catalog/index.js';
import { resolveGpu } from '../catalog/gpu-file.js';
import { resolveModel, type ResolvedModel } from '../catalog/resolve-model.js';
import type { Hardware } from '../domain/index.js';
import type { CliIo } from './io.js';

/**
 * `--model` and `--gpu` at the CLI's edge: resolved once, before anything is stored, so a name that
 * does not resolve fails with its code and writes nothing. Downstream code uses the spec's id.
 */

/** `--offline`: the hub is never asked (as HF_HUB_OFFLINE=1). */
export const OFFLINE_FLAG = { offline: { type: 'boolean' } } as const;

export function resolveModelFlag(name: string, io: CliIo, offline: boolean | undefined): Promise<ResolvedModel> {
  return resolveModel(name, { catalog: defaultCatalog(), env: io.env, cwd: io.cwd, offline: offline === true });
}

/** A catalog GPU (nvidia-smi's names too) or a datasheet YAML, registered for later lookups by id. */
export function resolveGpuFlag(name: string, io: CliIo): Hardware {
  return resolveGpu(name, defaultCatalog(), io.cwd);
}
