import { z } from 'zod';
import { atLeastVersion, hasFp8Compute, localAttention, parseVllmVersion, type Hardware, type ModelSpec, type ResolvedServerConfig, type VllmVersion } from '../domain/index.js';
import type { StartupFailure } from './failure.js';
import { cudagraphCaptureSizes, kvDtypeBytes } from './resolve.js';
import { linearFormat, weightBytesPerGpu } from './weights.js';
import type { StartupContext } from './validate.js';

/**
 * The one memory model of the project (docs/references/vllm-engine.md#memory-model): how vLLM V1 sizes the KV cache on each GPU
 * of one replica (`gpu_worker.determine_available_memory`, `kv_cache_utils.get_kv_cache_config`).
 * The search space's rules and the surrogate's features call this, so they cannot disagree with
 * the simulator about which configurations start.
 */
export const GIB = 1024 ** 3;

/** Activation-peak constants (docs/references/vllm-engine.md#activation-peak), fitted to the llm-d H100 measurement (4.76 GiB at 8192 tokens / 1024 seqs). */
const ACT_BASE_GIB = 1.45; // torch.compile/Inductor buffers, cuBLAS workspace
const ACT_MOE_EXTRA_GIB = 1.5; // MoE routing/permute buffers (llm-d: MoE ≈ 7.4–8 GiB vs dense ≈ 5)
const ACT_HIDDEN_COPIES = 5; // c_h: hidden-sized activations live at the peak
const ACT_INTERMEDIATE_COPIES = 2.5; // c_i: MLP-intermediate-sized activations
const ACT_LOGITS_COPIES = 5; // c_s: fp32 logits + sampler temporaries per sequence
/** NCCL/custom all-reduce buffers appear at TP > 1 (llm-d: 0.13 GiB at TP1, 0.55 GiB at TP2). */
const NON_TORCH_TP1_GIB = 0.13;
const NON_TORCH_TPN_GIB = 0.55;
/** Memory other than ours on the GPU at start-up (CUDA context of this process, display, …). */
export const CONTEXT_RESERVED_GIB = 0.6;
/** CUDA-graph pool: a fixed part plus a share per capture size and layer (measured −0.45…+1.03 GiB on H100). */
const CUDAGRAPH_BASE_GIB = 0.1;
const CUDAGRAPH_PER_SIZE_LAYER_GIB = 0.00018;

/**
 * The first release that charges the CUDA graphs to the gpu_memory_utilization budget: its memory
 * profile captures graphs on a dummy KV cache and takes their estimate off the KV cache
 * (`VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`, vllm#30515, opt-in at first and on by default since
 * 0.21.0, as vLLM's `gpu_worker.determine_available_memory` logs: "CUDA graph memory profiling is
 * enabled (default since v0.21.0) … To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0").
 * Earlier releases capture the graphs after sizing the KV cache, in the 1 − utilization headroom.
 */
export const CUDAGRAPH_IN_BUDGET_SINCE: readonly [number, number] = [0, 21];

/**
 * Whether this vLLM budgets its CUDA graphs inside gpu_memory_utilization. No release given: the model
 * lm-bench was fitted with (the graphs outside, as the 0.10–0.12 logs it was checked against); a release
 * without a number (`nightly`, `main`) is a current one.
 */
export function cudagraphsInBudget(vllmVersion: VllmVersion | undefined): boolean {
  if (vllmVersion === undefined) return false;
  return parseVllmVersion(vllmVersion) === null || atLeastVersion(vllmVersion, CUDAGRAPH_IN_BUDGET_SINCE[0], CUDAGRAPH_IN_BUDGET_SINCE[1]);
}

export const MemoryBreakdown = z.strictObject({
  visibleGib: z.number(),
  requestedGib: z.number(),
  weightsGibPerGpu: z.number(),
  activationGib: z.number(),
  nonTorchGib: z.number(),
  /**
   * The CUDA-graph pool: allocated after the KV cache in the 1 − utilization headroom (it does not
   * reduce KV) before vLLM 0.21, taken off the KV cache inside the budget since (`cudagraphInBudget`).
   */
  cudagraphGib: z.number(),
  cudagraphInBudget: z.boolean(),
  kvGibPerGpu: z.number(),
  kvBytesPerTokenPerGpu: z.number(),
  blockBytesPerGpu: z.number(),
  numBlocks: z.int(),
  kvTokenCapacity: z.int(),
  /** `Maximum concurrency for max_model_len tokens per request` as vLLM logs it. */
  maxConcurrency: z.number(),
  /** Free headroom left on the GPU after the requested pool and the CUDA graphs (those outside it). */
  headroomGib: z.number(),
  captureSizes: z.int(),
  /** Sliding-window block groups (hybrid KV cache), or null. */
  slidingGroups: z.strictObject({ groups: z.int().positive(), maxBlocks: z.int().positive() }).nullable(),
});
export type MemoryBreakdown = z.infer<typeof MemoryBreakdown>;

/**
 * KV bytes one token costs in one layer on one GPU (KV heads replicated when TP exceeds them). MLA's
 * latent is one "head" that every TP rank keeps whole (vLLM `ModelConfig.get_num_kv_heads` is 1 for MLA).
 */
export function kvBytesPerTokenLayerPerGpu(r: ResolvedServerConfig, model: ModelSpec): number {
  if (model.mla !== null) return (model.mla.kv_lora_rank + model.mla.qk_rope_head_dim) * kvDtypeBytes(r);
  const kvHeadsPerGpu = Math.max(1, model.num_kv_heads / r.tensor_parallel_size);
  return 2 * kvHeadsPerGpu * model.head_dim * kvDtypeBytes(r);
}

/** Layers that attend to the whole context (all but the sliding-window or chunked ones). */
export function fullAttentionLayers(model: ModelSpec): number {
  return model.layers - (localAttention(model)?.layers ?? 0);
}

/**
 * KV bytes per token of context on one GPU, in the layers whose KV grows with the context: all of
 * them for a full-attention model, the full-attention ones when some layers slide (their window's
 * blocks are a fixed cost per request, `slidingGroups`).
 */
export function kvBytesPerTokenPerGpu(r: ResolvedServerConfig, model: ModelSpec): number {
  return fullAttentionLayers(model) * kvBytesPerTokenLayerPerGpu(r, model);
}

/**
 * vLLM's hybrid KV cache manager for models with sliding-window (or chunked) layers: one block group of
 * the full layers and ⌈sliding / full⌉ groups of sliding layers, all drawing pages of the same size
 * from one pool; a request holds at most ⌈window / block⌉ + 1 blocks in each sliding group. vLLM sizes
 * a group by the smaller layer count (`kv_cache_utils` uniform page size); every model lm-bench derives
 * has no more full layers than local ones (gpt-oss 1:1, Gemma 2 1:1, Gemma 3 1:5, Llama 4 1:3), so the
 * full layers are one group. A model whose every layer slides is derived as full attention
 * (catalog/hf-config.ts), so `full` is never 0 here.
 */
export function slidingGroups(r: ResolvedServerConfig, model: ModelSpec): { groups: number; maxBlocks: number } | null {
  const sw = localAttention(model);
  if (sw === null) return null;
  return { groups: Math.ceil(sw.layers / Math.max(1, fullAttentionLayers(model))), maxBlocks: Math.ceil(sw.tokens / r.block_size) + 1 };
}

/**
 * Blocks one request may hold in each local-attention group at most, as vLLM sizes it when it checks that a
 * max_model_len request fits and when it logs "Maximum concurrency" (`kv_cache_interface.py`
 * `SlidingWindowSpec.max_memory_usage_bytes` / `ChunkedLocalAttentionSpec`): during a chunked prefill the
 * group holds the window plus the step's new tokens, so the budget is the window − 1 plus
 * max_num_batched_tokens (capped at max_model_len), plus one block a window may straddle; a chunked layer
 * holds its chunk plus the step's tokens. This is not the steady hold of `slidingGroups.maxBlocks`, which
 * is what the scheduler keeps once a step's tokens are in the window.
 */
export function localBlocksPerRequest(r: ResolvedServerConfig, model: ModelSpec, maxModelLen: number = r.max_model_len): number {
  const step = r.max_num_batched_tokens;
  if (model.sliding_window !== null) return Math.ceil(Math.min(model.sliding_window.tokens - 1 + step, maxModelLen) / r.block_size) + 1;
  if (model.chunked_attention !== null) return Math.ceil(Math.min(model.chunked_attention.tokens + step, maxModelLen) / r.block_size);
  return 0;
}

/**
 * Pool blocks one request of `maxModelLen` tokens may need across all block groups: its full-attention
 * blocks plus each local group's budget (vLLM `_max_memory_usage_bytes_from_groups` in blocks). vLLM
 * refuses to start when this exceeds the pool (C13) and divides the pool by it for "Maximum concurrency".
 */
export function blocksPerRequest(r: ResolvedServerConfig, model: ModelSpec, maxModelLen: number = r.max_model_len): number {
  const groups = slidingGroups(r, model)?.groups ?? 0;
  return Math.ceil(maxModelLen / r.block_size) + groups * localBlocksPerRequest(r, model, maxModelLen);
}

/**
 * The longest max_model_len whose one request fits `numBlocks` (vLLM's binary search in
 * `_estimate_max_model_len_from_groups`, quoted in its C13 message); 0 when not even one token fits.
 */
export function estimatedMaxModelLen(r: ResolvedServerConfig, model: ModelSpec, numBlocks: number): number {
  let lo = 1;
  let hi = r.max_model_len;
  if (blocksPerRequest(r, model, lo) > numBlocks) return 0;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (blocksPerRequest(r, model, mid) <= numBlocks) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Peak of the profiling forward (max_num_batched_tokens) and the sampler warm-up (min(seqs, tokens) rows). */
export function activationGib(r: ResolvedServerConfig, model: ModelSpec): number {
  const tokens = r.max_num_batched_tokens;
  const seqs = Math.min(r.max_num_seqs, r.max_num_batched_tokens);
  // The MLP's per-token width on one GPU: the dense MLP / TP, or the top-k experts' slices.
  const moe = model.moe;
  const mlpWidth = moe === null ? model.intermediate_size / r.tensor_parallel_size : (moe.expert_intermediate_size * (moe.top_k + moe.shared_experts)) / r.tensor_parallel_size;
  const perToken = (ACT_HIDDEN_COPIES * model.hidden_size + ACT_INTERMEDIATE_COPIES * mlpWidth) * 2;
  const logits = seqs * model.vocab_size * 4 * ACT_LOGITS_COPIES;
  const base = ACT_BASE_GIB + (model.moe === null ? 0 : ACT_MOE_EXTRA_GIB);
  return base + (tokens * perToken + logits) / GIB;
}

/** The breakdown for one GPU of a replica, as `vllmVersion` sizes it (absent: see `cudagraphsInBudget`). */
export function memoryModel(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec, vllmVersion?: VllmVersion): MemoryBreakdown {
  const visibleGib = hw.memory_visible_gib;
  const requestedGib = Math.ceil(visibleGib * r.gpu_memory_utilization * GIB) / GIB;
  const weightsGibPerGpu = weightBytesPerGpu(r, model) / GIB;
  const act = activationGib(r, model);
  const nonTorchGib = r.tensor_parallel_size > 1 ? NON_TORCH_TPN_GIB : NON_TORCH_TP1_GIB;
  const sizes = cudagraphCaptureSizes(r).length;
  const cudagraphGib = sizes === 0 ? 0 : CUDAGRAPH_BASE_GIB + CUDAGRAPH_PER_SIZE_LAYER_GIB * sizes * model.layers;
  const inBudget = cudagraphsInBudget(vllmVersion);
  const kvGibPerGpu = requestedGib - weightsGibPerGpu - act - nonTorchGib - (inBudget ? cudagraphGib : 0);
  const perToken = kvBytesPerTokenPerGpu(r, model);
  const blockBytesPerGpu = perToken * r.block_size;
  const numBlocks = kvGibPerGpu > 0 ? Math.floor((kvGibPerGpu * GIB) / blockBytesPerGpu) : 0;
  return {
    visibleGib,
    requestedGib,
    weightsGibPerGpu,
    activationGib: act,
    nonTorchGib,
    cudagraphGib,
    cudagraphInBudget: inBudget,
    kvGibPerGpu,
    kvBytesPerTokenPerGpu: perToken,
    blockBytesPerGpu,
    numBlocks,
    kvTokenCapacity: numBlocks * r.block_size,
    maxConcurrency: numBlocks / blocksPerRequest(r, model),
    headroomGib: visibleGib - CONTEXT_RESERVED_GIB - requestedGib - (inBudget ? 0 : cudagraphGib),
    captureSizes: sizes,
    slidingGroups: slidingGroups(r, model),
  };
}

const fmt = (x: number): string => x.toFixed(2);

/**
 * Memory rules C12–C14 (docs/references/vllm-engine.md#memory-rules), in the order vLLM meets them:
 * free memory at start-up (C14), weights that do not load or leave nothing for KV (C12), one
 * max_model_len request that does not fit (C13), then CUDA-graph capture running out of headroom (C14).
 */
export function checkMemory(r: ResolvedServerConfig, ctx: StartupContext): StartupFailure | null {
  const hw = ctx.hardware;
  const mem = memoryModel(r, hw, ctx.model, ctx.vllmVersion);
  const freeAtStart = mem.visibleGib - CONTEXT_RESERVED_GIB;
  const memFail = (rule: 'C12' | 'C13' | 'C14', message: string): StartupFailure => ({ rule, message, phase: 'memory' });
  if (mem.requestedGib > freeAtStart) {
    return memFail(
      'C14',
      `ValueError: Free memory on device (${fmt(freeAtStart)}/${fmt(mem.visibleGib)} GiB) on startup is less than desired GPU memory utilization (${r.gpu_memory_utilization}, ${fmt(mem.requestedGib)} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.`,
    );
  }
  if (mem.weightsGibPerGpu >= freeAtStart) {
    return memFail(
      'C12',
      `torch.OutOfMemoryError: CUDA out of memory while loading model weights (${fmt(mem.weightsGibPerGpu)} GiB per GPU; GPU 0 has a total capacity of ${fmt(mem.visibleGib)} GiB). Increase tensor_parallel_size or use a quantized model.`,
    );
  }
  if (mem.numBlocks <= 0) {
    return memFail(
      'C12',
      `ValueError: No available memory for the cache blocks (${fmt(mem.kvGibPerGpu)} GiB after ${fmt(mem.weightsGibPerGpu)} GiB weights, ${fmt(mem.activationGib)} GiB activation peak${mem.cudagraphInBudget ? `, ${fmt(mem.nonTorchGib)} GiB non-torch memory and ${fmt(mem.cudagraphGib)} GiB of CUDA graphs` : ` and ${fmt(mem.nonTorchGib)} GiB non-torch memory`} out of ${fmt(mem.requestedGib)} GiB requested). Try increasing \`gpu_memory_utilization\` when initializing the engine.`,
    );
  }
  const needBlocks = blocksPerRequest(r, ctx.model);
  if (needBlocks > mem.numBlocks) {
    const needGib = (needBlocks * mem.blockBytesPerGpu) / GIB;
    const estimate = estimatedMaxModelLen(r, ctx.model, mem.numBlocks);
    const estimated = estimate > 0 ? ` Based on the available memory, the estimated maximum model length is ${estimate}.` : '';
    return memFail(
      'C13',
      `ValueError: To serve at least one request with the models's max seq len (${r.max_model_len}), (${fmt(needGib)} GiB KV cache is needed, which is larger than the available KV cache memory (${fmt(mem.kvGibPerGpu)} GiB).${estimated} Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine.`,
    );
  }
  if (mem.headroomGib < 0) {
    return memFail(
      'C14',
      `torch.OutOfMemoryError: CUDA out of memory during CUDA graph capture (${mem.captureSizes} sizes need ≈${fmt(mem.cudagraphGib)} GiB; ${fmt(mem.headroomGib + mem.cudagraphGib)} GiB free outside gpu_memory_utilization=${r.gpu_memory_utilization}). Decrease gpu_memory_utilization, reduce max_cudagraph_capture_size or use --enforce-eager.`,
    );
  }
  return null;
}

/** Whether fp8 weights run on fp8 tensor cores (W8A8) or only save memory (weight-only Marlin). */
export function fp8Compute(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec): boolean {
  return linearFormat(r, model) === 'fp8' && hasFp8Compute(hw) && (hw.compute_capability === null || hw.compute_capability >= 8.9);
}
