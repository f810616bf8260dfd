import type { ErrorCode } from '../errors.js';
import type { SurrogateSpec, TrainingRow } from '../model/surrogate.js';

/** Message types of the model-fitting worker, declared once for both sides (plain data only). */
export interface FitTask {
  readonly rows: readonly TrainingRow[];
  readonly featureNames: readonly string[];
  readonly spec: SurrogateSpec;
  readonly seed: number;
}

export type FitResult =
  | {
      readonly ok: true;
      /** The serialized surrogate (src/model/surrogate.ts `serializeSurrogate`). */
      readonly blob: Uint8Array;
      readonly fitMs: number;
    }
  /** An LmBenchError raised in the worker, as data: thrown errors lose their code crossing threads. */
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string; readonly details: Record<string, unknown> };
