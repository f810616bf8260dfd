import type { ModelSpec, ResolvedServerConfig } from '../domain/index.js';
import { assertNever } from '../errors.js';

/**
 * What the weights are made of and where they live. A model's parameters split into routed experts
 * (MoE only), the embedding and lm_head, a vision tower (multimodal checkpoints), and the rest
 * (attention, dense MLPs, norms, router). Each part has a storage format: bf16; the checkpoint's own
 * format for the linear layers (`native_quantization`) or fp8 under `--quantization fp8`; MXFP4 for
 * gpt-oss's experts. Embeddings, lm_head and the vision tower stay 16-bit in every format (the
 * quantizers' `ignore`/`modules_to_not_convert` lists leave them out).
 *
 * Placement (vLLM `FusedMoEParallelConfig.make`): attention, the dense parts and the vocabulary are
 * sharded over tensor parallelism and replicated across data-parallel ranks; the experts of an MoE
 * model are spread over all DP × TP ranks. Without `--enable-expert-parallel` every rank holds a 1/(DP·TP)
 * slice of every expert's intermediate dimension; with it (and more than one rank) every rank holds
 * whole experts, ⌈E / (DP·TP)⌉ on the fullest. A dense model's DP ranks are independent replicas.
 */
export type WeightFormat = 'bf16' | 'fp8' | 'int8' | 'w4a16' | 'awq' | 'gptq' | 'fp4' | 'mxfp4';

/** 4-bit integer formats' scales and zero points are priced at the usual group of 128 weights. */
const INT4_GROUP = 128;

/**
 * Bytes one weight costs, scales included. fp8 and int8: one byte (a 128×128 block's fp32 scale, or a
 * channel's, is < 0.01%). w4a16 (compressed-tensors, symmetric): 4 bits plus a 16-bit scale per group.
 * AWQ and GPTQ: 4 bits plus a 16-bit scale and a packed 4-bit zero point per group (AutoAWQ's and
 * AutoGPTQ's `scales`/`qzeros`; GPTQ's per-row `g_idx` is < 0.1%). fp4 (NVFP4): 4 bits plus an fp8
 * scale per 16 (4.5 bits). MXFP4: 4 bits plus an 8-bit scale per 32 (4.25 bits).
 */
export const BYTES_PER_WEIGHT: Readonly<Record<WeightFormat, number>> = {
  bf16: 2,
  fp8: 1,
  int8: 1,
  w4a16: (4 + 16 / INT4_GROUP) / 8,
  awq: (4 + 20 / INT4_GROUP) / 8,
  gptq: (4 + 20 / INT4_GROUP) / 8,
  fp4: 4.5 / 8,
  mxfp4: 4.25 / 8,
};

/** The linear layers' format: the checkpoint's own (gpt-oss quantizes only its experts), or fp8 under `--quantization fp8`. */
export function linearFormat(r: ResolvedServerConfig, model: ModelSpec): WeightFormat {
  const q = model.native_quantization;
  switch (q) {
    case 'none':
    case 'mxfp4':
      return r.quantization === 'fp8' ? 'fp8' : 'bf16';
    case 'fp8':
    case 'int8':
    case 'w4a16':
    case 'awq':
    case 'gptq':
    case 'fp4':
      return q;
    default:
      return assertNever(q, 'native_quantization');
  }
}

export function expertFormat(r: ResolvedServerConfig, model: ModelSpec): WeightFormat {
  return model.native_quantization === 'mxfp4' ? 'mxfp4' : linearFormat(r, model);
}

/** Layers whose MLP is routed experts (all but an MoE model's `dense_layers`; 0 for a dense model). */
export function moeLayers(model: ModelSpec): number {
  return model.moe === null ? 0 : model.layers - (model.moe.dense_layers ?? 0);
}

/** Parameters of the routed experts, all layers (0 for a dense model). */
export function expertParams(model: ModelSpec): number {
  const moe = model.moe;
  if (moe === null) return 0;
  return moeLayers(model) * moe.experts * 3 * model.hidden_size * moe.expert_intermediate_size;
}

/** Embedding plus lm_head parameters (one matrix when tied). */
export function embeddingParams(model: ModelSpec): number {
  return model.vocab_size * model.hidden_size * (model.tied_embeddings ? 1 : 2);
}

/**
 * MXFP4 experts as vLLM's Marlin kernels hold them on Hopper (InferenceX's gpt-oss runs, and vLLM's
 * default there before the Triton backend): the intermediate dimension split over ranks in whole
 * 32-wide blocks, each rank's slice padded to a multiple of 128 and the hidden size to 256
 * (`mxfp4.py`). gpt-oss-120b on one H100 then loads 65.9 GiB, as vLLM logs it ("Model loading took
 * 65.9651 GiB", vLLM issue #23278), where its unpadded weights are 60.8 GiB.
 */
const MXFP4_BLOCK = 32;
const MXFP4_PAD_INTERMEDIATE = 128;
const MXFP4_PAD_HIDDEN = 256;

const roundUp = (x: number, m: number): number => Math.ceil(x / m) * m;

export interface MoeLayout {
  /** Ranks the experts are spread over: DP × TP. */
  readonly ranks: number;
  /** Whole experts per rank (expert parallelism in effect: the flag and more than one rank). */
  readonly expertParallel: boolean;
  /** Experts on the fullest rank: ⌈E / ranks⌉ with EP, E (each sliced) without. */
  readonly expertsPerRank: number;
  /** The share of one expert's intermediate dimension each rank computes: the full width with EP. */
  readonly sliceWidth: number;
}

export function moeLayout(r: ResolvedServerConfig, model: ModelSpec): MoeLayout | null {
  const moe = model.moe;
  if (moe === null) return null;
  const ranks = r.tensor_parallel_size * r.data_parallel_size;
  const ep = r.enable_expert_parallel && ranks > 1;
  return {
    ranks,
    expertParallel: ep,
    expertsPerRank: ep ? Math.ceil(moe.experts / ranks) : moe.experts,
    sliceWidth: ep ? moe.expert_intermediate_size : Math.ceil(moe.expert_intermediate_size / ranks),
  };
}

/**
 * Distinct experts `tokens` tokens route to, in expectation, under uniform top-k routing:
 * E·(1 − (1 − k/E)^T). One token touches k; a few hundred touch nearly all E.
 */
export function expertsTouched(experts: number, topK: number, tokens: number): number {
  return experts * (1 - (1 - topK / experts) ** tokens);
}

/**
 * Bytes of one expert's share on one GPU, in one layer: its whole gated MLP under expert parallelism,
 * else a 1/(DP·TP) slice of its intermediate dimension (MXFP4 as padded for Marlin).
 */
export function expertSliceBytesPerLayer(r: ResolvedServerConfig, model: ModelSpec): number {
  const layout = moeLayout(r, model);
  if (layout === null || model.moe === null) return 0;
  const format = expertFormat(r, model);
  if (format !== 'mxfp4') return 3 * model.hidden_size * layout.sliceWidth * BYTES_PER_WEIGHT[format];
  const inter = model.moe.expert_intermediate_size;
  const blocks = layout.expertParallel ? inter : Math.ceil(inter / MXFP4_BLOCK / layout.ranks) * MXFP4_BLOCK;
  return 3 * roundUp(model.hidden_size, MXFP4_PAD_HIDDEN) * roundUp(blocks, MXFP4_PAD_INTERMEDIATE) * BYTES_PER_WEIGHT.mxfp4;
}

/** Bytes of everything but the routed experts, unsharded: linear layers in their format, embeddings and vision tower in bf16. */
function nonExpertBytes(r: ResolvedServerConfig, model: ModelSpec): number {
  const embed = embeddingParams(model);
  const vision = model.vision_params_b * 1e9;
  const rest = Math.max(0, model.params_b * 1e9 - expertParams(model) - embed - vision);
  return rest * BYTES_PER_WEIGHT[linearFormat(r, model)] + (embed + vision) * BYTES_PER_WEIGHT.bf16;
}

/** Weight bytes on the fullest GPU of the deployment. */
export function weightBytesPerGpu(r: ResolvedServerConfig, model: ModelSpec): number {
  const bytes = nonExpertBytes(r, model) / r.tensor_parallel_size;
  const layout = moeLayout(r, model);
  return layout === null ? bytes : bytes + moeLayers(model) * layout.expertsPerRank * expertSliceBytesPerLayer(r, model);
}

/** Weight bytes of the whole checkpoint, unpadded (what its files hold; the catalog test checks it against the model card). */
export function weightBytesTotal(r: ResolvedServerConfig, model: ModelSpec): number {
  return nonExpertBytes(r, model) + expertParams(model) * BYTES_PER_WEIGHT[expertFormat(r, model)];
}
