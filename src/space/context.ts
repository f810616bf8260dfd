import type { Hardware, ModelSpec, Workload } from '../domain/index.js';

/** The deployment a search space is bound to: rules, defaults and memory built-ins read it. */
export interface SpaceContext {
  readonly hardware: Hardware;
  readonly gpuCount: number;
  readonly model: ModelSpec;
  readonly workload: Workload;
}
