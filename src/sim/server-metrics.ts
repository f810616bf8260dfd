import type { RealtimeEngine } from './realtime.js';

/** TTFT histogram buckets of vLLM (`vllm:time_to_first_token_seconds`), seconds. */
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];

/** Prometheus text exposition of the simulated engine under vLLM's metric names (reference loadrunner §6.3). */
export function metricsText(engine: RealtimeEngine, modelName: string): string {
  const l = `model_name="${modelName.replaceAll('"', '\\"')}",engine="0"`;
  const out: string[] = [];
  const metric = (name: string, type: 'gauge' | 'counter', help: string, value: number): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}{${l}} ${value}`);
  };
  metric('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', engine.running);
  metric('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', engine.waiting);
  metric('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', engine.kvUsage);
  metric('vllm:num_preemptions_total', 'counter', 'Cumulative number of preemption from the engine.', engine.preemptions);
  metric('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', engine.counters.promptTokens);
  metric('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', engine.counters.generationTokens);
  metric('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', engine.prefixQueries);
  metric('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', engine.prefixHits);
  out.push('# HELP vllm:request_success_total Count of successfully processed requests.', '# TYPE vllm:request_success_total counter');
  out.push(`vllm:request_success_total{${l},finished_reason="length"} ${engine.counters.requestsFinished}`);
  const ttft = engine.counters.ttftS;
  out.push('# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.', '# TYPE vllm:time_to_first_token_seconds histogram');
  const sorted = [...ttft].sort((a, b) => a - b);
  let i = 0;
  for (const b of TTFT_BUCKETS) {
    while (i < sorted.length && (sorted[i] as number) <= b) i++;
    out.push(`vllm:time_to_first_token_seconds_bucket{${l},le="${b}"} ${i}`);
  }
  out.push(`vllm:time_to_first_token_seconds_bucket{${l},le="+Inf"} ${sorted.length}`);
  out.push(`vllm:time_to_first_token_seconds_sum{${l}} ${sorted.reduce((s, x) => s + x, 0)}`);
  out.push(`vllm:time_to_first_token_seconds_count{${l}} ${sorted.length}`);
  return `${out.join('\n')}\n`;
}
