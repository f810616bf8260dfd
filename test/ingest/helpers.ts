import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';

export const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'ingest');
/** vLLM's own nightly result tables, kept in the repository (data/calibration/vllm-nightly/README.md). */
export const NIGHTLY_DIR = join(PROJECT_ROOT, 'data', 'calibration', 'vllm-nightly');

export const fixture = (name: string): string => join(FIXTURES, name);
export const fixtureBytes = (name: string): Uint8Array => readFileSync(fixture(name));

/** A deterministic byte generator (xorshift32) for garbage files. */
export function garbage(n: number, seed = 12345): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}
