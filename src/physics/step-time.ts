import type { Hardware, ModelSpec, ResolvedServerConfig } from '../domain/index.js';
import { fp8Compute } from './memory.js';
import type { SimProfile } from '../domain/index.js';
import { cudagraphCaptureSizes } from './resolve.js';
import { expertFormat, expertSliceBytesPerLayer, expertsTouched, moeLayout } from './weights.js';
import { ACT_BYTES, linkBytesPerS, stepShapes, type Gemm, type StepBatch } from './step-shapes.js';
import { makeStepWork, type StepActivity } from './step-activity.js';

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

export type { StepBatch } from './step-shapes.js';

export interface StepModel {
  /** Step wall time in ms, noise-free. */
  stepMs(b: StepBatch): number;
  /** GPU part only (for features and tests). */
  gpuMs(b: StepBatch): number;
  /**
   * `stepMs`, and what the GPU did in the step, written into `out` (the power model's input,
   * power.ts): its FLOPs and HBM bytes as seconds at the datasheet peaks, and its GPU time.
   */
  stepWithActivity(b: StepBatch, out: StepActivity): number;
  readonly captureSizes: readonly number[];
  /** Sliding-window length in tokens (+∞ when every layer attends to the whole context). */
  readonly windowTokens: number;
}

/** Fraction of the smaller of memory and compute time hidden under the larger within one kernel. */
const OVERLAP = 0.8;
/** Prefix caching bookkeeping (docs/references/vllm-engine.md#efficiency-estimates: +0.5% CPU). */
const PREFIX_CACHE_CPU_FACTOR = 1.005;

/**
 * Seconds of one kernel that must stream `memS` worth of bytes and compute `compS` worth of FLOPs: the
 * larger, plus the share of the smaller not hidden under it, never under the launch floor. Exported so
 * that the per-operator fits (src/calibration/vidur-kernels.ts) price a GEMM exactly as a step does.
 */
export function kernelSeconds(memS: number, compS: number, floorS: number): number {
  return Math.max(floorS, Math.max(memS, compS) + (1 - OVERLAP) * Math.min(memS, compS));
}

export function makeStepModel(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec, p: SimProfile): StepModel {
  const shapes = stepShapes(r, hw, model);
  const { tp, fp8, gemms, denseLayers, sharedGemms, denseLayerGemms, headParams, kvTok, fullLayers, windowLayers, windowTokens, attnFlopsPerPair, decodeFlopsPerPair } = shapes;
  const L = model.layers;
  const d = model.hidden_size;
  const peak = (fp8 ? (hw.fp8_tflops ?? hw.bf16_tflops) : hw.bf16_tflops) * 1e12 * (fp8 ? p.mfu_fp8 : p.mfu_bf16);
  const attnPeak = hw.bf16_tflops * 1e12 * p.mfu_bf16 * p.attn_compute_share;
  const bw = hw.hbm_bandwidth_gbs * 1e9;
  const moeS = model.moe === null ? null : moeLayerCost(r, hw, model, p);
  // An fp8 cache reads half the bytes at `kv_fp8_efficiency` of the bf16 rate (sim-profile.ts says whose
  // kernels set it), prefill's KV reads included.
  const etaKv = p.eta_kv * (r.kv_cache_dtype === 'auto' ? 1 : p.kv_fp8_efficiency);
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

  const kernelS = (memS: number, compS: number): number => kernelSeconds(memS, compS, floorS);
  // Attention of one layer: the cached KV read once per step (and the new tokens' KV written), vs its FLOPs.
  const attnS = (reads: number, pairs: number, newTokens: number, flopsPerPair: number): number => kernelS((kvTok * (reads + newTokens)) / (bw * etaKv), (flopsPerPair * pairs) / attnPeak);
  const gemmsS = (gs: readonly Gemm[], t: number): number => gs.reduce((acc, g) => acc + kernelS((g.bytes + t * g.width * ACT_BYTES) / (bw * p.eta_weights), (2 * g.params * t) / peak), 0);

  const gpuMs = (b: StepBatch): number => {
    const fullGraph = b.decodeOnly && b.tokens <= cgMax;
    const t = fullGraph ? (padTo[b.tokens] as number) : b.tokens;
    let layerS = layerFixedS;
    for (const g of gemms) layerS += kernelS((g.bytes + t * g.width * ACT_BYTES) / (bw * p.eta_weights), (2 * g.params * t) / peak);
    if (moeS !== null) layerS += moeS(t);
    if (tp > 1) layerS += 2 * (arLatencyS + (arBytesPerToken * t) / linkBw);
    // A sliding-window layer reads and attends to the last `window` tokens only.
    const perPair = b.decodeOnly ? decodeFlopsPerPair : attnFlopsPerPair;
    const attn = fullLayers * attnS(b.kvReadTokens, b.attnPairs, b.tokens, perPair) + (windowLayers === 0 ? 0 : windowLayers * attnS(b.windowKvReadTokens, b.windowPairs, b.tokens, perPair));
    // Dense layers of an MoE model: their MLP replaces the shared and routed experts priced in layerS.
    const denseS = denseLayers === 0 ? 0 : denseLayers * (gemmsS(denseLayerGemms, t) - gemmsS(sharedGemms, t) - (moeS === null ? 0 : moeS(t)));
    const headS = kernelS((headParams * 2 + b.sampled * (d + model.vocab_size / tp) * ACT_BYTES) / (bw * p.eta_weights), (2 * headParams * b.sampled) / peak);
    // Launch overheads: full graphs replay in one go; mixed batches run attention outside the graph
    // (PIECEWISE); eager mode and batches past the largest capture size launch every kernel.
    const launchMs = r.enforce_eager || b.tokens > cgMax ? eagerMs : fullGraph ? 0 : piecewiseMs;
    return (L * layerS + denseS + attn + headS) * 1000 + p.step_fixed_ms + launchMs;
  };
  const withCpu = (g: number, b: StepBatch): number => {
    const cpu = (p.cpu_step_ms + (p.cpu_per_request_us * b.requests) / 1000) * cpuFactor;
    // request_step_us: host time nothing overlaps (not scaled by the prefix cache's CPU factor); the
    // GPU idles through it, so it counts in the step's wall time and not in its busy time (power).
    return (r.async_scheduling ? Math.max(g, cpu) : g + cpu) + (p.request_step_us * b.requests) / 1000;
  };
  const stepMs = (b: StepBatch): number => withCpu(gpuMs(b), b);
  const work = makeStepWork(r, hw, model, shapes);
  const stepWithActivity = (b: StepBatch, out: StepActivity): number => {
    const g = gpuMs(b);
    // The same padded batch the GPU time priced: a CUDA graph computes its padding rows too.
    work(b, b.decodeOnly && b.tokens <= cgMax ? (padTo[b.tokens] as number) : b.tokens, out);
    out.gpuS = g / 1000;
    return withCpu(g, b);
  };
  return { stepMs, gpuMs, stepWithActivity, captureSizes, windowTokens };
}

/**
 * Seconds one MoE layer takes on the busiest GPU for a step of `tokens` tokens on this rank.
 *
 * The data-parallel ranks of an MoE deployment step in lockstep (vLLM runs dummy batches on idle
 * ranks) and its coordinator balances requests across them, so the experts see DP times this rank's
 * tokens. Compute: the top-k experts' FLOPs spread over the DP × TP ranks, times the busiest rank's
 * excess under expert parallelism (uniform routing: the largest of R multinomial loads, ≈ mean +
 * √(2 ln R · mean)). Memory: the distinct experts the step touches, E·(1 − (1 − k/E)^T) under uniform
 * routing: a decode of a few requests reads a few experts, a big prefill chunk reads them all. The
 * grouped GEMMs reach `moe_efficiency` of the dense compute rate and `moe_weight_efficiency` of its
 * weight-streaming rate. MXFP4 experts are dequantised to bf16 on
 * Hopper-class GPUs (no fp4 tensor cores), so they compute at the bf16 peak. With DP > 1 the tokens
 * are gathered to every rank and the outputs reduce-scattered back (vLLM's default all-to-all):
 * two collectives of `moe_dispatch_us` plus their bytes over the link.
 */
export function moeLayerCost(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec, p: SimProfile): (tokens: number) => number {
  const moe = model.moe;
  const layout = moeLayout(r, model);
  if (moe === null || layout === null) return () => 0;
  const { experts: e, top_k: k, expert_intermediate_size: inter } = moe;
  const d = model.hidden_size;
  const dp = r.data_parallel_size;
  const ranks = layout.ranks;
  const format = expertFormat(r, model);
  const fp8 = format === 'fp8' && fp8Compute(r, hw, model);
  const peak = (fp8 ? (hw.fp8_tflops ?? hw.bf16_tflops) * p.mfu_fp8 : hw.bf16_tflops * p.mfu_bf16) * 1e12 * p.moe_efficiency;
  const bw = hw.hbm_bandwidth_gbs * 1e9 * p.eta_weights * p.moe_weight_efficiency;
  const sliceBytes = expertSliceBytesPerLayer(r, model);
  const floorS = p.kernel_floor_us / 1e6;
  const linkBw = linkBytesPerS(hw) * p.link_efficiency;
  const dispatchS = p.moe_dispatch_us / 1e6;
  return (tokens) => {
    const all = tokens * dp;
    const assignments = all * k;
    const imbalance = layout.expertParallel ? 1 + Math.sqrt((2 * Math.log(ranks) * ranks) / Math.max(1, assignments)) : 1;
    const flops = ((2 * 3 * d * inter * assignments) / ranks) * imbalance;
    const touched = expertsTouched(e, k, all);
    // The touched share of this rank's experts (whole ones with EP, slices of all of them without).
    const memS = ((touched / e) * layout.expertsPerRank * sliceBytes + (all * k * (d + 2 * inter) * ACT_BYTES) / ranks) / bw;
    const compS = flops / peak;
    // The router's top-k and the permute/unpermute around the grouped GEMMs: three small kernels.
    let s = 3 * floorS + Math.max(memS, compS) + (1 - OVERLAP) * Math.min(memS, compS);
    if (dp > 1) s += 2 * (dispatchS + (all * d * ACT_BYTES * (dp - 1)) / dp / linkBw);
    return s;
  };
}

/** ms of one uniform decode step of `batch` requests at `contextTokens` each, on a built step model. */
export function priceDecodeMs(m: StepModel, batch: number, contextTokens: number): number {
  const windowCtx = Math.min(contextTokens, m.windowTokens);
  return m.stepMs({
    tokens: batch,
    requests: batch,
    sampled: batch,
    attnPairs: batch * (contextTokens + 1),
    kvReadTokens: batch * contextTokens,
    windowPairs: batch * (windowCtx + 1),
    windowKvReadTokens: batch * windowCtx,
    decodeOnly: true,
  });
}

/** ms to prefill `promptTokens` of one request alone, in chunks of `chunkTokens`, on a built step model. */
export function pricePrefillMs(m: StepModel, chunkTokens: number, promptTokens: number): number {
  const chunk = Math.max(1, chunkTokens);
  let total = 0;
  for (let c = 0; c < promptTokens; c += chunk) {
    const q = Math.min(chunk, promptTokens - c);
    total += m.stepMs({ tokens: q, requests: 1, sampled: c + q >= promptTokens ? 1 : 0, attnPairs: q * (c + (q + 1) / 2), kvReadTokens: c, ...windowSums(q, c, m.windowTokens), decodeOnly: false });
  }
  return total;
}

/** Windowed attention sums of one request's `q` new tokens after `c` cached ones (each query sees at most `window` keys). */
export function windowSums(q: number, c: number, window: number): { windowPairs: number; windowKvReadTokens: number } {
  if (!Number.isFinite(window)) return { windowPairs: q * (c + (q + 1) / 2), windowKvReadTokens: c };
  return { windowPairs: q * Math.min(window, c + (q + 1) / 2), windowKvReadTokens: Math.min(c, window) };
}
