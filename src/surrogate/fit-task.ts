import type { SurrogateSpec, TrainingRow } from './surrogate.js';

/** Message types of the model-fitting worker, declared once for both sides (plain data only). */
export interface FitTask {
  readonly rows: readonly TrainingRow[];
  readonly featureNames: readonly string[];
  readonly spec: SurrogateSpec;
  readonly seed: number;
}

export interface FitResult {
  /** The serialized surrogate (src/surrogate/surrogate.ts `serializeSurrogate`). */
  readonly blob: Uint8Array;
  readonly fitMs: number;
}
