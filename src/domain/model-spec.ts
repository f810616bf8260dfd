import { z } from 'zod';

/** A model architecture from `data/models.yaml` (reference §12), each row with its source. */
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
    })
    .nullable()
    .default(null),
  /**
   * Layers with sliding-window attention (gpt-oss alternates sliding and full layers): they keep at
   * most `tokens` of KV per request. vLLM's hybrid KV cache gives them their own block group.
   */
  sliding_window: z.strictObject({ tokens: z.int().positive(), layers: z.int().positive() }).nullable().default(null),
  /**
   * The checkpoint's own weight format when it is quantized: `fp8` (block-scaled W8A8, e.g. Qwen's FP8
   * repos, 128×128 blocks), `mxfp4` (gpt-oss: routed experts in MXFP4, 4.25 bits a weight with their
   * scales; attention, router, embedding and lm_head in bf16). `none`: bf16/fp16 weights.
   */
  native_quantization: z.enum(['none', 'fp8', 'mxfp4']).default('none'),
  supports_pp: z.boolean().default(true),
  dtype: z.enum(['bfloat16', 'float16']).default('bfloat16'),
  source: z.string().min(1),
});
export type ModelSpec = z.infer<typeof ModelSpec>;

/** KV-cache bytes per token for the whole model (all layers) at the given bytes per element. */
export function kvBytesPerToken(m: ModelSpec, bytesPerElement: number): number {
  return 2 * m.layers * m.num_kv_heads * m.head_dim * bytesPerElement;
}
