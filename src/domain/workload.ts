import { z } from 'zod';
import { Slo } from './slo.js';

/**
 * One Workload schema, read by the simulator, the load runner and the tuner alike: token-length
 * distributions, an optional shared-prefix structure, an arrival process and a request budget.
 * Lengths are in tokens; distributions are clipped to [min, max].
 */
const tokens = z.int().positive();

export const LengthDist = z.discriminatedUnion('dist', [
  z.strictObject({ dist: z.literal('fixed'), value: tokens }),
  z.strictObject({ dist: z.literal('uniform'), min: tokens, max: tokens }),
  z.strictObject({
    dist: z.literal('normal'),
    mean: z.number().positive(),
    std: z.number().nonnegative(),
    min: tokens.default(1),
    max: tokens.optional(),
  }),
  z.strictObject({
    dist: z.literal('lognormal'),
    /** Mean and standard deviation of the resulting lengths (not of their logarithm). */
    mean: z.number().positive(),
    std: z.number().positive(),
    min: tokens.default(1),
    max: tokens.optional(),
  }),
  z.strictObject({
    dist: z.literal('zipf'),
    /** Exponent s > 0: P(k) ∝ k^-s over k = min … max. */
    s: z.number().positive(),
    min: tokens.default(1),
    max: tokens,
  }),
]);
export type LengthDist = z.infer<typeof LengthDist>;

/** A fraction of requests starts with one of `groups` shared prefixes (a system prompt) of `length` tokens. */
export const SharedPrefix = z.strictObject({
  groups: z.int().positive(),
  length: tokens,
  fraction: z.number().min(0).max(1).default(1),
});
export type SharedPrefix = z.infer<typeof SharedPrefix>;

export const Arrival = z.discriminatedUnion('kind', [
  /** Closed loop: `concurrency` requests in flight, a new one as soon as one finishes. */
  z.strictObject({ kind: z.literal('closed'), concurrency: z.int().positive() }),
  /** Every request at t = 0 (vLLM's `--request-rate inf`), optionally capped. */
  z.strictObject({ kind: z.literal('burst'), max_concurrency: z.int().positive().optional() }),
  /** Open loop, Poisson arrivals. */
  z.strictObject({ kind: z.literal('poisson'), rate_rps: z.number().positive(), max_concurrency: z.int().positive().optional() }),
  /** Open loop, gamma inter-arrivals with shape = burstiness (CV = 1/√burstiness); 1 is Poisson. */
  z.strictObject({
    kind: z.literal('gamma'),
    rate_rps: z.number().positive(),
    burstiness: z.number().positive(),
    max_concurrency: z.int().positive().optional(),
  }),
  /** Open loop, evenly spaced arrivals. */
  z.strictObject({ kind: z.literal('constant'), rate_rps: z.number().positive(), max_concurrency: z.int().positive().optional() }),
]);
export type Arrival = z.infer<typeof Arrival>;

export const Workload = z
  .strictObject({
    name: z.string().min(1),
    description: z.string().optional(),
    api: z.enum(['completions', 'chat']).default('completions'),
    input_len: LengthDist,
    output_len: LengthDist,
    shared_prefix: SharedPrefix.optional(),
    arrival: Arrival,
    num_prompts: z.int().positive().max(1_000_000),
    ignore_eos: z.boolean().default(true),
    slo: Slo.optional(),
    seed: z.int().nonnegative().optional(),
  })
  .superRefine((w, ctx) => {
    for (const key of ['input_len', 'output_len'] as const) {
      const d = w[key];
      if ((d.dist === 'uniform' || d.dist === 'zipf') && d.min > d.max) {
        ctx.addIssue({ code: 'custom', path: [key, 'max'], message: `max (${d.max}) is below min (${d.min})` });
      }
      if ((d.dist === 'normal' || d.dist === 'lognormal') && d.max !== undefined && d.min > d.max) {
        ctx.addIssue({ code: 'custom', path: [key, 'max'], message: `max (${d.max}) is below min (${d.min})` });
      }
    }
  });
export type Workload = z.infer<typeof Workload>;
export type WorkloadInput = z.input<typeof Workload>;

/** The largest length a distribution can produce (used for max_model_len checks, rule C16). */
export function maxLength(d: LengthDist): number {
  switch (d.dist) {
    case 'fixed':
      return d.value;
    case 'uniform':
    case 'zipf':
      return d.max;
    case 'normal':
    case 'lognormal':
      return d.max ?? Math.ceil(d.mean + 6 * d.std);
  }
}

/** The expected length (before clipping for the unbounded ones). */
export function meanLength(d: LengthDist): number {
  switch (d.dist) {
    case 'fixed':
      return d.value;
    case 'uniform':
      return (d.min + d.max) / 2;
    case 'normal':
    case 'lognormal':
      return d.mean;
    case 'zipf': {
      let num = 0;
      let den = 0;
      for (let k = d.min; k <= d.max; k++) {
        const p = k ** -d.s;
        num += k * p;
        den += p;
      }
      return num / den;
    }
  }
}

/** Longest prompt + output a request of this workload can ask for, including its shared prefix. */
export function maxRequestTokens(w: Workload): number {
  return maxLength(w.input_len) + (w.shared_prefix?.length ?? 0) + maxLength(w.output_len);
}
