import type { Hardware, ModelSpec, ResolvedServerConfig } from '../domain/index.js';
import { fp8Compute, kvBytesPerTokenPerGpu } from './memory.js';
import type { SimProfile } from '../domain/index.js';
import { cudagraphCaptureSizes } from './resolve.js';

/**
 * Step-time model: one engine step of vLLM V1 priced kernel by kernel on one GPU of a replica, from the
 * GPU's datasheet (HBM bandwidth, dense bf16/fp8 peaks, interconnect) and the efficiencies of a
 * `SimProfile`. Per layer: the four GEMMs (QKV, O, gate/up, down), each the slower of streaming its
 * weights and computing its FLOPs (and never faster than the kernel floor); attention, the slower of
 * reading the KV cache and its FLOPs; the small kernels around them; two all-reduces under tensor
 * parallelism. Per step: the lm-head GEMM of the sampled tokens, fixed launch costs (CUDA graphs for
 * pure decode, piecewise for mixed steps, none in eager mode) and CPU time, hidden under the GPU with
 * async scheduling. Mixed prefill/decode steps are just steps with more tokens: the same formulas
 * price a 2,048-token prefill chunk riding with 60 decodes. `makeStepModel` folds every constant once.
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
  /** Every request decodes one token (a uniform decode batch: full CUDA graphs apply). */
  decodeOnly: boolean;
}

export interface StepModel {
  /** Step wall time in ms, noise-free. */
  stepMs(b: StepBatch): number;
  /** GPU part only (for features and tests). */
  gpuMs(b: StepBatch): number;
  readonly captureSizes: readonly number[];
}

/** Fraction of the smaller of memory and compute time hidden under the larger within one kernel. */
const OVERLAP = 0.8;
/** fp8 KV costs a little dequantisation on reads (reference §13.2: η_kv × 0.95). */
const FP8_KV_EFFICIENCY = 0.95;
/** Prefix caching bookkeeping (reference §13.2: +0.5% CPU). */
const PREFIX_CACHE_CPU_FACTOR = 1.005;
/** Activations moved per token by a GEMM (input and output rows), bytes per element. */
const ACT_BYTES = 2;

/** One GEMM of a layer on one GPU (already divided by TP). */
interface Gemm {
  /** Weights each token multiplies by (FLOPs = 2 × params × tokens). */
  readonly params: number;
  /** Weight bytes a step of `tokens` tokens reads (an MoE layer reads only the experts it touches). */
  readonly bytes: (tokens: number) => number;
  /** in + out width (activation traffic per token). */
  readonly width: number;
}

/** Per-direction bandwidth of one GPU's link (datasheets state NVLink as aggregate bidirectional). */
function linkBytesPerS(hw: Hardware): number {
  return (hw.interconnect.bandwidth_gbs / 2) * 1e9;
}

export function makeStepModel(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec, p: SimProfile): StepModel {
  const tp = r.tensor_parallel_size;
  const L = model.layers;
  const d = model.hidden_size;
  const hd = model.head_dim;
  const heads = model.num_attention_heads / tp;
  // vLLM replicates KV heads when TP exceeds their count: every rank keeps at least one.
  const kvHeads = Math.max(1, model.num_kv_heads / tp);
  const fp8 = fp8Compute(r, hw);
  const peak = (fp8 ? (hw.fp8_tflops ?? hw.bf16_tflops) : hw.bf16_tflops) * 1e12 * (fp8 ? p.mfu_fp8 : p.mfu_bf16);
  const attnPeak = hw.bf16_tflops * 1e12 * p.mfu_bf16 * p.attn_compute_share;
  const bw = hw.hbm_bandwidth_gbs * 1e9;
  const wBytes = r.quantization === 'fp8' ? 1 : 2;
  const moe = model.moe;
  const inter = model.intermediate_size;
  const mlpWidth = inter * (moe === null ? 1 : moe.top_k);
  const dense = (params: number): ((tokens: number) => number) => {
    const b = params * wBytes;
    return () => b;
  };
  // MoE: all experts are resident, but a step reads only those its tokens route to: E·(1 − (1 − k/E)^T)
  // under uniform routing (a few dozen tokens touch nearly all of them).
  const experts = (perExpert: number): ((tokens: number) => number) => {
    if (moe === null) return dense(perExpert);
    const { experts: e, top_k: k } = moe;
    return (tokens) => e * (1 - (1 - k / e) ** tokens) * perExpert * wBytes;
  };
  const qkv = (d * (model.num_attention_heads + 2 * model.num_kv_heads) * hd) / tp;
  const o = (model.num_attention_heads * hd * d) / tp;
  const gemms: Gemm[] = [
    { params: qkv, bytes: dense(qkv), width: d + (heads + 2 * kvHeads) * hd },
    { params: o, bytes: dense(o), width: heads * hd + d },
    { params: (2 * d * mlpWidth) / tp, bytes: experts((2 * d * inter) / tp), width: d + (2 * mlpWidth) / tp },
    { params: (mlpWidth * d) / tp, bytes: experts((inter * d) / tp), width: mlpWidth / tp + d },
  ];
  const headParams = (d * model.vocab_size) / tp;
  const kvTok = kvBytesPerTokenPerGpu(r, model) / L;
  const etaKv = p.eta_kv * (r.kv_cache_dtype === 'auto' ? 1 : FP8_KV_EFFICIENCY);
  const attnFlopsPerPair = 4 * heads * hd;
  const floorS = p.kernel_floor_us / 1e6;
  const layerFixedS = p.layer_fixed_us / 1e6;
  const arLatencyS = tp === 1 ? 0 : (hw.interconnect.kind === 'nvlink' || hw.interconnect.kind === 'infinity_fabric' ? p.allreduce_nvlink_us : p.allreduce_pcie_us) / 1e6;
  const arBytesPerToken = tp === 1 ? 0 : (2 * (tp - 1) * d * 2) / tp;
  const linkBw = linkBytesPerS(hw) * p.link_efficiency;
  const captureSizes = cudagraphCaptureSizes(r);
  const cgMax = captureSizes.length === 0 ? 0 : (captureSizes[captureSizes.length - 1] as number);
  // Padded size lookup for decode batches up to cgMax.
  const padTo = new Int32Array(cgMax + 1);
  for (let b = 1, i = 0; b <= cgMax; b++) {
    while ((captureSizes[i] as number) < b) i++;
    padTo[b] = captureSizes[i] as number;
  }
  const piecewiseMs = (L * p.piecewise_per_layer_us) / 1000;
  const eagerMs = (L * (p.piecewise_per_layer_us + p.eager_per_layer_us)) / 1000;
  const cpuFactor = r.enable_prefix_caching ? PREFIX_CACHE_CPU_FACTOR : 1;

  const kernelS = (memS: number, compS: number): number => Math.max(floorS, Math.max(memS, compS) + (1 - OVERLAP) * Math.min(memS, compS));

  const gpuMs = (b: StepBatch): number => {
    const fullGraph = b.decodeOnly && b.tokens <= cgMax;
    const t = fullGraph ? (padTo[b.tokens] as number) : b.tokens;
    let layerS = layerFixedS;
    for (const g of gemms) layerS += kernelS((g.bytes(t) + t * g.width * ACT_BYTES) / (bw * p.eta_weights), (2 * g.params * t) / peak);
    // Attention: the cached KV read once per step (and the new tokens' KV written), vs its FLOPs.
    layerS += kernelS((kvTok * (b.kvReadTokens + b.tokens)) / (bw * etaKv), (attnFlopsPerPair * b.attnPairs) / attnPeak);
    if (tp > 1) layerS += 2 * (arLatencyS + (arBytesPerToken * t) / linkBw);
    const headS = kernelS((headParams * 2 + b.sampled * (d + model.vocab_size / tp) * ACT_BYTES) / (bw * p.eta_weights), (2 * headParams * b.sampled) / peak);
    // Launch overheads: full graphs replay in one go; mixed batches run attention outside the graph
    // (PIECEWISE); eager mode and batches past the largest capture size launch every kernel.
    const launchMs = r.enforce_eager || b.tokens > cgMax ? eagerMs : fullGraph ? 0 : piecewiseMs;
    return (L * layerS + headS) * 1000 + p.step_fixed_ms + launchMs;
  };
  const stepMs = (b: StepBatch): number => {
    const g = gpuMs(b);
    const cpu = (p.cpu_step_ms + (p.cpu_per_request_us * b.requests) / 1000) * cpuFactor;
    return r.async_scheduling ? Math.max(g, cpu) : g + cpu;
  };
  return { stepMs, gpuMs, captureSizes };
}

/** Roofline feature: ms of one decode step of `batch` requests at `contextTokens` each (noise-free). */
// eslint-disable-next-line max-params -- the deployment (config, GPU, model, profile) and the batch shape
export function idealDecodeStepMs(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec, p: SimProfile, batch: number, contextTokens: number): number {
  const m = makeStepModel(r, hw, model, p);
  return m.stepMs({
    tokens: batch,
    requests: batch,
    sampled: batch,
    attnPairs: batch * (contextTokens + 1),
    kvReadTokens: batch * contextTokens,
    decodeOnly: true,
  });
}

/**
 * Roofline feature: ms to prefill `promptTokens` of one request in chunks of the token budget
 * (max_num_batched_tokens; whole when the prompt fits), noise-free.
 */
export function prefillStepMs(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec, p: SimProfile, promptTokens: number): number {
  const m = makeStepModel(r, hw, model, p);
  const chunk = Math.max(1, r.max_num_batched_tokens);
  let total = 0;
  for (let c = 0; c < promptTokens; c += chunk) {
    const q = Math.min(chunk, promptTokens - c);
    total += m.stepMs({
      tokens: q,
      requests: 1,
      sampled: c + q >= promptTokens ? 1 : 0,
      attnPairs: q * (c + (q + 1) / 2),
      kvReadTokens: c,
      decodeOnly: false,
    });
  }
  return total;
}
