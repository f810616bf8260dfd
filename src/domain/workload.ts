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

/**
 * One stage of a staged Poisson arrival process: `rate_rps` for `duration_s` seconds (`rate` is
 * accepted for `rate_rps`, as published run descriptions write it). A rate of 0 is a pause. A stage
 * holds round(rate_rps × duration_s) requests spread as Poisson arrivals over its span (the count is
 * fixed, as vLLM fixes a single-rate run's span, so seeds differ in timing but not in offered load).
 */
export const RateStage = z
  .strictObject({
    rate_rps: z.number().nonnegative().max(1e6).optional(),
    rate: z.number().nonnegative().max(1e6).optional(),
    duration_s: z.number().positive().max(7 * 86_400),
  })
  .transform((s, ctx) => {
    const rate = s.rate_rps ?? s.rate;
    if (rate === undefined || (s.rate_rps !== undefined && s.rate !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['rate_rps'], message: 'give the stage one rate: rate_rps (or rate)', input: s });
      return z.NEVER;
    }
    return { rate_rps: rate, duration_s: s.duration_s };
  });
export type RateStage = z.infer<typeof RateStage>;

/** Requests a stage sends: its expected count, rounded (fixed, so the offered load does not vary by seed). */
export function stageRequestCount(s: RateStage): number {
  return Math.round(s.rate_rps * s.duration_s);
}

export function stagesRequestCount(stages: readonly RateStage[]): number {
  return stages.reduce((n, s) => n + stageRequestCount(s), 0);
}

export function stagesDurationS(stages: readonly RateStage[]): number {
  return stages.reduce((t, s) => t + s.duration_s, 0);
}

/** The time-weighted mean rate of the stages, req/s. */
export function stagesMeanRate(stages: readonly RateStage[]): number {
  const span = stagesDurationS(stages);
  return span > 0 ? stages.reduce((n, s) => n + s.rate_rps * s.duration_s, 0) / span : 0;
}

/**
 * A finite pool of `size` distinct prompts re-sent in a cycle (request i sends prompt i mod size, with
 * that prompt's output length), as a benchmark client with a small dataset does: from the second
 * round on, a server's prefix cache can serve the whole prompt, as it would in the real run.
 */
export const PromptPool = z.strictObject({ size: z.int().positive().max(1_000_000) });
export type PromptPool = z.infer<typeof PromptPool>;

/**
 * Multi-turn conversations: `concurrent` conversations of `turns` turns each take turns in rotation
 * (request i is turn ⌊(i mod concurrent·turns) / concurrent⌋ of one of them), so a conversation's next
 * turn comes `concurrent` arrivals after its last, as chat users answer after reading. Each turn's
 * prompt is the conversation so far (shared prefix, every earlier message and answer) plus a new
 * message of `input_len` tokens; each answer is `output_len` tokens. A turn's prompt begins with the
 * previous turn's, so a prefix cache serves the history. Open loop: a turn does not wait for the
 * previous answer (choose `concurrent` so that concurrent ÷ rate exceeds a turn's latency).
 */
export const Sessions = z.strictObject({
  turns: z.int().min(2).max(1000),
  concurrent: z.int().positive().max(100_000),
});
export type Sessions = z.infer<typeof Sessions>;

export const Arrival = z.discriminatedUnion('kind', [
  /** Closed loop: `concurrency` requests in flight, a new one as soon as one finishes. */
  z.strictObject({ kind: z.literal('closed'), concurrency: z.int().positive() }),
  /** Every request at t = 0 (vLLM's `--request-rate inf`), optionally capped. */
  z.strictObject({ kind: z.literal('burst'), max_concurrency: z.int().positive().optional() }),
  /**
   * Open loop, Poisson arrivals: at `rate_rps`, or in `stages` whose rates follow one another (8 req/s
   * for 600 s, then 20 req/s for 600 s). With stages, `rate_rps` is filled in as their time-weighted
   * mean (what a single-rate reader, a plan or a feature, sees); given beside them it must equal it.
   */
  z
    .strictObject({
      kind: z.literal('poisson'),
      rate_rps: z.number().positive().optional(),
      stages: z.array(RateStage).min(1).max(1000).optional(),
      max_concurrency: z.int().positive().optional(),
    })
    // Only once every field read cleanly: a stage that was refused (a negative duration, a rate out of
    // range) holds its raw input, whose sums would add a false "every stage has rate 0" to the true error.
    .superRefine((a, ctx) => {
      if (a.stages === undefined) {
        if (a.rate_rps === undefined) ctx.addIssue({ code: 'custom', path: ['rate_rps'], message: 'give rate_rps, or stages of {rate_rps, duration_s}' });
        return;
      }
      const mean = stagesMeanRate(a.stages);
      if (!(mean > 0)) ctx.addIssue({ code: 'custom', path: ['stages'], message: 'every stage has rate 0: no request would be sent' });
      else if (stagesRequestCount(a.stages) === 0) ctx.addIssue({ code: 'custom', path: ['stages'], message: 'the stages hold no request (rate × duration_s rounds to 0 in each)' });
      else if (a.rate_rps !== undefined && Math.abs(a.rate_rps - mean) > 1e-9 * mean) {
        ctx.addIssue({ code: 'custom', path: ['rate_rps'], message: `rate_rps (${a.rate_rps}) differs from the stages' mean rate (${mean}); leave it out` });
      }
    }, { when: (payload) => payload.issues.length === 0 })
    .transform((a) => ({ ...a, rate_rps: a.rate_rps ?? stagesMeanRate(a.stages ?? []) })),
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

/** The request-trace formats lm-bench reads (src/trace/): one reader each. */
export const TraceFormat = z.enum(['azure', 'mooncake', 'burstgpt', 'splitwise', 'jsonl']);
export type TraceFormat = z.infer<typeof TraceFormat>;

/**
 * Formats whose times are cut to a clock tick coarser than the ms (BurstGPT writes whole seconds): their
 * arrivals are fitted and replayed spread over the tick (util/clock-tick.ts). Others' times are exact as
 * written (lm-bench's own JSONL, where whole seconds may be meant).
 */
export const COARSE_CLOCK_FORMATS: ReadonlySet<TraceFormat> = new Set(['burstgpt']);

/**
 * A trace's requests, one array per field (compact JSON: a study stores them in its spec). Arrival
 * times are ms from the first request as the file gives them, before `speed` divides them.
 */
export const TraceRequests = z.strictObject({
  arrival_ms: z.array(z.number().nonnegative()),
  input_tokens: z.array(tokens),
  output_tokens: z.array(tokens),
  /**
   * Per request, the ids of its prompt's blocks of `block_tokens` tokens, in order (Mooncake's
   * `hash_ids`): two requests whose lists agree up to block k share their first k blocks of prompt.
   */
  hash_ids: z.array(z.array(z.int().nonnegative())).optional(),
});
export type TraceRequests = z.infer<typeof TraceRequests>;

/**
 * The trace a workload was derived from. With `data`, the workload replays those requests exactly:
 * their lengths, shared blocks and arrival times (÷ speed), the first `num_prompts` of them; its
 * distributions are the trace's fit, read by what cannot replay (features, plans, rules). Without
 * `data` (a result's copy, which only names its trace) the workload is sampled from that fit.
 */
export const WorkloadTrace = z
  .strictObject({
    /** The file's name, for the record (never read again). */
    source: z.string().min(1),
    format: TraceFormat,
    /** sha256 of the file's bytes. */
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 in lower-case hex'),
    /** Requests taken from the trace (after --trace-limit). */
    requests: z.int().positive(),
    /** Replay speed: arrival times are divided by it. */
    speed: z.number().positive().default(1),
    /** Tokens each `hash_ids` entry covers (Mooncake: 512). */
    block_tokens: z.int().positive().optional(),
    data: TraceRequests.optional(),
  })
  .superRefine((t, ctx) => {
    const d = t.data;
    if (d === undefined) return;
    for (const key of ['arrival_ms', 'input_tokens', 'output_tokens', 'hash_ids'] as const) {
      const col = d[key];
      if (col !== undefined && col.length !== t.requests) {
        ctx.addIssue({ code: 'custom', path: ['data', key], message: `${col.length} entries for ${t.requests} requests` });
      }
    }
    if ((d.hash_ids === undefined) !== (t.block_tokens === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['block_tokens'], message: 'hash_ids and block_tokens go together' });
    }
    const i = d.arrival_ms.findIndex((ms, k) => k > 0 && ms < (d.arrival_ms[k - 1] as number));
    if (i > 0) ctx.addIssue({ code: 'custom', path: ['data', 'arrival_ms', i], message: 'arrival times must not decrease' });
  });
export type WorkloadTrace = z.infer<typeof WorkloadTrace>;

export const Workload = z
  .strictObject({
    name: z.string().min(1),
    description: z.string().optional(),
    api: z.enum(['completions', 'chat']).default('completions'),
    input_len: LengthDist,
    output_len: LengthDist,
    shared_prefix: SharedPrefix.optional(),
    /** N distinct prompts re-sent in a cycle (not with a trace's own requests, which name their prompts). */
    prompt_pool: PromptPool.optional(),
    /** Multi-turn conversations (`input_len` is then each new message, `output_len` each answer). */
    sessions: Sessions.optional(),
    arrival: Arrival,
    /**
     * Requests to send. With rate stages it may be left out: the stages then bound the run, and it
     * is their request count (Σ round(rate_rps × duration_s)); given, it is an upper bound (the run
     * stops after the first num_prompts arrivals) and may not exceed that count.
     */
    num_prompts: z.int().positive().max(1_000_000).optional(),
    ignore_eos: z.boolean().default(true),
    slo: Slo.optional(),
    seed: z.int().nonnegative().optional(),
    /** The request trace this workload replays (`run --trace`, `tune --trace`) or was fitted to. */
    trace: WorkloadTrace.optional(),
  })
  .superRefine((w, ctx) => {
    const stages = w.arrival.kind === 'poisson' ? w.arrival.stages : undefined;
    if (stages === undefined) {
      if (w.num_prompts === undefined) ctx.addIssue({ code: 'custom', path: ['num_prompts'], message: 'num_prompts is required unless the arrival has rate stages' });
    } else if (stages.every((s) => RateStage.safeParse(s).success)) {
      // (A refused stage holds its raw input and is reported where it is: counting it would add noise.)
      const n = stagesRequestCount(stages);
      if (n > 1_000_000) ctx.addIssue({ code: 'custom', path: ['arrival', 'stages'], message: `the stages hold ${n} requests; at most 1000000` });
      if (w.num_prompts !== undefined && w.num_prompts > n) {
        ctx.addIssue({ code: 'custom', path: ['num_prompts'], message: `the stages hold ${n} requests; num_prompts (${w.num_prompts}) can only lower that` });
      }
    }
    if (w.prompt_pool !== undefined && w.trace?.data !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['prompt_pool'], message: "a trace replays its own prompts; prompt_pool cannot go with the trace's data" });
    }
    if (w.sessions !== undefined && w.trace?.data !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['sessions'], message: "a trace replays its own prompts; sessions cannot go with the trace's data" });
    }
    if (w.sessions !== undefined && w.prompt_pool !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['sessions'], message: 'give either sessions or prompt_pool: a conversation never re-sends a prompt' });
    }
    if (w.trace?.data !== undefined && w.num_prompts !== undefined && w.num_prompts > w.trace.requests) {
      ctx.addIssue({ code: 'custom', path: ['num_prompts'], message: `the trace holds ${w.trace.requests} requests; num_prompts (${w.num_prompts}) cannot exceed them` });
    }
    for (const key of ['input_len', 'output_len'] as const) {
      const d = w[key];
      if ((d.dist === 'uniform' || d.dist === 'zipf') && d.min > d.max) {
        ctx.addIssue({ code: 'custom', path: [key, 'max'], message: `max (${d.max}) is below min (${d.min})` });
      }
      if ((d.dist === 'normal' || d.dist === 'lognormal') && d.max !== undefined && d.min > d.max) {
        ctx.addIssue({ code: 'custom', path: [key, 'max'], message: `max (${d.max}) is below min (${d.min})` });
      }
    }
  })
  // Rate stages bound the run: num_prompts defaults to the requests they hold.
  .transform((w) => ({ ...w, num_prompts: w.num_prompts ?? stagesRequestCount(w.arrival.kind === 'poisson' ? (w.arrival.stages ?? []) : []) }));
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
  const d = w.trace?.data;
  if (d !== undefined) {
    let longest = 0;
    for (let i = 0; i < w.num_prompts; i++) longest = Math.max(longest, (d.input_tokens[i] as number) + (d.output_tokens[i] as number));
    return longest;
  }
  // A conversation's last turn carries every earlier message and answer.
  const turns = w.sessions?.turns ?? 1;
  return turns * (maxLength(w.input_len) + maxLength(w.output_len)) + (w.shared_prefix?.length ?? 0);
}

/**
 * The workload a result records: a trace's requests left out (a result names its trace by file,
 * hash and count; the requests live in the study spec or the file), so a stored run stays small.
 */
export function withoutTraceData(w: Workload): Workload {
  if (w.trace?.data === undefined) return w;
  const { data: _data, ...trace } = w.trace;
  return { ...w, trace };
}
