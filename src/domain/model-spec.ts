import { z } from 'zod';

/** A model architecture from `data/models.yaml` (docs/references/vllm-engine.md#model-configurations), each row with its source. */
export const ModelSpec = z.strictObject({
  id: z.string().min(1),
  hf_name: z.string(),
  aliases: z.array(z.string()).default([]),
  layers: z.int().positive(),
  hidden_size: z.int().positive(),
  num_attention_heads: z.int().positive(),
  num_kv_heads: z.int().positive(),
  head_dim: z.int().positive(),
  intermediate_size: z.int().positive(),
  vocab_size: z.int().positive(),
  tied_embeddings: z.boolean(),
  /** Total parameters, billions. */
  params_b: z.number().positive(),
  /** Parameters active per token (MoE: shared + top-k experts), billions. */
  active_params_b: z.number().positive(),
  /** Parameters in matmuls per token, lm_head included, embedding lookup excluded (P_lin), billions. */
  linear_params_b: z.number().positive(),
  native_context: z.int().positive(),
  /**
   * Mixture of experts: every layer's MLP is `experts` routed experts (each a gated MLP of
   * `expert_intermediate_size`), `top_k` of them per token, plus `shared_experts` that every token runs.
   */
  moe: z
    .strictObject({
      experts: z.int().positive(),
      top_k: z.int().positive(),
      shared_experts: z.int().nonnegative().default(0),
      /** Width of one expert's MLP (`moe_intermediate_size`; Mixtral's is its `intermediate_size`). */
      expert_intermediate_size: z.int().positive(),
      /**
       * Layers whose MLP is dense (`intermediate_size` wide) rather than experts: DeepSeek V3's first
       * `first_k_dense_replace`, Llama 4 Maverick's every other layer. Absent or 0: every layer is MoE
       * (optional rather than defaulted so the catalog's and tests' MoE literals stay valid as written).
       */
      dense_layers: z.int().nonnegative().optional(),
    })
    .nullable()
    .default(null),
  /**
   * Layers with sliding-window attention (gpt-oss alternates sliding and full layers): they keep at
   * most `tokens` of KV per request. vLLM's hybrid KV cache gives them their own block group.
   */
  sliding_window: z.strictObject({ tokens: z.int().positive(), layers: z.int().positive() }).nullable().default(null),
  /**
   * Layers with chunked local attention (Llama 4: every layer but each 4th, the NoPE ones, attends only
   * within its `attention_chunk_size` chunk). A request holds at most a chunk of KV in them, as in a
   * sliding window; vLLM gives them a block group of their own too.
   */
  chunked_attention: z.strictObject({ tokens: z.int().positive(), layers: z.int().positive() }).nullable().default(null),
  /**
   * Multi-head latent attention (DeepSeek V2/V3/R1): each layer caches one latent of `kv_lora_rank`
   * plus a shared rotary key of `qk_rope_head_dim` per token, not 2 × heads × head_dim (vLLM
   * `MLACommonBackend`: one KV "head" of kv_lora_rank + qk_rope_head_dim, replicated on every TP rank).
   * `q_lora_rank` is null when queries are projected directly (DeepSeek-V2-Lite).
   */
  mla: z
    .strictObject({
      kv_lora_rank: z.int().positive(),
      qk_rope_head_dim: z.int().positive(),
      qk_nope_head_dim: z.int().positive(),
      v_head_dim: z.int().positive(),
      q_lora_rank: z.int().positive().nullable(),
    })
    .nullable()
    .default(null),
  /**
   * Parameters of a vision tower and its projector (Gemma 3, Llama 4), billions: part of `params_b` and
   * of the weights in memory, not of a text token's decode step (not in active/linear params).
   */
  vision_params_b: z.number().nonnegative().default(0),
  /**
   * The checkpoint's own weight format when it is quantized (embedding and lm_head stay 16-bit in all):
   * `fp8` (W8A8 e4m3: Qwen's and DeepSeek's 128×128-block repos, ModelOpt/FBGEMM/compressed-tensors
   * per-tensor or per-channel), `int8` (compressed-tensors W8A8 int8), `w4a16` (compressed-tensors
   * 4-bit integer weights, 16-bit activations), `awq` and `gptq` (4-bit integer weights with a scale and
   * zero point per group), `fp4` (ModelOpt NVFP4: e2m1 with an fp8 scale per 16), `mxfp4` (gpt-oss:
   * routed experts in MXFP4, 4.25 bits a weight with their scales; attention, router, embedding and
   * lm_head in bf16). `none`: bf16/fp16 weights.
   */
  native_quantization: z.enum(['none', 'fp8', 'int8', 'w4a16', 'awq', 'gptq', 'fp4', 'mxfp4']).default('none'),
  /**
   * The checkpoint's `quantization_config.quant_method` as vLLM names it, when it differs from the
   * format's own name (a ModelOpt or compressed-tensors FP8 checkpoint is `fp8` by format but refuses
   * `--quantization fp8`). null: the method named like `native_quantization` (Qwen's FP8 repos,
   * gpt-oss's mxfp4).
   */
  quantization_method: z.enum(['fp8', 'fbgemm_fp8', 'compressed-tensors', 'awq', 'gptq', 'modelopt', 'mxfp4']).nullable().default(null),
  /**
   * Columns that share one weight scale along the dimension tensor parallelism splits (fp8 blocks,
   * AWQ/GPTQ/W4A16 groups): each GPU's slice must hold whole groups. null: per-tensor or per-channel
   * scales, or a `fp8` checkpoint with `quantization_method` null, whose blocks are Qwen's 128.
   */
  quant_group_size: z.int().positive().nullable().default(null),
  supports_pp: z.boolean().default(true),
  dtype: z.enum(['bfloat16', 'float16']).default('bfloat16'),
  source: z.string().min(1),
});
export type ModelSpec = z.infer<typeof ModelSpec>;

/** KV-cache elements one token costs in one layer of the whole model: K and V of every KV head, or MLA's latent. */
export function kvElementsPerTokenLayer(m: ModelSpec): number {
  return m.mla === null ? 2 * m.num_kv_heads * m.head_dim : m.mla.kv_lora_rank + m.mla.qk_rope_head_dim;
}

/** KV-cache bytes per token for the whole model (all layers) at the given bytes per element. */
export function kvBytesPerToken(m: ModelSpec, bytesPerElement: number): number {
  return m.layers * kvElementsPerTokenLayer(m) * bytesPerElement;
}

/**
 * The layers that attend to a bounded span (a sliding window, or Llama 4's chunks) and that span in
 * tokens, or null. No model has both kinds, so memory, the KV cache and step time treat them alike;
 * for chunked attention the span is an upper bound (a query sees the keys of its own chunk so far).
 */
export function localAttention(m: ModelSpec): { tokens: number; layers: number } | null {
  return m.sliding_window ?? m.chunked_attention;
}

/** The checkpoint's quant_method as vLLM matches it against `--quantization` ('none' for an unquantized checkpoint). */
export function checkpointQuantMethod(m: ModelSpec): string {
  return m.native_quantization === 'none' ? 'none' : (m.quantization_method ?? m.native_quantization);
}

/**
 * Columns per weight scale that a TP or expert slice must hold whole, or null when scales are per
 * tensor or per channel. An `fp8` checkpoint without an explicit group is one of Qwen's FP8 repos,
 * whose `weight_block_size` is [128, 128] (their config.json).
 */
export function quantGroupColumns(m: ModelSpec): number | null {
  if (m.quant_group_size !== null) return m.quant_group_size;
  return m.native_quantization === 'fp8' && m.quantization_method === null ? 128 : null;
}
