import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { parseFile } from '../../src/ingest/index.js';

export const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'ingest');
/** vLLM's own nightly result tables, kept in the repository (data/calibration/vllm-nightly/README.md). */
export const NIGHTLY_DIR = join(PROJECT_ROOT, 'data', 'calibration', 'vllm-nightly');

export const fixture = (name: string): string => join(FIXTURES, name);
export const fixtureBytes = (name: string): Uint8Array => readFileSync(fixture(name));
export const fixtureText = (name: string): string => new TextDecoder().decode(fixtureBytes(name));
export const fixtureJson = (name: string): Record<string, unknown> => JSON.parse(fixtureText(name)) as Record<string, unknown>;

/** A file's bytes: a string as written, anything else as its JSON. */
export const contentBytes = (v: unknown): Uint8Array => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));

/** parseFile must throw LMB_ERR_INGEST_REJECTED with a message matching `re`. */
export function refuses(name: string, content: unknown, re: RegExp): void {
  assert.throws(
    () => parseFile(name, contentBytes(content)),
    (e: unknown) => isLmBenchError(e, 'LMB_ERR_INGEST_REJECTED') && re.test(e.message),
    `${name} should be refused with ${String(re)}`,
  );
}

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
