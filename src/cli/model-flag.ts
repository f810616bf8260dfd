import { existsSync } from 'node:fs';
import { defaultCatalog } from '../catalog/index.js';
import { resolveGpu } from '../catalog/gpu-file.js';
import { resolveModel, type ResolvedModel } from '../catalog/resolve-model.js';
import type { Hardware } from '../domain/index.js';
import { isLmBenchError, LmBenchError } from '../errors.js';
import { openStore } from '../store/sqlite-store.js';
import type { CliIo } from './io.js';

/**
 * `--model` and `--gpu` at the CLI's edge: resolved once, before anything is stored, so a name that
 * does not resolve fails with its code and writes nothing. Downstream code uses the spec's id.
 */

/** `--offline`: the hub is never asked (as HF_HUB_OFFLINE=1). */
export const OFFLINE_FLAG = { offline: { type: 'boolean' } } as const;

export function resolveModelFlag(name: string, io: CliIo, offline: boolean | undefined): Promise<ResolvedModel> {
  // `--model=` or `--model ""` read as the path "", i.e. the working directory: "…/cwd is a directory
  // without a config.json" named a folder the user never wrote.
  if (name.trim() === '') {
    return Promise.reject(new LmBenchError('LMB_ERR_UNKNOWN_MODEL', 'the model name is empty: give a catalog id (e.g. llama-3.1-8b), a directory holding a config.json, or an ORG/NAME Hugging Face repo id', { details: { field: 'model', value: name } }));
  }
  return resolveModel(name, { catalog: defaultCatalog(), env: io.env, cwd: io.cwd, offline: offline === true });
}

/**
 * A catalog GPU (nvidia-smi's names too) or a datasheet YAML, registered for later lookups by id. With
 * `dbPath`, a name neither answers may be the id of a datasheet a study in that history carries (the
 * file since gone): the history is read (never created) for it.
 */
export function resolveGpuFlag(name: string, io: CliIo, dbPath?: string): Hardware {
  try {
    return resolveGpu(name, defaultCatalog(), io.cwd);
  } catch (err) {
    if (!isLmBenchError(err, 'LMB_ERR_UNKNOWN_GPU') || dbPath === undefined || !existsSync(dbPath)) throw err;
  }
  // openStore registers every stored study's datasheet.
  openStore(dbPath, { readonly: true }).close();
  return resolveGpu(name, defaultCatalog(), io.cwd);
}
