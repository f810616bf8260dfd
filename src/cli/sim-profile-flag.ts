import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseProfileChoice, resolveProfile } from '../calibration/profiles.js';
import type { Catalog } from '../catalog/index.js';
import { VllmVersion, type Hardware, type SimProfile } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { defaultDbPath, openStore } from '../store/index.js';
import type { CliIo } from './io.js';

/**
 * `--profile auto|default|stored` and `--db` for the commands that simulate: the profile `lm-bench sim
 * calibrate` stored for the GPU when there is one (auto), the catalog's (default), or the stored one
 * or an error (stored); the catalog's for the vLLM release imitated (domain/vllm-release.ts). A store
 * that does not exist yet is never created just to look.
 */
export function profileFromFlags(
  values: { profile?: string | undefined; db?: string | undefined },
  io: CliIo,
  catalog: Catalog,
  hw: Hardware,
  vllmVersion?: string,
): { profile: SimProfile; source: string; stored: boolean } {
  const choice = parseProfileChoice(values.profile);
  const path = values.db === undefined ? defaultDbPath(io) : resolve(io.cwd, values.db);
  if (choice === 'default' || !existsSync(path)) return resolveProfile(null, catalog, hw, choice, vllmVersion);
  const store = openStore(path, { readonly: true });
  try {
    return resolveProfile(store, catalog, hw, choice, vllmVersion);
  } finally {
    store.close();
  }
}

/** `--vllm-version V`: the vLLM release imitated, or the one the runs were measured on (undefined: a current one). */
export function vllmVersionFlag(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const parsed = VllmVersion.safeParse(raw);
  if (!parsed.success) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--vllm-version must be a vLLM release such as 0.15.1, got "${raw}"`, { details: { field: 'vllm-version', value: raw } });
  return parsed.data;
}
