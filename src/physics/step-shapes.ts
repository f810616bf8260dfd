import { localAttention, type Hardware, type ModelSpec, type ResolvedServerConfig } from '../domain/index.js';
import { fp8Compute, fullAttentionLayers, kvBytesPerTokenLayerPerGpu } from './memory.js';
import { BYTES_PER_WEIGHT, linearFormat, moeLayers } from './weights.js';

/**
 * The shapes one engine step works on, per GPU of a replica, folded once from the model and the
 * layout: what the step-time model (step-time.ts) prices and what the power model's activity
 * (step-activity.ts) counts. One place, so that the two never disagree about a layer.
 */

/** What one engine step schedules, summed over its requests. */
export interface StepBatch {
  /** Tokens in the flat batch (Σ q_i). */
  tokens: number;
  /** Requests in the batch. */
  requests: number;
  /** Requests that sample a token this step (decodes and final prefill chunks). */
  sampled: number;
  /** Σ q_i·(c_i + (q_i + 1)/2): (query, key) pairs of causal attention. */
  attnPairs: number;
  /** Σ c_i: cached tokens whose KV is read. */
  kvReadTokens: number;
  /** The same two sums with every context capped at the sliding window (= the full ones without a window). */
  windowPairs: number;
  windowKvReadTokens: number;
  /** Every request decodes one token (a uniform decode batch: full CUDA graphs apply). */
  decodeOnly: boolean;
}

/** Activations moved per token by a GEMM (input and output rows), bytes per element. */
export const ACT_BYTES = 2;

/** One GEMM of a layer on one GPU (already divided by TP). */
export interface Gemm {
  /** Weights each token multiplies by (FLOPs = 2 × params × tokens). */
  readonly params: number;
  /** Weight bytes a step reads (the MoE layer's experts are priced apart, `moeLayerCost`). */
  readonly bytes: number;
  /** in + out width (activation traffic per token). */
  readonly width: number;
}

export interface StepShapes {
  readonly tp: number;
  /** Whether the linear layers run W8A8 on fp8 tensor cores. */
  readonly fp8: boolean;
  /** Every layer's attention projections and dense MLP (or an MoE layer's shared experts). */
  readonly gemms: readonly Gemm[];
  /** Layers of an MoE model that run a dense MLP instead of the experts, and that MLP / the shared experts it replaces. */
  readonly denseLayers: number;
  readonly denseLayerGemms: readonly Gemm[];
  readonly sharedGemms: readonly Gemm[];
  /** lm-head weights per GPU. */
  readonly headParams: number;
  /** KV bytes per token per layer per GPU. */
  readonly kvTok: number;
  readonly fullLayers: number;
  readonly windowLayers: number;
  /** Sliding-window length in tokens (+∞ when every layer attends to the whole context). */
  readonly windowTokens: number;
  /** Attention FLOPs per (query, key) pair: prefill, and decode (MLA's absorbed latent path). */
  readonly attnFlopsPerPair: number;
  readonly decodeFlopsPerPair: number;
}

/** Per-direction bandwidth of one GPU's link (datasheets state NVLink as aggregate bidirectional). */
export function linkBytesPerS(hw: Hardware): number {
  return (hw.interconnect.bandwidth_gbs / 2) * 1e9;
}

export function stepShapes(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec): StepShapes {
  const tp = r.tensor_parallel_size;
  const d = model.hidden_size;
  const hd = model.head_dim;
  const heads = model.num_attention_heads / tp;
  // vLLM replicates KV heads when TP exceeds their count: every rank keeps at least one.
  const kvHeads = Math.max(1, model.num_kv_heads / tp);
  const wBytes = BYTES_PER_WEIGHT[linearFormat(r, model)];
  const gemm = (params: number, width: number): Gemm => ({ params, bytes: params * wBytes, width });
  const qkv = (d * (model.num_attention_heads + 2 * model.num_kv_heads) * hd) / tp;
  const o = (model.num_attention_heads * hd * d) / tp;
  const gemms: Gemm[] = model.mla === null ? [gemm(qkv, d + (heads + 2 * kvHeads) * hd), gemm(o, heads * hd + d)] : mlaGemms(model, tp).map((g) => gemm(g.params, g.width));
  const mlpGemms = (inter: number): Gemm[] => [gemm((2 * d * inter) / tp, d + (2 * inter) / tp), gemm((inter * d) / tp, inter / tp + d)];
  const moe = model.moe;
  // A dense model's MLP, or an MoE model's shared experts: sharded over TP, every token through it.
  const denseInter = moe === null ? model.intermediate_size : moe.shared_experts * moe.expert_intermediate_size;
  if (denseInter > 0) gemms.push(...mlpGemms(denseInter));
  // An MoE model's dense layers (DeepSeek's first three, Llama 4 Maverick's every other one) run a dense
  // MLP of `intermediate_size` in place of the shared experts and the routed ones.
  const denseLayers = moe === null ? 0 : model.layers - moeLayers(model);
  const fullLayers = fullAttentionLayers(model);
  return {
    tp,
    fp8: fp8Compute(r, hw, model),
    gemms,
    denseLayers,
    denseLayerGemms: denseLayers === 0 ? [] : mlpGemms(model.intermediate_size),
    sharedGemms: moe === null || denseInter === 0 ? [] : mlpGemms(denseInter),
    headParams: (d * model.vocab_size) / tp,
    kvTok: kvBytesPerTokenLayerPerGpu(r, model),
    fullLayers,
    windowLayers: model.layers - fullLayers,
    windowTokens: localAttention(model)?.tokens ?? Number.POSITIVE_INFINITY,
    attnFlopsPerPair: model.mla === null ? 4 * heads * hd : 2 * heads * (model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim + model.mla.v_head_dim),
    // MLA decodes in the latent space (vLLM's absorbed MLA decode path: q·k over kv_lora_rank +
    // qk_rope_head_dim, p·v over kv_lora_rank) and prefills with the latent expanded to per-head K and V.
    decodeFlopsPerPair: model.mla === null ? 4 * heads * hd : 2 * heads * (2 * model.mla.kv_lora_rank + model.mla.qk_rope_head_dim),
  };
}

/**
 * The attention projections of one MLA layer on one GPU (vLLM `DeepseekV2MLAAttention`): the
 * down-projections of the query and the KV latent are replicated on every rank (`fused_qkv_a_proj`, or
 * `kv_a_proj_with_mqa` beside a column-parallel `q_proj` without a query LoRA); the up-projections
 * (`q_b_proj`, `kv_b_proj`, absorbed into attention when decoding, same FLOPs per token) and `o_proj`
 * shard over TP.
 */
function mlaGemms(model: ModelSpec, tp: number): { params: number; width: number }[] {
  const mla = model.mla;
  if (mla === null) return [];
  const d = model.hidden_size;
  const heads = model.num_attention_heads / tp;
  const qHead = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  const latent = mla.kv_lora_rank + mla.qk_rope_head_dim;
  const kvB = { params: mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim), width: mla.kv_lora_rank + heads * (mla.qk_nope_head_dim + mla.v_head_dim) };
  const o = { params: heads * mla.v_head_dim * d, width: heads * mla.v_head_dim + d };
  if (mla.q_lora_rank === null) {
    return [{ params: d * heads * qHead, width: d + heads * qHead }, { params: d * latent, width: d + latent }, kvB, o];
  }
  const q = mla.q_lora_rank;
  return [{ params: d * (q + latent), width: d + q + latent }, { params: q * heads * qHead, width: q + heads * qHead }, kvB, o];
}
