import { join } from 'node:path';
import { DATA_DIR } from '../catalog/index.js';
import { SimProfileFile, type PowerProfile } from '../domain/index.js';
import { loadYamlFile } from '../util/yaml.js';

let cached: PowerProfile | null | undefined;

/**
 * The power model's parameters from data/sim-profile.yaml (its `power` block, fitted by
 * scripts/calibrate.ts), read once per process; null when the file has none (the simulator then
 * reports no energy). Apart from the catalog's profile because a calibrated latency profile
 * (`sim calibrate`) replaces the efficiencies, never the power model.
 */
export function defaultPowerProfile(): PowerProfile | null {
  cached ??= loadYamlFile(join(DATA_DIR, 'sim-profile.yaml'), SimProfileFile).power?.params ?? null;
  return cached;
}
