import type { Hardware, ModelSpec, ResolvedServerConfig } from '../domain/index.js';
import { fp8Compute, kvBytesPerTokenPerGpu } from './memory.js';
import { cudagraphCaptureSizes } from './resolve.js';

/**
 * Step-time model (reference §7): a roofline over linear, lm-head and attention FLOPs, weight and
 * KV bytes, with the GPU's efficiency factors (`sim:` in data/hardware.yaml), TP all-reduce, fixed
 * per-step and per-layer costs, eager vs CUDA graphs and CPU time (hidden by async scheduling).
 * `makeStepModel` folds every constant once so one step costs a handful of flops to price.
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

/**
 * Fraction of the smaller of compute and memory time hidden under the larger (reference §7.2: 0.7–0.9).
 * With it, the plain roofline already gives the MFU ramp of small GEMMs that §7.2 models with
 * `n_half_tokens` (H100 8B: a 256-token chunk runs at 84% of large-chunk efficiency, 512 at 91%,
 * Sarathi's ≤20%/≤10%); a separate ramp on top would count the memory-bound floor twice, so
 * `n_half_tokens` (≈ the ridge point) is not used here.
 */
const OVERLAP = 0.8;
/** Attention kernels reach a lower share of peak than large GEMMs [est]. */
const ATTN_MFU_SHARE = 0.7;
/** fp8 KV costs a little dequantisation on reads (§13.2: η_kv × 0.95). */
const FP8_KV_EFFICIENCY = 0.95;
/** Prefix caching bookkeeping (§13.2: +0.5% CPU). */
const PREFIX_CACHE_CPU_FACTOR = 1.005;

export function makeStepModel(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec): StepModel {
  const f = hw.sim;
  const tp = r.tensor_parallel_size;
  const L = model.layers;
  const d = model.hidden_size;
  const V = model.vocab_size;
  const fp8 = fp8Compute(r, hw);
  const peakFlops = (fp8 ? (hw.fp8_tflops ?? hw.bf16_tflops) : hw.bf16_tflops) * 1e12;
  const mfuMax = fp8 ? (f.mfu_fp8 ?? f.mfu_bf16) : f.mfu_bf16;
  const headParams = d * V;
  const bodyParams = Math.max(0, model.linear_params_b * 1e9 - headParams);
  const attnFlopsPerPair = 4 * L * (model.num_attention_heads / tp) * model.head_dim;
  // Weight bytes read per step: matmul weights on this GPU (fp8 quantizes the body; lm_head stays
  // bf16). MoE reads only the experts the batch touches, E·(1 − (1 − k/E)^N) per layer.
  const bodyBytesPerParam = r.quantization === 'fp8' ? 1 : 2;
  const moe = model.moe;
  const expertParams = moe === null ? 0 : L * moe.experts * 3 * d * model.intermediate_size;
  const activeExpertParams = moe === null ? 0 : (expertParams * moe.top_k) / moe.experts;
  const denseBytes = ((bodyParams - activeExpertParams) * bodyBytesPerParam + headParams * 2) / tp;
  const expertBytes = (expertParams * bodyBytesPerParam) / tp;
  const linearBytes = denseBytes + (moe === null ? 0 : expertBytes);
  const bw = hw.hbm_bandwidth_gbs * 1e9;
  const kvTok = kvBytesPerTokenPerGpu(r, model);
  const etaKv = f.eta_kv * (r.kv_cache_dtype === 'auto' ? 1 : FP8_KV_EFFICIENCY);
  const tpLatencyMs = tp > 1 ? (2 * L * f.allreduce_latency_us) / 1000 : 0;
  const tpBytesPerToken = tp > 1 ? (2 * L * 2 * (tp - 1) * d * 2) / tp : 0;
  const linkBw = f.link_gbs * 1e9;
  const captureSizes = cudagraphCaptureSizes(r);
  const cgMax = captureSizes.length === 0 ? 0 : (captureSizes[captureSizes.length - 1] as number);
  // Padded size lookup for decode batches up to cgMax.
  const padTo = new Int32Array(cgMax + 1);
  for (let b = 1, i = 0; b <= cgMax; b++) {
    while ((captureSizes[i] as number) < b) i++;
    padTo[b] = captureSizes[i] as number;
  }
  const perLayerMs = (L * f.per_layer_us) / 1000;
  const eagerMs = (L * (f.per_layer_us + f.eager_per_layer_us)) / 1000;
  const cpuFactor = r.enable_prefix_caching ? PREFIX_CACHE_CPU_FACTOR : 1;

  const gpuMs = (b: StepBatch): number => {
    const fullGraph = b.decodeOnly && b.tokens <= cgMax;
    const tokens = fullGraph ? (padTo[b.tokens] as number) : b.tokens;
    const linFlops = (2 * (bodyParams * tokens + headParams * b.sampled)) / tp;
    const computeS = linFlops / (peakFlops * mfuMax) + (attnFlopsPerPair * b.attnPairs) / (peakFlops * mfuMax * ATTN_MFU_SHARE);
    let wBytes = linearBytes;
    if (moe !== null) {
      const touched = 1 - (1 - moe.top_k / moe.experts) ** tokens;
      wBytes = denseBytes + expertBytes * touched;
    }
    const memS = wBytes / (bw * f.eta_w) + (kvTok * (b.kvReadTokens + tokens)) / (bw * etaKv);
    const gpuS = Math.max(computeS, memS) + (1 - OVERLAP) * Math.min(computeS, memS);
    const tpMs = tp > 1 ? tpLatencyMs + (tpBytesPerToken * tokens * 1000) / linkBw : 0;
    // Launch overheads: full graphs replay in one go; mixed batches run attention outside the
    // graph (PIECEWISE); eager mode and batches past the largest capture size launch every kernel.
    const launchMs = r.enforce_eager || b.tokens > cgMax ? eagerMs : fullGraph ? 0 : perLayerMs;
    return gpuS * 1000 + tpMs + f.step_fixed_ms + launchMs;
  };
  const stepMs = (b: StepBatch): number => {
    const g = gpuMs(b);
    const cpu = (f.cpu_step_ms + (f.cpu_per_request_us * b.requests) / 1000) * cpuFactor;
    return r.async_scheduling ? Math.max(g, cpu) : g + cpu;
  };
  return { stepMs, gpuMs, captureSizes };
}

/** Roofline feature: ms of one decode step of `batch` requests at `contextTokens` each (noise-free). */
export function idealDecodeStepMs(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec, batch: number, contextTokens: number): number {
  const m = makeStepModel(r, hw, model);
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
export function prefillStepMs(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec, promptTokens: number): number {
  const m = makeStepModel(r, hw, model);
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
