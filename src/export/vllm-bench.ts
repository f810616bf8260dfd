import { stringify } from 'yaml';
import { RESULT_METRICS, RESULT_STATS } from '../domain/index.js';
import { burstiness, figure, goodput, requestRate, startEpochMs, stat, text, type FigureKey } from './figures.js';
import { energyBlock, serverMetricsBlock } from './lm-bench-blocks.js';
import type { ExportItem } from './types.js';

/**
 * One stored run or trial → the JSON `vllm bench serve --save-result` writes (vllm-project/vllm
 * `vllm/benchmarks/serve.py`: `main_async`'s result_json merged with `benchmark`'s result), with the
 * keys in vLLM's order. Pure. A figure lm-bench lacks is left out, as vLLM leaves out the statistics it
 * was not asked for; `request_goodput` is null without a goodput SLO, as vLLM writes it. The per-request
 * arrays (`latencies`, `queue_times`…) and `rtfx` (speech models only) are not kept by lm-bench.
 *
 * The server config's knobs sit at the top level under vLLM's engine-argument names, as `vllm bench
 * sweep serve` merges its serve parameters into each run, so `vllm bench sweep plot --curve-by
 * max_num_seqs` can group by them. lm-bench's ingest reads a `vllm bench serve` file's context from a
 * sidecar instead (`ingestSidecar`). What vLLM has no key for (a simulation's flag, the load's start as an
 * instant, energy, server peaks, the run's dedupe key) follows under `lm_bench_*` keys, as vLLM's own
 * `--metadata KEY=VALUE` adds keys to the same object.
 */
type Json = Record<string, unknown>;

const HEADLINE: readonly FigureKey[] = ['duration', 'completed', 'failed', 'total_input_tokens', 'total_output_tokens', 'request_throughput'];

/**
 * The figures every `vllm bench serve` result carries, whatever its release (serve.py's `benchmark()`
 * writes them unconditionally; lm-bench's ingest refuses a file without them as broken). A run whose
 * source lacked one (an ML.ENERGY window, a vLLM nightly row without token totals) cannot be written as
 * such a result: leaving the key out makes a file no reader accepts, writing 0 invents a measurement.
 */
export const VLLM_ALWAYS: readonly FigureKey[] = ['duration', 'completed', 'total_input_tokens', 'total_output_tokens', 'request_throughput', 'output_throughput'];

/** The always-written figures this item lacks (empty: it can be written as a vllm result). */
export function vllmMissing(item: ExportItem): FigureKey[] {
  return VLLM_ALWAYS.filter((key) => figure(item, key) === null);
}

export function vllmBenchResult(item: ExportItem): Json {
  const out: Json = {};
  const put = (key: string, v: unknown): void => {
    if (v !== null && v !== undefined) out[key] = v;
  };
  put('date', text(item, 'date'));
  put('endpoint_type', text(item, 'endpoint_type'));
  put('backend', text(item, 'backend'));
  out['label'] = item.result.label;
  put('model_id', text(item, 'model_id'));
  out['tokenizer_id'] = item.result.tokenizer_id;
  put('num_prompts', figure(item, 'num_prompts'));
  for (const [knob, value] of Object.entries(item.server_config)) put(knob, value);
  put('request_rate', requestRate(item));
  put('burstiness', burstiness(item));
  out['max_concurrency'] = item.result.max_concurrency;
  for (const key of HEADLINE) put(key, figure(item, key));
  out['request_goodput'] = goodput(item);
  put('output_throughput', figure(item, 'output_throughput'));
  put('total_token_throughput', figure(item, 'total_token_throughput'));
  put('max_output_tokens_per_s', figure(item, 'max_output_tokens_per_s'));
  put('max_concurrent_requests', figure(item, 'max_concurrent_requests'));
  for (const metric of RESULT_METRICS) for (const s of RESULT_STATS) put(`${s}_${metric}_ms`, stat(item, s, metric));
  // vLLM reports the client-side queue only under --max-concurrency, where requests wait for a slot.
  if (item.result.max_concurrency !== null) {
    const lmb = item.result.lmb;
    if (!item.unavailable.includes('lmb.mean_client_queue_ms')) put('mean_client_queue_time_ms', lmb.mean_client_queue_ms);
    if (!item.unavailable.includes('lmb.p99_client_queue_ms')) put('p99_client_queue_time_ms', lmb.p99_client_queue_ms);
  }
  // What vLLM has no key for, last, under keys of lm-bench's own (as `--metadata` adds keys): whether the
  // run was simulated, when its load began (vLLM's `date` is a clock time without a zone), its energy and
  // the server's peaks. lm-bench's ingest reads them back; vLLM's tools pass them over.
  put('lm_bench_source', item.result.lmb.source);
  // The stored run's dedupe key: ingesting this file into a history that has the run skips it as stored.
  put('lm_bench_content_hash', item.subject.content_hash);
  put('lm_bench_start_epoch_ms', startEpochMs(item));
  put('lm_bench_energy', energyBlock(item));
  put('lm_bench_server_metrics', serverMetricsBlock(item));
  return out;
}

export function vllmBenchResultJson(item: ExportItem): string {
  return `${JSON.stringify(vllmBenchResult(item), null, 2)}\n`;
}

/**
 * `<file>.config.yaml` beside the result: what `lm-bench ingest` reads a vllm bench serve file's
 * server config, GPU, GPU count, model and workload from (ingest/context.ts `Sidecar`), so the file
 * comes back into a history as the run it was. A workload reconstructed on ingest is left out: ingest
 * reconstructs it again from the same figures, and says so.
 */
export function ingestSidecar(item: ExportItem): Json {
  return {
    server_config: item.server_config,
    gpu: item.hardware.gpu,
    gpus: item.hardware.count,
    model: item.model,
    ...(item.workload === null || item.workload_derived ? {} : { workload: item.workload }),
  };
}

export function ingestSidecarYaml(item: ExportItem): string {
  return stringify(ingestSidecar(item));
}
