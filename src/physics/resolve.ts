import type { Hardware, ModelSpec, ResolvedServerConfig, ServerConfig } from '../domain/index.js';

/**
 * vLLM V1's default resolution for unset knobs, as `vllm serve` (the OpenAI server usage context)
 * does it (docs/references/vllm-engine.md#default-resolution; `vllm/engine/arg_utils.py: get_batch_defaults`,
 * `_set_default_max_num_seqs_and_batched_tokens_args`, `vllm/config/vllm.py: _set_cudagraph_sizes`).
 * Values a user set are kept as they are, even when invalid: validation reports them.
 */

/** gpu_memory_utilization default (0.9 in every 2024–2025 release; 2026 main moved to 0.92). */
export const DEFAULT_GPU_MEMORY_UTILIZATION = 0.9;
export const DEFAULT_BLOCK_SIZE = 16;
const CUDAGRAPH_MAX_DEFAULT = 512;

/** `vllm serve` batch defaults: big non-A100 parts get 8192 tokens / 1024 seqs, the rest 2048 / 256. */
export function batchDefaults(hw: Hardware): { maxNumBatchedTokens: number; maxNumSeqs: number } {
  const big = hw.memory_visible_gib >= 70 && !`${hw.id} ${hw.name}`.toLowerCase().includes('a100');
  return big ? { maxNumBatchedTokens: 8192, maxNumSeqs: 1024 } : { maxNumBatchedTokens: 2048, maxNumSeqs: 256 };
}

export function resolveConfig(config: ServerConfig, hw: Hardware, model: ModelSpec): ResolvedServerConfig {
  const chunked = config.enable_chunked_prefill ?? true;
  const maxModelLen = config.max_model_len ?? model.native_context;
  const defaults = batchDefaults(hw);
  let mbt = config.max_num_batched_tokens;
  let mns = config.max_num_seqs ?? defaults.maxNumSeqs;
  if (mbt === undefined) {
    mbt = defaults.maxNumBatchedTokens;
    if (!chunked) mbt = Math.max(maxModelLen, mbt);
    mbt = Math.min(mns * maxModelLen, mbt);
  }
  if (config.max_num_seqs === undefined) mns = Math.min(mns, mbt);
  const cgMax = Math.min(config.max_cudagraph_capture_size ?? Math.min(mns * 2, CUDAGRAPH_MAX_DEFAULT), mbt);
  return {
    tensor_parallel_size: config.tensor_parallel_size ?? 1,
    data_parallel_size: config.data_parallel_size ?? 1,
    max_num_seqs: mns,
    max_num_batched_tokens: mbt,
    block_size: config.block_size ?? DEFAULT_BLOCK_SIZE,
    gpu_memory_utilization: config.gpu_memory_utilization ?? DEFAULT_GPU_MEMORY_UTILIZATION,
    enable_chunked_prefill: chunked,
    enable_prefix_caching: config.enable_prefix_caching ?? true,
    kv_cache_dtype: config.kv_cache_dtype ?? 'auto',
    quantization: config.quantization ?? 'none',
    max_model_len: maxModelLen,
    enforce_eager: config.enforce_eager ?? false,
    max_cudagraph_capture_size: Math.max(1, cgMax),
    async_scheduling: config.async_scheduling ?? true,
    long_prefill_token_threshold: config.long_prefill_token_threshold ?? 0,
    enable_expert_parallel: config.enable_expert_parallel ?? false,
  };
}

/**
 * CUDA-graph capture sizes: [1, 2, 4] + range(8, min(max+1, 256), 8) + range(256, max+1, 16),
 * filtered to ≤ max (docs/references/vllm-engine.md#cuda-graph-capture-sizes). Empty in eager mode.
 */
export function cudagraphCaptureSizes(resolved: ResolvedServerConfig): number[] {
  if (resolved.enforce_eager) return [];
  const max = resolved.max_cudagraph_capture_size;
  const sizes = [1, 2, 4];
  for (let s = 8; s < Math.min(max + 1, 256); s += 8) sizes.push(s);
  for (let s = 256; s <= max; s += 16) sizes.push(s);
  return sizes.filter((s) => s <= max);
}

/** KV-cache bytes per element: 2 for `auto` (bf16/fp16 models), 1 for the fp8 variants. */
export function kvDtypeBytes(resolved: ResolvedServerConfig): number {
  return resolved.kv_cache_dtype === 'auto' ? 2 : 1;
}
