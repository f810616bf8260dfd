import type { Bottleneck, ServerEngine } from '../domain/index.js';

/**
 * The serving engines whose Prometheus `/metrics` a run can read, each recognised by its own metric
 * names, and what each exports for the evidence (a series per field, or none). A run against a server
 * lm-bench does not recognise, or one that exports nothing of these, has no server evidence, and its
 * diagnosis says so rather than reading absent series as an idle server.
 *
 * Names: vLLM's (old names beside the new, docs/references/load-runners.md#vllm-prometheus-metrics); SGLang's `sglang:` gauges;
 * llama.cpp's `llamacpp:` gauges (llama-server with `--metrics`: slots busy and requests deferred for
 * want of a slot; no queue, prefill or KV histograms); Hugging Face TGI's `tgi_` series.
 */
const METRIC_FIELDS = [
  'running', 'waiting', 'kvUsage', 'preemptions', 'queueSum', 'queueCount', 'prefillSum', 'prefillCount',
  'decodeSum', 'decodeCount', 'stepTokensSum', 'stepTokensCount',
] as const;
/** For each field of the evidence, the series that carry it (the first present is read), or none. */
export type EngineMetrics = Readonly<Record<(typeof METRIC_FIELDS)[number], readonly string[]>>;

/** An engine that exports only some of the fields: the rest read nothing. */
const only = (some: Partial<EngineMetrics>): EngineMetrics => Object.fromEntries(METRIC_FIELDS.map((f) => [f, some[f] ?? []])) as EngineMetrics;

export const ENGINE_METRICS: Record<ServerEngine, EngineMetrics> = {
  vllm: {
    running: ['vllm:num_requests_running'],
    waiting: ['vllm:num_requests_waiting'],
    kvUsage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
    preemptions: ['vllm:num_preemptions_total', 'vllm:num_preemptions'],
    queueSum: ['vllm:request_queue_time_seconds_sum'],
    queueCount: ['vllm:request_queue_time_seconds_count'],
    prefillSum: ['vllm:request_prefill_time_seconds_sum'],
    prefillCount: ['vllm:request_prefill_time_seconds_count'],
    decodeSum: ['vllm:request_decode_time_seconds_sum'],
    decodeCount: ['vllm:request_decode_time_seconds_count'],
    stepTokensSum: ['vllm:iteration_tokens_total_sum'],
    stepTokensCount: ['vllm:iteration_tokens_total_count'],
  },
  sglang: only({
    running: ['sglang:num_running_reqs'],
    waiting: ['sglang:num_queue_reqs'],
    kvUsage: ['sglang:token_usage'],
    queueSum: ['sglang:queue_time_seconds_sum'],
    queueCount: ['sglang:queue_time_seconds_count'],
  }),
  llamacpp: only({
    running: ['llamacpp:requests_processing'],
    waiting: ['llamacpp:requests_deferred'],
    // Older builds only; current ones export no KV gauge.
    kvUsage: ['llamacpp:kv_cache_usage_ratio'],
  }),
  tgi: only({
    running: ['tgi_batch_current_size'],
    waiting: ['tgi_queue_size'],
    queueSum: ['tgi_request_queue_duration_sum'],
    queueCount: ['tgi_request_queue_duration_count'],
  }),
};

const PREFIXES: readonly [string, ServerEngine][] = [
  ['vllm:', 'vllm'],
  ['sglang:', 'sglang'],
  ['llamacpp:', 'llamacpp'],
  ['tgi_', 'tgi'],
];

/** The engine whose names a `/metrics` exposition uses, or null when none is recognised. */
export function detectEngine(names: Iterable<string>): ServerEngine | null {
  const counts = new Map<ServerEngine, number>();
  for (const n of names) {
    for (const [prefix, engine] of PREFIXES) if (n.startsWith(prefix)) counts.set(engine, (counts.get(engine) ?? 0) + 1);
  }
  let best: ServerEngine | null = null;
  for (const [engine, c] of counts) if (best === null || c > (counts.get(best) ?? 0)) best = engine;
  return best;
}

/** Every series name a run keeps from a scrape, whatever the engine. */
export const KEPT_SERIES: ReadonlySet<string> = new Set(Object.values(ENGINE_METRICS).flatMap((m) => METRIC_FIELDS.flatMap((f) => m[f])));

/**
 * What to change on an engine other than vLLM, in its own flags: lm-bench's knob advice is vLLM's
 * vocabulary and means nothing to llama-server or TGI. No hint for `client` and `none`.
 */
const HINTS: Record<Exclude<ServerEngine, 'vllm'>, Partial<Record<Bottleneck, readonly string[]>>> = {
  llamacpp: {
    admission: ['raise --parallel (-np): requests waited for a free slot (each slot gets --ctx-size ÷ slots of context, so raise --ctx-size with it)'],
    kv_cache: ['raise --ctx-size (the KV cache the slots share), or lower --parallel'],
    prefill: ['raise --batch-size / --ubatch-size (prompt tokens per step)'],
    decode: ['lower --parallel (fewer slots decoding at once), or serve a smaller quantization of the model'],
  },
  sglang: {
    admission: ['raise --max-running-requests'],
    kv_cache: ['raise --mem-fraction-static'],
    prefill: ['raise --chunked-prefill-size'],
    decode: ['lower --max-running-requests, or raise --tp'],
  },
  tgi: {
    // --max-concurrent-requests refuses the excess (HTTP 429) rather than queueing it: the queue waits on
    // the batch, which --max-batch-size (when set) or the token budget bounds.
    admission: ['raise --max-batch-size if it is set, else --max-batch-total-tokens (the batch’s token budget, which TGI sizes to the free GPU memory: past that, more GPUs with --num-shard or another replica)'],
    kv_cache: ['raise --max-batch-total-tokens'],
    prefill: ['raise --max-batch-prefill-tokens'],
    decode: ['lower --max-batch-size, or raise --num-shard'],
  },
};

export function engineHints(engine: Exclude<ServerEngine, 'vllm'>, b: Bottleneck): string[] {
  return [...(HINTS[engine][b] ?? [])];
}
