import { createRequire } from 'node:module';
import { LmBenchError } from '../errors.js';

/**
 * The one doorway to ml-xgboost 1.1.2 (XGBoost compiled to WebAssembly). Its module is a CommonJS
 * promise of the class. Its Emscripten loader tries `WebAssembly.instantiateStreaming(fetch(path))`
 * wherever that function exists, which in Node fails on a file path and printed "wasm streaming compile
 * failed … falling back to ArrayBuffer instantiation" on stderr of every command that fits or loads a
 * model; the loader is required with that function hidden, so it reads the file as it would fall back to.
 * Boosters live in WebAssembly memory, which never shrinks: whoever trains or loads one owns it and
 * must `free()` it (the Booster wrapper below makes double frees harmless).
 */
interface RawBooster {
  train(x: number[][], y: number[]): void;
  predict(x: number[][]): number[];
  toJSON(): { name: string; model: number[]; options: Record<string, unknown> };
  free(): void;
}
interface RawXgbClass {
  new (options: Record<string, string | number>): RawBooster;
  load(model: { name: string; model: number[]; options: Record<string, unknown> }): RawBooster;
}

let loading: Promise<RawXgbClass> | undefined;

export function loadXgb(): Promise<RawXgbClass> {
  if (loading === undefined) {
    const require = createRequire(import.meta.url);
    loading = requireWithoutStreaming(() => require('ml-xgboost') as Promise<RawXgbClass>).catch((err: unknown) => {
      loading = undefined;
      throw new LmBenchError('LMB_ERR_INTERNAL', 'ml-xgboost failed to load', { cause: err });
    });
  }
  return loading;
}

/** Runs `load` (synchronous: the loader chooses how to compile while it is required) with `WebAssembly.instantiateStreaming` hidden. */
function requireWithoutStreaming<T>(load: () => T): T {
  // The project's TypeScript libs carry no WebAssembly types; the global is read as a plain object.
  const wasm = (globalThis as { WebAssembly?: object }).WebAssembly;
  const streaming = wasm === undefined ? undefined : Object.getOwnPropertyDescriptor(wasm, 'instantiateStreaming');
  if (wasm === undefined || streaming === undefined) return load();
  Object.defineProperty(wasm, 'instantiateStreaming', { ...streaming, value: undefined });
  try {
    return load();
  } finally {
    Object.defineProperty(wasm, 'instantiateStreaming', streaming);
  }
}

/** Training parameters (XGBoost's own names); defaults in one place. */
export interface XgbParams {
  readonly maxDepth: number;
  readonly eta: number;
  readonly rounds: number;
  readonly subsample: number;
  readonly colsampleBytree: number;
  readonly minChildWeight: number;
  readonly objective: 'reg:linear' | 'binary:logistic';
  readonly seed: number;
}

export const DEFAULT_XGB_PARAMS: XgbParams = Object.freeze({
  maxDepth: 6,
  eta: 0.1,
  rounds: 150,
  subsample: 0.8,
  colsampleBytree: 0.9,
  minChildWeight: 1,
  objective: 'reg:linear',
  seed: 0,
});

/** An owned booster: the raw WebAssembly handle plus its saved bytes. */
export class Booster {
  #raw: RawBooster | undefined;
  constructor(raw: RawBooster) {
    this.#raw = raw;
  }
  get alive(): boolean {
    return this.#raw !== undefined;
  }
  /** XGBoost's own prediction, one row at a time through WebAssembly (slow: use TreeEnsemble in bulk). */
  predict(rows: readonly (readonly number[])[]): number[] {
    if (this.#raw === undefined) throw new LmBenchError('LMB_ERR_INTERNAL', 'booster used after free()');
    return this.#raw.predict(rows.map((r) => [...r]));
  }
  /** The XGBoost binary model, as bytes. */
  saveBytes(): Uint8Array {
    if (this.#raw === undefined) throw new LmBenchError('LMB_ERR_INTERNAL', 'booster saved after free()');
    const json = this.#raw.toJSON();
    return Uint8Array.from(json.model, (b) => b & 0xff);
  }
  free(): void {
    this.#raw?.free();
    this.#raw = undefined;
  }
}

function rawOptions(p: XgbParams): Record<string, string | number> {
  return {
    booster: 'gbtree',
    objective: p.objective,
    max_depth: p.maxDepth,
    eta: p.eta,
    min_child_weight: p.minChildWeight,
    subsample: p.subsample,
    colsample_bytree: p.colsampleBytree,
    silent: 1,
    iterations: p.rounds,
    seed: p.seed,
    nthread: 1,
  };
}

export async function trainBooster(x: readonly (readonly number[])[], y: readonly number[], params: Partial<XgbParams> = {}): Promise<Booster> {
  if (x.length === 0 || x.length !== y.length) {
    throw new LmBenchError('LMB_ERR_INTERNAL', `trainBooster: ${x.length} rows vs ${y.length} targets`);
  }
  // A NaN or infinity aborts the WebAssembly runtime (and the process) inside ml-xgboost: refuse it here.
  for (const [i, row] of x.entries()) {
    if (!row.every(Number.isFinite) || !Number.isFinite(y[i])) {
      throw new LmBenchError('LMB_ERR_INTERNAL', `trainBooster: row ${i} has a non-finite feature or target`);
    }
  }
  const Xgb = await loadXgb();
  const raw = new Xgb(rawOptions({ ...DEFAULT_XGB_PARAMS, ...params }));
  raw.train(x.map((r) => [...r]), [...y]);
  return new Booster(raw);
}

export async function loadBooster(bytes: Uint8Array): Promise<Booster> {
  const Xgb = await loadXgb();
  const model = Array.from(new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return new Booster(Xgb.load({ name: 'ml-xgboost', model, options: {} }));
}
