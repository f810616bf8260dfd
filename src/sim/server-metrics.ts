import type { RealtimeEngine } from './realtime.js';

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
  const c = engine.counters;
  out.push(...c.ttftS.render('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', l));
  out.push(...c.queueS.render('vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', l));
  out.push(...c.prefillS.render('vllm:request_prefill_time_seconds', 'Histogram of time spent in PREFILL phase for request.', l));
  out.push(...c.decodeS.render('vllm:request_decode_time_seconds', 'Histogram of time spent in DECODE phase for request.', l));
  out.push(...c.inferenceS.render('vllm:request_inference_time_seconds', 'Histogram of time spent in RUNNING phase for request.', l));
  out.push(...c.stepTokens.render('vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.', l));
  return `${out.join('\n')}\n`;
}
