import type { RealtimeEngine } from './realtime.js';

/** Prometheus text exposition of the simulated engine under vLLM's metric names (docs/references/load-runners.md#vllm-prometheus-metrics). */
export function metricsText(engine: RealtimeEngine, modelName: string, finishReasons: { readonly stop: number; readonly length: number } = { stop: 0, length: engine.counters.requestsFinished }): string {
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
  // One series per reason, each there from the start as vLLM creates them: EOS or a stop string, or max_tokens.
  for (const reason of ['stop', 'length'] as const) out.push(`vllm:request_success_total{${l},finished_reason="${reason}"} ${finishReasons[reason]}`);
  const c = engine.counters;
  out.push(...c.ttftS.render('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', l));
  out.push(...c.queueS.render('vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', l));
  out.push(...c.prefillS.render('vllm:request_prefill_time_seconds', 'Histogram of time spent in PREFILL phase for request.', l));
  out.push(...c.decodeS.render('vllm:request_decode_time_seconds', 'Histogram of time spent in DECODE phase for request.', l));
  out.push(...c.inferenceS.render('vllm:request_inference_time_seconds', 'Histogram of time spent in RUNNING phase for request.', l));
  out.push(...c.stepTokens.render('vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.', l));
  out.push(...c.e2eS.render('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', l));
  out.push(...c.itlS.render('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', l));
  out.push(...c.promptTokensPerRequest.render('vllm:request_prompt_tokens', 'Number of prefill tokens processed.', l));
  out.push(...c.generationTokensPerRequest.render('vllm:request_generation_tokens', 'Number of generation tokens processed.', l));
  out.push(...dcgmLines(engine));
  return `${out.join('\n')}\n`;
}

/**
 * The simulated GPUs' power and energy under the names dcgm-exporter gives them (a real deployment
 * serves them from the exporter, here beside vLLM's): power now (W) and energy since the engine
 * started (mJ), one series per GPU. A client reads the energy counter at both ends of its own window.
 */
function dcgmLines(engine: RealtimeEngine): string[] {
  const e = engine.energy;
  if (e === null) return [];
  const gpus = e.perGpu(engine.nowS());
  const series = (name: string, help: string, type: 'gauge' | 'counter', value: (g: { powerW: number; energyJ: number }) => number): string[] => [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} ${type}`,
    ...gpus.map((g, i) => `${name}{gpu="${i}",source="lm-bench-sim"} ${value(g)}`),
  ];
  return [
    ...series('DCGM_FI_DEV_POWER_USAGE', 'Power draw (in W), simulated.', 'gauge', (g) => Math.round(g.powerW * 1000) / 1000),
    ...series('DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', 'Total energy consumption since the engine started (in mJ), simulated.', 'counter', (g) => Math.round(g.energyJ * 1000)),
  ];
}
