import type { ModelSpec } from '../domain/index.js';

/**
 * A language model's shape as config.json states it, normalised across architectures
 * (`hf-config.ts` reads it), and the parameter counts that follow from it. Counting the tensors of
 * each architecture's modelling code (transformers `modeling_*.py`, vLLM `model_executor/models/*.py`)
 * reproduces the model cards' totals; the catalog test checks each against them.
 */
export interface TextShape {
  readonly layers: number;
  readonly hidden: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  /** The dense MLP's width (an MoE model's dense layers; Llama 4's `intermediate_size_mlp`). */
  readonly intermediate: number;
  readonly vocab: number;
  readonly tied: boolean;
  readonly context: number;
  /** Biases on q, k, v (Qwen2, gpt-oss, Llama with attention_bias) and on o (gpt-oss, Llama with attention_bias). */
  readonly qkvBias: boolean;
  readonly oBias: boolean;
  /** Per-head RMSNorm of q and k (Qwen3, Gemma 3); Llama 4's is a weightless L2 norm. */
  readonly qkNorm: boolean;
  /** gpt-oss's learned attention sinks, one per head. */
  readonly sinks: boolean;
  /** RMSNorms per decoder layer: 2, Gemma 2/3's 4 (pre- and post- attention and MLP). */
  readonly normsPerLayer: number;
  readonly mla: ModelSpec['mla'];
  readonly moe: MoeShape | null;
  readonly sliding: ModelSpec['sliding_window'];
  readonly chunked: ModelSpec['chunked_attention'];
}

export interface MoeShape {
  readonly experts: number;
  readonly topK: number;
  /** Shared experts of `expertInter` width that every token runs (Qwen2-MoE's is counted in units of it). */
  readonly shared: number;
  readonly expertInter: number;
  readonly denseLayers: number;
  /** A bias on the router (gpt-oss) or DeepSeek V3's `e_score_correction_bias`. */
  readonly routerBias: boolean;
  /** Biases inside each expert (gpt-oss's gate_up and down projections). */
  readonly expertBias: boolean;
  /** Qwen2-MoE's sigmoid gate on the shared expert (hidden → 1). */
  readonly sharedGate: boolean;
}

export interface ParamCounts {
  /** Every parameter of the checkpoint's model, the vision tower's included. */
  readonly total: number;
  /** Touched per text token: all but the unrouted experts and the vision tower, the embedding lookup included. */
  readonly active: number;
  /** In matmuls per token: active less the embedding lookup (a tied lm_head is still a matmul). */
  readonly linear: number;
}

/** One decoder layer's attention, projections, biases, norms and sinks. */
function attentionParams(s: TextShape): number {
  const d = s.hidden;
  const mla = s.mla;
  if (mla !== null) {
    // DeepSeek V2/V3 (`DeepseekV2MLAAttention`): q through a LoRA (or directly), the KV latent and the
    // shared rope key from one down-projection, then the up-projection of the latent to per-head k and v.
    const qHead = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    const q = mla.q_lora_rank === null ? d * s.heads * qHead : d * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * s.heads * qHead;
    const kvA = d * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank;
    const kvB = mla.kv_lora_rank * s.heads * (mla.qk_nope_head_dim + mla.v_head_dim);
    return q + kvA + kvB + s.heads * mla.v_head_dim * d;
  }
  const qkvOut = (s.heads + 2 * s.kvHeads) * s.headDim;
  return d * qkvOut + s.heads * s.headDim * d + (s.qkvBias ? qkvOut : 0) + (s.oBias ? d : 0) + (s.qkNorm ? 2 * s.headDim : 0) + (s.sinks ? s.heads : 0);
}

/** A gated MLP (gate, up, down) of width `inter`. */
const mlpParams = (d: number, inter: number): number => 3 * d * inter;

export function countParams(s: TextShape, visionParams: number): ParamCounts {
  const d = s.hidden;
  const embed = s.vocab * d;
  const lmHead = s.tied ? 0 : s.vocab * d;
  const perLayer = attentionParams(s) + s.normsPerLayer * d;
  const moe = s.moe;
  let mlpTotal: number;
  let mlpActive: number;
  if (moe === null) {
    mlpTotal = s.layers * mlpParams(d, s.intermediate);
    mlpActive = mlpTotal;
  } else {
    const expert = mlpParams(d, moe.expertInter) + (moe.expertBias ? 2 * moe.expertInter + d : 0);
    const router = d * moe.experts + (moe.routerBias ? moe.experts : 0);
    const shared = moe.shared * mlpParams(d, moe.expertInter) + (moe.sharedGate ? d : 0);
    const moeLayers = s.layers - moe.denseLayers;
    const dense = moe.denseLayers * mlpParams(d, s.intermediate);
    mlpTotal = dense + moeLayers * (router + shared + moe.experts * expert);
    mlpActive = dense + moeLayers * (router + shared + moe.topK * expert);
  }
  const common = s.layers * perLayer + d + embed + lmHead;
  const active = common + mlpActive;
  return { total: common + mlpTotal + visionParams, active, linear: active - (s.tied ? 0 : embed) };
}

/**
 * A ViT vision tower and its projector, from `vision_config` (SigLIP for Gemma 3, Llama 4's own ViT):
 * per layer q, k, v, o with biases, a two-matrix MLP with biases and two LayerNorms; the patch and
 * position embeddings; a projector from the vision width (or Llama 4's pixel-shuffled adapter output)
 * to the text width. An estimate (class tokens and norms of the projector aside) within a few
 * million parameters of the model cards' vision counts.
 */
export interface VisionShape {
  readonly layers: number;
  readonly hidden: number;
  readonly intermediate: number;
  readonly patch: number;
  readonly image: number;
  /** Llama 4's adapter: pixel shuffle by `ratio`, then an MLP to `adapterIn` and `adapterOut`. */
  readonly adapter: { readonly ratio: number; readonly adapterIn: number; readonly adapterOut: number } | null;
}

export function visionParams(v: VisionShape, textHidden: number): number {
  const h = v.hidden;
  const layer = 4 * h * h + 4 * h + 2 * h * v.intermediate + v.intermediate + h + 4 * h;
  const patches = Math.floor(v.image / v.patch) ** 2;
  const embeddings = 3 * v.patch * v.patch * h + h + patches * h + 2 * h;
  const a = v.adapter;
  const projector = a === null ? h * textHidden : Math.round(h / (a.ratio * a.ratio)) * a.adapterIn + a.adapterIn * a.adapterOut + a.adapterOut * textHidden;
  return v.layers * layer + embeddings + projector;
}
