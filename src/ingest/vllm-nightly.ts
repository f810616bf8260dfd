import { z } from 'zod';
import type { ServerConfig } from '../domain/index.js';
import { RawNum, buildResult, newDraft, parseRaw, put } from './draft.js';
import { rejected } from './json-text.js';
import type { ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * vLLM's 2024 nightly-benchmark tables (`benchmarks/results/*_nightly_results.json` in vllm-project/vllm):
 * a list of rows with the display names of `.buildkite/nightly-benchmarks`, e.g. "Tput (req/s)",
 * "Mean TTFT (ms)". Only means and standard deviations of TTFT and TPOT are kept; everything else is
 * unavailable. The test name carries model, TP and QPS (`vllm_055_llama8B_tp1_sharegpt_qps_16`).
 */
export const NightlyRow = z.looseObject({
  'Test name': z.string(),
  GPU: z.string(),
  'Successful req.': z.int().nonnegative(),
  'Tput (req/s)': RawNum,
  'Mean TTFT (ms)': RawNum,
  'Std TTFT (ms)': RawNum.optional(),
  'Mean TPOT (ms)': RawNum,
  'Std TPOT (ms)': RawNum.optional(),
  'Input Tput (tok/s)': RawNum.optional(),
  'Output Tput (tok/s)': RawNum,
  'Total input tokens': z.int().nonnegative(),
  'Total output tokens': z.int().nonnegative(),
  Engine: z.string().optional(),
});

export function isNightlyTable(v: unknown): v is unknown[] {
  return Array.isArray(v) && v.length > 0 && v.every((row) => isObject(row) && 'Test name' in row && 'Tput (req/s)' in row);
}

/** Short model names of the nightly suite → names the catalog knows (data/models.yaml aliases). */
const NIGHTLY_MODELS: Record<string, { model: string; nativeContext: number }> = {
  llama8b: { model: 'llama-3-8b', nativeContext: 8192 },
  llama70b: { model: 'llama-3-70b', nativeContext: 8192 },
  mixtral8x7b: { model: 'mixtral-8x7b', nativeContext: 32768 },
};

const V0_DEFAULTS = {
  max_num_seqs: 256,
  block_size: 16,
  gpu_memory_utilization: 0.9,
  enable_prefix_caching: false,
  enable_chunked_prefill: false,
  kv_cache_dtype: 'auto',
  quantization: 'none',
  enforce_eager: false,
} as const satisfies ServerConfig;

const NAME = /^(?<engine>.+?)_(?<model>[a-z0-9x]+)_tp(?<tp>\d+)_(?<dataset>[a-z0-9]+)_qps_(?<qps>inf|\d+(?:\.\d+)?)$/i;

/** `fileName` supplies the date ("2024-08-23_18-47-20_…"). */
export function parseNightlyTable(rows: unknown[], fileName: string): ParsedRun[] {
  const date = /^(\d{4})-(\d{2})-(\d{2})_(\d{2})-(\d{2})-(\d{2})/.exec(fileName);
  return rows.map((raw, i) => {
    const label = `rows[${i}]`;
    const r = parseRaw(NightlyRow, raw, label);
    const m = NAME.exec(r['Test name'])?.groups;
    if (!m) throw rejected(`${label}: test name "${r['Test name']}" is not <engine>_<model>_tp<N>_<dataset>_qps_<rate>`);
    const known = NIGHTLY_MODELS[(m['model'] ?? '').toLowerCase()];
    const tp = Number(m['tp']);
    const d = newDraft('linear', label);
    d.backend = 'vllm';
    d.endpoint_type = 'vllm';
    d.label = r['Test name'];
    d.model_id = m['model'];
    if (date) d.date = `${date[1]}${date[2]}${date[3]}-${date[4]}${date[5]}${date[6]}`;
    d.request_rate = m['qps'] === 'inf' ? Infinity : Number(m['qps']);
    // The nightly suite sends Poisson arrivals (vLLM's default burstiness 1).
    d.burstiness = 1;
    d.max_concurrency = null;
    // The table's figures are a `vllm bench serve` run's, renamed: its rates share one duration. The
    // total throughput summed here from Input Tput is not the table's own figure and is not held to it.
    d.rateDefinitions = {
      tool: 'vLLM',
      rates: ['request_throughput', 'output_throughput'],
      fileNames: { completed: 'Successful req.', request_throughput: 'Tput (req/s)', output_throughput: 'Output Tput (tok/s)', total_output_tokens: 'Total output tokens' },
    };
    put(d, 'completed', r['Successful req.']);
    put(d, 'request_throughput', r['Tput (req/s)']);
    put(d, 'output_throughput', r['Output Tput (tok/s)']);
    put(d, 'total_input_tokens', r['Total input tokens']);
    put(d, 'total_output_tokens', r['Total output tokens']);
    const inTput = r['Input Tput (tok/s)'];
    if (inTput !== undefined) {
      put(d, 'total_token_throughput', inTput + r['Output Tput (tok/s)']);
      d.notes.push('total_token_throughput derived: Input Tput + Output Tput');
    }
    put(d, 'mean_ttft_ms', r['Mean TTFT (ms)']);
    put(d, 'std_ttft_ms', r['Std TTFT (ms)']);
    put(d, 'mean_tpot_ms', r['Mean TPOT (ms)']);
    put(d, 'std_tpot_ms', r['Std TPOT (ms)']);
    d.notes.push(`vLLM nightly table ${fileName} (${r.Engine ?? m['engine'] ?? 'unknown engine'}), dataset ${m['dataset'] ?? '?'}`);
    const { result, meta } = buildResult(d);
    // The suite ran vLLM 0.5.x (V0 engine). Unset knobs resolve to today's V1 defaults, which differ, so
    // the V0 defaults are written out (docs/references/vllm-engine.md#v0-engine-defaults: 256 seqs, prefix caching and
    // chunked prefill off below 32k context, max_num_batched_tokens = max(max_model_len, 2048), block 16,
    // gpu_memory_utilization 0.9). max_model_len then defaulted to the model's own context (8k for
    // Llama 3), which the catalog's 3.1 entries (128k) would otherwise resolve wrongly.
    const serverConfig: ServerConfig = { tensor_parallel_size: tp, ...V0_DEFAULTS };
    if (known) {
      serverConfig.max_model_len = known.nativeContext;
      serverConfig.max_num_batched_tokens = Math.max(known.nativeContext, 2048);
      serverConfig.enable_chunked_prefill = known.nativeContext > 32_768;
    }
    meta.notes.push('server config: tensor_parallel_size from the test name, other knobs are vLLM 0.5.x (V0) defaults');
    return {
      label,
      record: raw,
      result,
      meta,
      hints: { serverConfig, gpu: r.GPU, gpuCount: tp, ...(known ? { model: known.model } : m['model'] ? { model: m['model'] } : {}) },
    };
  });
}
