import { z } from 'zod';
import type { ResolvedServerConfig } from '../domain/index.js';
import type { ClassifiedFailure } from './failure-classes.js';

/** A condition on one resolved knob, the stuff failure rules are made of (failure-rules.ts, contrast-rules.ts). */
export const RuleOp = z.enum(['<', '<=', '>=', '>', '==']);
export type RuleOp = z.infer<typeof RuleOp>;

export const RuleCondition = z.strictObject({
  knob: z.string(),
  op: RuleOp,
  value: z.union([z.number(), z.string(), z.boolean()]),
});
export type RuleCondition = z.infer<typeof RuleCondition>;

/** One failed trial as the rules read it. */
export interface FailureEvidence {
  readonly study: string;
  readonly number: number;
  readonly config: ResolvedServerConfig;
  readonly failure: ClassifiedFailure;
  /** Whether the trial's server started (the trial's `started`); contrast rules need it, others do not. */
  readonly started?: boolean | null;
  /**
   * The knobs the trial chose (the rest resolved to vLLM's defaults, some from the chosen ones, as the
   * CUDA-graph capture size from max_num_seqs): contrast rules suspect only these. Absent: every knob.
   */
  readonly chosen?: readonly string[];
}
