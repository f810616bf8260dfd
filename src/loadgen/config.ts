import { z } from 'zod';
import { LengthDist, PromptPool, RateStage, Sessions, SharedPrefix, Slo, stagesMeanRate, type Arrival, type Workload } from '../domain/index.js';
import { LmBenchError, assertNever } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';

/**
 * The load-runner config file (`lm-bench run --config FILE`), strict: unknown keys are errors, each
 * reported with its line by `parseYaml`. A `sweep` maps dotted paths of this file to lists of values;
 * the run is the full combination of them, each point validated again as a complete config.
 */
const lengthOrNumber = z.union([z.int().positive(), LengthDist]).transform((v): LengthDist =>
  typeof v === 'number' ? { dist: 'fixed', value: v } : v,
);

export const DatasetConfig = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('synthetic'),
    input_len: lengthOrNumber,
    output_len: lengthOrNumber,
    shared_prefix: SharedPrefix.optional(),
    /** N distinct prompts re-sent in a cycle (the Workload's `prompt_pool`). */
    prompt_pool: PromptPool.optional(),
    /** Multi-turn conversations (the Workload's `sessions`). */
    sessions: Sessions.optional(),
  }),
  z.strictObject({ kind: z.literal('sharegpt'), path: z.string().min(1), output_len: z.int().positive().optional() }),
  z.strictObject({ kind: z.literal('jsonl'), path: z.string().min(1), output_len: z.int().positive().default(256) }),
  /**
   * A request trace (Azure, Mooncake, BurstGPT, Splitwise or {timestamp_s, input_tokens, output_tokens}
   * JSONL; src/trace/): each request at its own time ÷ speed, its own lengths and shared blocks.
   */
  z.strictObject({
    kind: z.literal('trace'),
    path: z.string().min(1),
    speed: z.number().positive().max(1e6).default(1),
    /** The first N requests of the trace. */
    limit: z.int().positive().max(1_000_000).optional(),
  }),
]);
export type DatasetConfig = z.infer<typeof DatasetConfig>;

export const RampUp = z.strictObject({
  strategy: z.enum(['linear', 'exponential']),
  start_rps: z.number().positive(),
  end_rps: z.number().positive(),
});
export type RampUp = z.infer<typeof RampUp>;

const rate = z.union([z.number().positive(), z.literal('inf')]);

function trafficModes(t: { concurrency?: unknown; request_rate?: unknown; ramp_up?: unknown; stages?: unknown }): number {
  return [t.concurrency !== undefined, t.request_rate !== undefined, t.ramp_up !== undefined, t.stages !== undefined].filter(Boolean).length;
}

const MODES = 'give exactly one of concurrency, request_rate, ramp_up or stages';

const TrafficFields = z.strictObject({
  /** Closed loop: this many requests in flight. */
  concurrency: z.int().positive().max(100_000).optional(),
  /** Open loop: arrivals per second ("inf" = all at once, as vLLM). */
  request_rate: rate.optional(),
  /** Gamma shape of inter-arrival times: 1 = Poisson, "inf" = evenly spaced. */
  burstiness: rate.default(1),
  /** A cap on requests in flight in open-loop mode. */
  max_concurrency: z.int().positive().max(100_000).optional(),
  ramp_up: RampUp.optional(),
  /**
   * Open loop, Poisson arrivals whose rate changes in stages ([{rate_rps, duration_s}, …]): the
   * Workload's `arrival.stages`. They bound the run: num_prompts defaults to the requests they hold.
   */
  stages: z.array(RateStage).min(1).max(1000).optional(),
});

/** At most one mode (`none` allowed: a trace dataset brings its own arrivals, BenchConfig checks that). */
function checkTraffic(none: 'allowed' | 'refused') {
  return (t: z.infer<typeof TrafficFields>, ctx: z.RefinementCtx): void => {
    const modes = trafficModes(t);
    if (modes > 1 || (modes === 0 && none === 'refused')) {
      ctx.addIssue({ code: 'custom', path: [], message: MODES });
    }
    if (t.stages !== undefined && t.burstiness !== 1) {
      ctx.addIssue({ code: 'custom', path: ['burstiness'], message: 'rate stages are Poisson (burstiness 1)' });
    }
    if (t.concurrency !== undefined && t.burstiness !== 1) {
      // A closed loop sends the next request when one finishes: it has no arrival times to shape, and a
      // burstiness dropped silently would leave the user believing the run was bursty.
      ctx.addIssue({ code: 'custom', path: ['burstiness'], message: 'burstiness shapes an open loop\'s arrivals (request_rate); a closed loop (concurrency) has none' });
    }
    if (t.concurrency !== undefined && t.max_concurrency !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['max_concurrency'], message: 'max_concurrency caps an open loop; with concurrency it is redundant' });
    }
  };
}

/** The traffic of a run: exactly one of a closed loop, an open-loop rate or a ramp. */
export const TrafficConfig = TrafficFields.superRefine(checkTraffic('refused'));
/** A config's traffic section, whose mode may be left out for a trace dataset. */
const ConfigTraffic = TrafficFields.superRefine(checkTraffic('allowed'));
export type TrafficConfig = z.infer<typeof TrafficConfig>;

export const BenchConfig = z
  .strictObject({
    name: z.string().min(1).default('run'),
    description: z.string().optional(),
    /** The server to load (`--endpoint` wins): any http(s) URL of a completions or chat route. */
    endpoint: z.string().min(1).optional(),
    /** PEM file of a CA to trust (a self-signed server), relative to this file. */
    ca_cert: z.string().min(1).optional(),
    /** Skip TLS certificate verification. */
    insecure: z.boolean().default(false),
    connect_timeout_s: z.number().positive().max(600).default(10),
    model: z.string().min(1).optional(),
    api: z.enum(['completions', 'chat']).default('completions'),
    dataset: DatasetConfig,
    sampling: z
      .strictObject({
        /** Overrides the dataset's output lengths when set. */
        max_tokens: z.int().positive().optional(),
        temperature: z.number().min(0).max(2).optional(),
        ignore_eos: z.boolean().default(true),
      })
      .default({ ignore_eos: true }),
    /** How requests arrive; a trace dataset brings its own times (then only max_concurrency may be set). */
    traffic: ConfigTraffic.prefault({}),
    /** Requests to send: default 200, or every request of a trace. */
    num_prompts: z.int().positive().max(1_000_000).optional(),
    /** Stop sending after this long (num_prompts stays the upper bound). */
    duration_s: z.number().positive().max(86_400).optional(),
    /** Requests sent before the measured run and left out of its metrics. */
    warmup: z.strictObject({ requests: z.int().nonnegative().max(10_000) }).default({ requests: 0 }),
    slo: Slo.optional(),
    seed: z.int().nonnegative().default(0),
    timeout_s: z.number().positive().max(86_400).default(600),
    /** Worker threads driving the streams ("auto": by load). */
    workers: z.union([z.int().positive().max(16), z.literal('auto')]).default('auto'),
    scrape_metrics: z.boolean().default(true),
    sweep: z.record(z.string(), z.array(z.unknown()).min(1)).optional(),
  })
  .superRefine((c, ctx) => {
    const modes = trafficModes(c.traffic);
    if (c.dataset.kind === 'trace') {
      if (modes > 0) ctx.addIssue({ code: 'custom', path: ['traffic'], message: 'a trace brings its own arrival times: remove concurrency, request_rate, ramp_up and stages (max_concurrency may cap it)' });
      if (c.sampling.max_tokens !== undefined) ctx.addIssue({ code: 'custom', path: ['sampling', 'max_tokens'], message: "a trace sets each request's max_tokens to its output length" });
    } else if (modes === 0) {
      ctx.addIssue({ code: 'custom', path: ['traffic'], message: MODES });
    }
    if (c.sweep === undefined) return;
    let points = 1;
    for (const key of Object.keys(c.sweep)) {
      if (key.startsWith('sweep')) ctx.addIssue({ code: 'custom', path: ['sweep', key], message: 'a sweep cannot sweep itself' });
      points *= c.sweep[key]?.length ?? 1;
    }
    if (points > 1000) ctx.addIssue({ code: 'custom', path: ['sweep'], message: `${points} sweep points; at most 1000` });
  });
export type BenchConfig = z.infer<typeof BenchConfig>;
export type BenchConfigInput = z.input<typeof BenchConfig>;

/** The traffic section as the shared Arrival schema (ramp-up is carried beside it, see `RunPoint`). */
export function arrivalOf(t: TrafficConfig): Arrival {
  const cap = t.max_concurrency === undefined ? {} : { max_concurrency: t.max_concurrency };
  if (t.concurrency !== undefined) return { kind: 'closed', concurrency: t.concurrency };
  if (t.ramp_up !== undefined) return { kind: 'poisson', rate_rps: t.ramp_up.end_rps, ...cap };
  if (t.stages !== undefined) return { kind: 'poisson', rate_rps: stagesMeanRate(t.stages), stages: t.stages, ...cap };
  const r = t.request_rate;
  if (r === undefined || r === 'inf') return { kind: 'burst', ...cap };
  if (t.burstiness === 'inf') return { kind: 'constant', rate_rps: r, ...cap };
  if (t.burstiness === 1) return { kind: 'poisson', rate_rps: r, ...cap };
  return { kind: 'gamma', rate_rps: r, burstiness: t.burstiness, ...cap };
}

/**
 * A workload file (data/workloads/*.yaml, what a study tunes for) as a raw run config, so `lm-bench
 * run --workload FILE` loads a server exactly as a study's trials do; flags lay over it as over a file.
 */
export function rawConfigOfWorkload(w: Workload): Record<string, unknown> {
  if (w.trace?.data !== undefined) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `workload ${w.name} carries the requests of trace ${w.trace.source}: replay the trace itself with --trace`, { details: { field: 'workload' } });
  }
  const a = w.arrival;
  const cap = 'max_concurrency' in a && a.max_concurrency !== undefined ? { max_concurrency: a.max_concurrency } : {};
  let traffic: Record<string, unknown>;
  switch (a.kind) {
    case 'closed':
      traffic = { concurrency: a.concurrency };
      break;
    case 'burst':
      traffic = { request_rate: 'inf', ...cap };
      break;
    case 'poisson':
      traffic = a.stages === undefined ? { request_rate: a.rate_rps, ...cap } : { stages: a.stages, ...cap };
      break;
    case 'gamma':
      traffic = { request_rate: a.rate_rps, burstiness: a.burstiness, ...cap };
      break;
    case 'constant':
      traffic = { request_rate: a.rate_rps, burstiness: 'inf', ...cap };
      break;
    default:
      return assertNever(a, 'arrival kind');
  }
  return {
    name: w.name,
    ...(w.description === undefined ? {} : { description: w.description }),
    api: w.api,
    dataset: {
      kind: 'synthetic',
      input_len: w.input_len,
      output_len: w.output_len,
      ...(w.shared_prefix === undefined ? {} : { shared_prefix: w.shared_prefix }),
      ...(w.prompt_pool === undefined ? {} : { prompt_pool: w.prompt_pool }),
      ...(w.sessions === undefined ? {} : { sessions: w.sessions }),
    },
    sampling: { ignore_eos: w.ignore_eos },
    traffic,
    num_prompts: w.num_prompts,
    ...(w.slo === undefined ? {} : { slo: w.slo }),
    ...(w.seed === undefined ? {} : { seed: w.seed }),
  };
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur: Record<string, unknown> = obj;
  for (const k of keys.slice(0, -1)) {
    const next = cur[k];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1] as string] = value;
}

export interface SweepPoint {
  /** The swept values of this point, by dotted path. */
  readonly values: Readonly<Record<string, unknown>>;
  readonly config: BenchConfig;
}

/**
 * The full combination of a config's sweep, in row-major order of its keys (the first key varies
 * slowest). Each point is the raw config with the values set, validated again; an invalid point is
 * reported with the sweep values that produced it.
 */
export function expandSweep(raw: Record<string, unknown>, base: BenchConfig): SweepPoint[] {
  const sweep = base.sweep;
  if (sweep === undefined || Object.keys(sweep).length === 0) return [{ values: {}, config: base }];
  const keys = Object.keys(sweep);
  let combos: Record<string, unknown>[] = [{}];
  for (const k of keys) {
    const next: Record<string, unknown>[] = [];
    for (const c of combos) for (const v of sweep[k] ?? []) next.push({ ...c, [k]: v });
    combos = next;
  }
  return combos.map((values) => {
    const copy = structuredClone(raw);
    delete copy['sweep'];
    for (const [k, v] of Object.entries(values)) setPath(copy, k, v);
    const res = BenchConfig.safeParse(copy);
    if (!res.success) {
      throw new LmBenchError('LMB_ERR_CONFIG_INVALID', formatZodIssues(res.error.issues, `sweep point ${JSON.stringify(values)}`), {
        details: { values, field: res.error.issues[0]?.path.join('.') },
      });
    }
    return { values, config: res.data };
  });
}

/** Sets a dotted path in a raw (unvalidated) config; used to lay CLI flags over a file. */
export function overlay(raw: Record<string, unknown>, path: string, value: unknown): void {
  setPath(raw, path, value);
}
