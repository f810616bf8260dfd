import { withinBounds, type Hardware, type SimProfile } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { kernelSeconds } from '../physics/step-time.js';
import { ACT_BYTES } from '../physics/step-shapes.js';
import { parseCsv } from './csv.js';
import { grid2, mape, meanAbsLog, steps } from './grid-search.js';

/**
 * Per-GPU efficiencies from Vidur's per-operator kernel times (data/calibration/vidur/): the four
 * linear layers of a Llama layer timed alone on an A100 and an H100 at 1–4,096 tokens and TP 1–8. Each
 * GPU's GEMMs are priced with the step-time model's own formula (`kernelSeconds`: weight and activation
 * bytes at `eta_weights` of the HBM bandwidth against FLOPs at `mfu_bf16` of the bf16 peak), and the two
 * efficiencies fitted per GPU. The serving profile (data/sim-profile.yaml) is fitted end to end on H100
 * runs, where these kernels are only part of a step; so what carries to another GPU is the ratio of its
 * kernel efficiencies to the H100's, applied to the serving profile (`kernelOverrides`).
 */

export const GEMM_OPS = ['attn_pre_proj', 'attn_post_proj', 'mlp_up_proj', 'mlp_down_proj'] as const;
/** The small kernels of a layer the profile's `layer_fixed_us` stands for. */
const SMALL_OPS = ['input_layernorm', 'post_attention_layernorm', 'attn_rope', 'mlp_act', 'add'] as const;
/** Decode-sized batches: the small kernels are launch-bound here, as `layer_fixed_us` assumes. */
const SMALL_OPS_MAX_TOKENS = 64;

export interface KernelRow {
  readonly gpu: string;
  readonly model: string;
  readonly tokens: number;
  readonly tp: number;
  /** Weights (params), activation width (in + out) and measured ms of each linear layer on one GPU. */
  readonly gemms: readonly { readonly params: number; readonly width: number; readonly ms: number }[];
  /** Summed median time of the small kernels, ms. */
  readonly smallMs: number;
}

export function parseVidurKernels(text: string, file: string): KernelRow[] {
  const { records } = parseCsv(text, file);
  return records.map((r) => {
    const num = (k: string): number => {
      const v = Number(r.fields[k]);
      if (!Number.isFinite(v)) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: ${k} is not a number`, { details: { file, field: k } });
      return v;
    };
    const [heads, kv, d, inter, tp] = [num('n_head'), num('n_kv_head'), num('n_embd'), num('n_expanded_embd'), num('tp')];
    const hd = d / heads;
    // Vidur shards each layer as vLLM does: QKV and gate/up by columns, O and down by rows.
    const shapes: Record<(typeof GEMM_OPS)[number], [number, number]> = {
      attn_pre_proj: [d, ((heads + 2 * kv) * hd) / tp],
      attn_post_proj: [(heads * hd) / tp, d],
      mlp_up_proj: [d, (2 * inter) / tp],
      mlp_down_proj: [inter / tp, d],
    };
    return {
      gpu: r.fields['gpu'] ?? '',
      model: r.fields['model'] ?? '',
      tokens: num('num_tokens'),
      tp,
      gemms: GEMM_OPS.map((op) => ({ params: shapes[op][0] * shapes[op][1], width: shapes[op][0] + shapes[op][1], ms: num(`${op}_ms`) })),
      smallMs: SMALL_OPS.reduce((acc, op) => acc + num(`${op}_ms`), 0),
    };
  });
}

export interface KernelEfficiency {
  readonly eta_weights: number;
  readonly mfu_bf16: number;
}

/**
 * Predicted ms of one GEMM of `params` weights in `dtype` (activation width `width`, in + out) for
 * `tokens` tokens, as a step prices it (the one price both kernel sources' fits use): weight and activation bytes at `eta` of the HBM bandwidth
 * against FLOPs at `mfu` of the dtype's dense peak.
 */
export function gemmKernelMs(g: { params: number; width: number; tokens: number; dtype: 'bf16' | 'fp8' }, hw: Hardware, e: { eta: number; mfu: number }, floorUs: number): number {
  const { params, width, tokens, dtype } = g;
  const { eta, mfu } = e;
  const weightBytes = dtype === 'fp8' ? 1 : 2;
  const peakTflops = dtype === 'fp8' ? (hw.fp8_tflops ?? hw.bf16_tflops) : hw.bf16_tflops;
  const memS = (weightBytes * params + tokens * width * ACT_BYTES) / (hw.hbm_bandwidth_gbs * 1e9 * eta);
  const compS = (2 * params * tokens) / (peakTflops * 1e12 * mfu);
  return kernelSeconds(memS, compS, floorUs / 1e6) * 1000;
}

/** Predicted ms of one of Vidur's bf16 GEMMs for `tokens` tokens. */
export function gemmMs(g: { params: number; width: number }, tokens: number, hw: Hardware, e: KernelEfficiency, floorUs: number): number {
  return gemmKernelMs({ params: g.params, width: g.width, tokens, dtype: 'bf16' }, hw, { eta: e.eta_weights, mfu: e.mfu_bf16 }, floorUs);
}

/** (predicted, measured) ms of every GEMM of the rows. */
function kernelPairs(rows: readonly KernelRow[], hw: Hardware, e: KernelEfficiency, floorUs: number): [number, number][] {
  return rows.flatMap((r) => r.gemms.map((g): [number, number] => [gemmMs(g, r.tokens, hw, e, floorUs), g.ms]));
}

/** Mean |ln(predicted / measured)| over every GEMM of the rows. */
export function kernelLoss(rows: readonly KernelRow[], hw: Hardware, e: KernelEfficiency, floorUs: number): number {
  return meanAbsLog(kernelPairs(rows, hw, e, floorUs));
}

/** Mean absolute percentage error of the GEMM times. */
export function kernelMape(rows: readonly KernelRow[], hw: Hardware, e: KernelEfficiency, floorUs: number): number {
  return mape(kernelPairs(rows, hw, e, floorUs));
}

/** The two efficiencies minimising `kernelLoss` on one GPU's rows: a grid of 0.005 steps over the profile's plausible ranges. */
export function fitKernelEfficiency(rows: readonly KernelRow[], hw: Hardware, floorUs: number): KernelEfficiency {
  const [eta, mfu] = grid2(steps(0.3, 0.95, 0.005), steps(0.2, 0.9, 0.005), (eta_weights, mfu_bf16) => kernelLoss(rows, hw, { eta_weights, mfu_bf16 }, floorUs));
  return { eta_weights: Number(eta.toFixed(3)), mfu_bf16: Number(mfu.toFixed(3)) };
}

/** Mean summed small-kernel time of decode-sized rows, µs. */
export function smallKernelsUs(rows: readonly KernelRow[]): number {
  const small = rows.filter((r) => r.tokens <= SMALL_OPS_MAX_TOKENS);
  return small.length === 0 ? 0 : (small.reduce((a, r) => a + r.smallMs, 0) / small.length) * 1000;
}

/**
 * A GPU's `sim:` overrides from its kernel fit relative to the reference GPU's: the serving profile's
 * weight-streaming and KV-reading efficiencies scaled by the ratio of streaming efficiencies (the
 * attention kernels read the KV cache from the same HBM; their own times are not in the data), the
 * bf16 MFU by the ratio of MFUs, and the small kernels' time per layer by the ratio of their times on
 * the same layer shapes. Each stays inside the profile's plausible range.
 */
export function kernelOverrides(
  profile: SimProfile,
  fit: { readonly gpu: KernelEfficiency; readonly ref: KernelEfficiency; readonly smallUs: number; readonly refSmallUs: number },
  bounds: Readonly<Record<'eta_weights' | 'eta_kv' | 'mfu_bf16' | 'layer_fixed_us', readonly [number, number]>>,
): Pick<SimProfile, 'eta_weights' | 'eta_kv' | 'mfu_bf16' | 'layer_fixed_us'> {
  const clamp = (k: keyof typeof bounds, v: number): number => withinBounds(bounds, k, v);
  const stream = fit.gpu.eta_weights / fit.ref.eta_weights;
  return {
    eta_weights: clamp('eta_weights', profile.eta_weights * stream),
    eta_kv: clamp('eta_kv', profile.eta_kv * stream),
    mfu_bf16: clamp('mfu_bf16', profile.mfu_bf16 * (fit.gpu.mfu_bf16 / fit.ref.mfu_bf16)),
    layer_fixed_us: clamp('layer_fixed_us', profile.layer_fixed_us * (fit.refSmallUs > 0 ? fit.smallUs / fit.refSmallUs : 1)),
  };
}
