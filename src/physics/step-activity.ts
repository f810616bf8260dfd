import type { Hardware, ModelSpec, ResolvedServerConfig } from '../domain/index.js';
import { fp8Compute } from './memory.js';
import { ACT_BYTES, type StepBatch, type StepShapes } from './step-shapes.js';
import { expertFormat, expertSliceBytesPerLayer, expertsTouched, moeLayout } from './weights.js';

/**
 * What one engine step makes one GPU of its replica do, for the power model (power.ts): the step's
 * FLOPs and HBM bytes, each as the seconds they would take at the GPU's datasheet peak (dense tensor
 * FLOPs of the precision used, HBM bandwidth), and the seconds the GPU runs kernels. Divided by the
 * step's wall time they are the tensor-core and HBM utilisations a power meter responds to. Unlike the
 * step time these carry no efficiency: a kernel at 55% MFU does 55% of the peak's work per second,
 * and that work is what draws power.
 */
export interface StepActivity {
  /** The step's FLOPs ÷ the datasheet tensor peak, seconds, on one GPU. */
  computeS: number;
  /** The step's HBM bytes (weights, activations, KV cache) ÷ the datasheet bandwidth, seconds, on one GPU. */
  memoryS: number;
  /** Seconds of GPU time (the step-time model's GPU part, before the host's share). */
  gpuS: number;
}

export function newStepActivity(): StepActivity {
  return { computeS: 0, memoryS: 0, gpuS: 0 };
}

const sum = (xs: readonly { params: number; bytes: number; width: number }[], k: 'params' | 'bytes' | 'width'): number => xs.reduce((a, g) => a + g[k], 0);

/**
 * The activity of a step of `t` (padded) tokens, folded from the same shapes the step time prices:
 * every GEMM's FLOPs (2 × params × tokens) and bytes (weights once, activations per token), the
 * attention's FLOPs per (query, key) pair and its KV reads and writes, the MoE layer's routed FLOPs
 * (their mean over the ranks: an imbalanced rank waits, it does not burn the others' FLOPs) and the
 * distinct experts' bytes, and the lm-head. All-reduce traffic is on the link, not HBM, and left out.
 * Closed form per step: the simulator's speed is unchanged when power is not asked for, and barely
 * moved when it is.
 */
export function makeStepWork(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec, s: StepShapes): (b: StepBatch, t: number, out: StepActivity) => void {
  const L = model.layers;
  const peak = (s.fp8 ? (hw.fp8_tflops ?? hw.bf16_tflops) : hw.bf16_tflops) * 1e12;
  const attnPeak = hw.bf16_tflops * 1e12;
  const bw = hw.hbm_bandwidth_gbs * 1e9;
  // Per layer: Σ params, Σ weight bytes, Σ widths of the GEMMs; a dense layer of an MoE model swaps
  // the shared experts for its own MLP (and drops the routed experts, below).
  const dl = s.denseLayers;
  const params = L * sum(s.gemms, 'params') + dl * (sum(s.denseLayerGemms, 'params') - sum(s.sharedGemms, 'params'));
  const bytes = L * sum(s.gemms, 'bytes') + dl * (sum(s.denseLayerGemms, 'bytes') - sum(s.sharedGemms, 'bytes'));
  const width = L * sum(s.gemms, 'width') + dl * (sum(s.denseLayerGemms, 'width') - sum(s.sharedGemms, 'width'));
  const moe = moeWork(r, hw, model);
  const moeLayers = L - dl;
  const d = model.hidden_size;
  const headOut = d + model.vocab_size / s.tp;
  const moeOut = { computeS: 0, memoryS: 0 };
  return (b, t, out) => {
    const perPair = b.decodeOnly ? s.decodeFlopsPerPair : s.attnFlopsPerPair;
    const pairs = s.fullLayers * b.attnPairs + s.windowLayers * b.windowPairs;
    const kvTokens = s.fullLayers * (b.kvReadTokens + b.tokens) + s.windowLayers * (b.windowKvReadTokens + b.tokens);
    let computeS = (2 * params * t + 2 * s.headParams * b.sampled) / peak + (perPair * pairs) / attnPeak;
    let memoryS = (bytes + t * width * ACT_BYTES + s.headParams * 2 + b.sampled * headOut * ACT_BYTES + s.kvTok * kvTokens) / bw;
    if (moe !== null) {
      moe(t, moeOut);
      computeS += moeLayers * moeOut.computeS;
      memoryS += moeLayers * moeOut.memoryS;
    }
    out.computeS = computeS;
    out.memoryS = memoryS;
  };
}

/** One MoE layer's routed-expert work on one GPU for a step of `tokens` tokens on this rank (step-time.ts `moeLayerCost`'s shapes). */
function moeWork(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec): ((tokens: number, out: { computeS: number; memoryS: number }) => void) | null {
  const moe = model.moe;
  const layout = moeLayout(r, model);
  if (moe === null || layout === null) return null;
  const { experts: e, top_k: k, expert_intermediate_size: inter } = moe;
  const d = model.hidden_size;
  const dp = r.data_parallel_size;
  const fp8 = expertFormat(r, model) === 'fp8' && fp8Compute(r, hw, model);
  const peak = (fp8 ? (hw.fp8_tflops ?? hw.bf16_tflops) : hw.bf16_tflops) * 1e12;
  const bw = hw.hbm_bandwidth_gbs * 1e9;
  const sliceBytes = expertSliceBytesPerLayer(r, model);
  return (tokens, out) => {
    const all = tokens * dp;
    const assignments = all * k;
    out.computeS = (2 * 3 * d * inter * assignments) / layout.ranks / peak;
    out.memoryS = ((expertsTouched(e, k, all) / e) * layout.expertsPerRank * sliceBytes + (assignments * (d + 2 * inter) * ACT_BYTES) / layout.ranks) / bw;
  };
}
