import { z } from 'zod';
import { ALL_KNOB_NAMES } from './server-config.js';
import { SLO_KEYS, type SloKey } from './slo.js';

/**
 * Why a run missed its SLOs or saturated: what was seen while it ran (the evidence) and what it means
 * (the diagnosis). The evidence is the same whatever produced the run: the server's Prometheus
 * metrics scraped during a measured run (vLLM's names; `sim serve` exports the same), or the
 * simulator's own state for a simulated one; plus the client's health for a measured run.
 */
const share = z.number().min(0).max(1).nullable();
const nonneg = z.number().nonnegative().nullable();

/** Serving engines whose /metrics a run reads (diagnose/engines.ts); the simulator is vLLM. */
export const SERVER_ENGINES = ['vllm', 'sglang', 'llamacpp', 'tgi'] as const;
export const ServerEngine = z.enum(SERVER_ENGINES);
export type ServerEngine = z.infer<typeof ServerEngine>;

export const ServerEvidence = z.strictObject({
  /** `metrics`: the server's /metrics scraped during the run; `simulator`: the engine's state (time-weighted). */
  source: z.enum(['metrics', 'simulator']),
  /** Whose metric names the figures were read from (results from before it existed: vLLM). */
  engine: ServerEngine.default('vllm'),
  /** Scrapes (metrics) or engine steps (simulator) the figures are over. */
  samples: z.int().nonnegative(),
  running_mean: nonneg,
  running_peak: nonneg,
  waiting_mean: nonneg,
  waiting_peak: nonneg,
  /** Share of the run with requests waiting in the server's queue. */
  waiting_share: share,
  /** Share of the run with requests waiting while the running count sat at the admission limit. */
  capped_share: share,
  /** The admission limit that share is against: max_num_seqs × replicas, or the running peak when unknown. */
  running_limit: nonneg,
  running_limit_known: z.boolean(),
  kv_usage_mean: share,
  kv_usage_peak: share,
  /** Share of the run with the KV cache at least 95% full. */
  kv_full_share: share,
  preemptions: nonneg,
  /** vLLM's request phases, means over the run's requests: WAITING, scheduled → first token, first → last token. */
  queue_ms_mean: nonneg,
  prefill_ms_mean: nonneg,
  decode_ms_mean: nonneg,
  /** Tokens per engine step (vllm:iteration_tokens_total). */
  step_tokens_mean: nonneg,
});
export type ServerEvidence = z.infer<typeof ServerEvidence>;

export const ClientEvidence = z.strictObject({
  /** Event-loop lag of the load threads (the worst thread): the 99th percentile and the peak. */
  loop_lag_p99_ms: nonneg,
  loop_lag_max_ms: nonneg,
  /** Share of requests sent over 100 ms after their intended time (the client fell behind its schedule). */
  late_send_share: share,
  /** CPU time of this process over the run ÷ (wall time × load threads). */
  cpu_share: nonneg,
  threads: z.int().positive(),
  /**
   * Open loop: how the requests in flight grew from the middle of the sending to its end, and the
   * arrivals in that stretch. A server that keeps up holds its in-flight count; one that finishes
   * fewer than it is sent grows it (saturation seen from the client, whatever the server exports).
   */
  backlog_growth: z.int().nullable().default(null),
  backlog_arrivals: z.int().nonnegative().nullable().default(null),
});
export type ClientEvidence = z.infer<typeof ClientEvidence>;

export const RunEvidence = z.strictObject({
  server: ServerEvidence.nullable(),
  client: ClientEvidence.nullable(),
  /**
   * What the server's /metrics was: an engine lm-bench reads; `unrecognised` (it answered, in names
   * of no engine lm-bench knows, or without the series it reads); `absent` (no /metrics, or not
   * scraped). Null in results from before it existed.
   */
  metrics: z.union([ServerEngine, z.enum(['unrecognised', 'absent'])]).nullable().default(null),
});
export type RunEvidence = z.infer<typeof RunEvidence>;

export const BOTTLENECKS = ['kv_cache', 'admission', 'prefill', 'decode', 'client', 'none'] as const;
export type Bottleneck = (typeof BOTTLENECKS)[number];

/** What each class means, in words (printed beside it). */
export const BOTTLENECK_TEXT: Record<Bottleneck, string> = {
  kv_cache: 'KV-cache-bound: the cache is full, so requests are preempted or held back',
  admission: 'admission-bound: requests wait while the running batch sits at max_num_seqs',
  prefill: 'prefill-bound: prompts take long to prefill, or the token budget takes them in slices, so first tokens come late',
  decode: 'decode-bound: decode steps are slow (a large batch, or a model heavy for these GPUs), so tokens come slowly',
  client: 'client-bound: the load generator itself fell behind, so the measurement is not the server’s',
  none: 'no bottleneck: the SLOs held and the server kept up',
};

const KnobId = z.enum(ALL_KNOB_NAMES);

export const KnobAdvice = z.strictObject({
  knob: KnobId,
  change: z.enum(['raise', 'lower', 'set']),
  /** A value to try, when the evidence suggests one. */
  to: z.union([z.number(), z.string(), z.boolean()]).nullable(),
  why: z.string(),
});
export type KnobAdvice = z.infer<typeof KnobAdvice>;

export const EvidenceItem = z.strictObject({
  name: z.string(),
  value: z.number(),
  unit: z.string(),
  /** The SLO limit or threshold the value is read against, when there is one. */
  limit: z.number().nullable(),
});
export type EvidenceItem = z.infer<typeof EvidenceItem>;

export const Diagnosis = z.strictObject({
  bottleneck: z.enum(BOTTLENECKS),
  /** A second limit also at work (e.g. decode-bound while also admission-bound), or null. */
  also: z.enum(BOTTLENECKS).nullable(),
  /** `measured`: from a load run's evidence; `simulated`: from the simulator's run. */
  source: z.enum(['measured', 'simulated']),
  /** SLO keys the run missed (empty when it met them or had none). */
  missed: z.array(z.enum(SLO_KEYS as [SloKey, ...SloKey[]])),
  /** The server could not keep up with the load (a standing queue, or it completed less than it was sent). */
  saturated: z.boolean(),
  /** One sentence: the class and the numbers that decided it. */
  summary: z.string(),
  evidence: z.array(EvidenceItem),
  /** Knob changes that address it, most direct first (for `client`: none; the advice is in the summary). */
  knobs: z.array(KnobAdvice),
  /** Advice in the words of a server that is not vLLM (its own flags), where `knobs` would not apply. */
  hints: z.array(z.string()).default([]),
  /** Requests that failed: a finding of its own, whatever the bottleneck (null: none failed). */
  failures: z
    .strictObject({
      count: z.int().positive(),
      of: z.int().positive(),
      /** The first distinct error texts, most frequent first. */
      first_errors: z.array(z.string()),
    })
    .nullable()
    .default(null),
});
export type Diagnosis = z.infer<typeof Diagnosis>;
