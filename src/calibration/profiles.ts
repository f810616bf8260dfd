import type { Catalog } from '../catalog/index.js';
import { SimProfile, type Hardware } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import type { ModelInfo, Store } from '../store/store.js';

/**
 * Calibrated simulator profiles in the history store: `lm-bench sim calibrate` fits the efficiencies to
 * a GPU's runs and saves them as a model of kind `sim_profile` in the slot `sim-profile:<GPU>` (a newer
 * fit replaces the older one). The simulator, `tune --target sim` and `recommend` price that GPU with
 * it from then on; `--profile default` asks for the catalog's instead.
 */
export const PROFILE_KIND = 'sim_profile';
export const profileSlot = (gpu: string): string => `sim-profile:${gpu}`;

export interface StoredProfile {
  readonly profile: SimProfile;
  readonly modelId: number;
  readonly gpu: string;
  readonly fittedOn: { readonly runs: number; readonly model: string | null };
  readonly metrics: Readonly<Record<string, number | null>>;
}

function decode(info: ModelInfo, blob: Uint8Array): StoredProfile {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(blob));
  } catch (err) {
    throw new LmBenchError('LMB_ERR_STORE_FAILED', `stored simulator profile ${info.id} is not valid JSON`, { cause: err });
  }
  const profile = SimProfile.safeParse((json as { profile?: unknown }).profile);
  if (!profile.success) throw new LmBenchError('LMB_ERR_STORE_FAILED', `stored simulator profile ${info.id} does not match this lm-bench's profile schema; run \`lm-bench sim calibrate\` again`);
  const meta = info.metadata;
  return {
    profile: profile.data,
    modelId: info.id,
    gpu: typeof meta['gpu'] === 'string' ? meta['gpu'] : '',
    fittedOn: { runs: typeof meta['runs'] === 'number' ? meta['runs'] : 0, model: typeof meta['model'] === 'string' ? meta['model'] : null },
    metrics: info.metrics,
  };
}

export function saveProfile(store: Store, input: { gpu: string; model: string | null; runs: number; profile: SimProfile; metrics: Record<string, number | null> }): StoredProfile {
  const rec = store.saveModel({
    kind: PROFILE_KIND,
    slot: profileSlot(input.gpu),
    blob: new TextEncoder().encode(JSON.stringify({ profile: input.profile })),
    metadata: { gpu: input.gpu, model: input.model, runs: input.runs },
    metrics: input.metrics,
  });
  return decode(rec, rec.blob);
}

/** The calibrated profile stored for a GPU, or null. */
export function storedProfile(store: Store, gpu: string): StoredProfile | null {
  const info = store.listModels(PROFILE_KIND).find((m) => m.slot === profileSlot(gpu));
  if (info === undefined) return null;
  return decode(info, store.getModel(info.id).blob);
}

/** `--profile`: `default` (the catalog's), `stored` (the calibrated one, or an error), or `auto` (stored when there is one). */
export type ProfileChoice = 'default' | 'stored' | 'auto';

export function parseProfileChoice(raw: string | undefined): ProfileChoice {
  if (raw === undefined || raw === 'auto') return 'auto';
  if (raw === 'default' || raw === 'stored') return raw;
  throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--profile must be default, stored or auto, got "${raw}"`, { details: { field: 'profile' } });
}

/**
 * The profile a simulation of this GPU uses, and where it came from: the user's calibrated one (`stored`),
 * which describes their own vLLM, or the catalog's for the vLLM release imitated (undefined: a current one).
 */
export function resolveProfile(store: Store | null, catalog: Catalog, hw: Hardware, choice: ProfileChoice, vllmVersion?: string): { profile: SimProfile; source: string; stored: boolean } {
  const fallback = { profile: catalog.profileFor(hw, vllmVersion), source: `default (data/sim-profile.yaml${vllmVersion === undefined ? '' : `, vLLM ${vllmVersion}`})`, stored: false };
  if (choice === 'default' || store === null) {
    if (choice === 'stored') throw new LmBenchError('LMB_ERR_MODEL_NOT_TRAINED', `no calibrated profile for ${hw.id}: no store to read it from`, { details: { gpu: hw.id } });
    return fallback;
  }
  const stored = storedProfile(store, hw.id);
  if (stored === null) {
    if (choice === 'stored') throw new LmBenchError('LMB_ERR_MODEL_NOT_TRAINED', `no calibrated profile for ${hw.id}; run \`lm-bench sim calibrate --gpu ${hw.id} --model M\` first`, { details: { gpu: hw.id } });
    return fallback;
  }
  // A calibrated profile describes the vLLM its runs were measured on: a release named here does not change it.
  const release = vllmVersion === undefined ? '' : `; vLLM ${vllmVersion} asked, its own release kept`;
  return { profile: stored.profile, source: `calibrated for ${hw.id} (model ${stored.modelId}, ${stored.fittedOn.runs} runs${stored.fittedOn.model === null ? '' : ` of ${stored.fittedOn.model}`}${release})`, stored: true };
}
