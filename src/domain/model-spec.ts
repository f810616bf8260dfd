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
  moe: z.strictObject({ experts: z.int().positive(), top_k: z.int().positive() }).nullable().default(null),
  supports_pp: z.boolean().default(true),
  dtype: z.enum(['bfloat16', 'float16']).default('bfloat16'),
  source: z.string().min(1),
});
export type ModelSpec = z.infer<typeof ModelSpec>;

/** KV-cache bytes per token for the whole model (all layers) at the given bytes per element. */
export function kvBytesPerToken(m: ModelSpec, bytesPerElement: number): number {
  return 2 * m.layers * m.num_kv_heads * m.head_dim * bytesPerElement;
}
