import { z } from 'zod';

/**
 * A GPU from `data/hardware.yaml`: datasheet facts (reference §11) plus the simulator's efficiency
 * factors (reference §13.2), each file row carrying its source.
 */
export const SimFactors = z.strictObject({
  /** Fraction of peak HBM bandwidth reached when streaming weights (decode). */
  eta_w: z.number().gt(0).lte(1),
  /** Fraction of peak HBM bandwidth reached when reading the KV cache. */
  eta_kv: z.number().gt(0).lte(1),
  /** Best model-FLOPs utilisation of large bf16 GEMMs. */
  mfu_bf16: z.number().gt(0).lte(1),
  /** Best utilisation of the fp8 peak (null where fp8 compute is missing). */
  mfu_fp8: z.number().gt(0).lte(1).nullable(),
  /** Tokens per step at which GEMM efficiency reaches half its best (MFU ramp). */
  n_half_tokens: z.number().positive(),
  /** Fixed cost of one engine step with CUDA graphs. */
  step_fixed_ms: z.number().nonnegative(),
  /** Per-layer cost of kernels not captured in graphs. */
  per_layer_us: z.number().nonnegative(),
  /** Extra per-layer launch cost in eager mode. */
  eager_per_layer_us: z.number().nonnegative(),
  /** Latency of one small all-reduce. */
  allreduce_latency_us: z.number().nonnegative(),
  /** Effective per-direction link bandwidth for all-reduce. */
  link_gbs: z.number().positive(),
  /** CPU time per engine step (scheduler, input prep). */
  cpu_step_ms: z.number().nonnegative(),
  /** CPU time per scheduled request per step. */
  cpu_per_request_us: z.number().nonnegative(),
});
export type SimFactors = z.infer<typeof SimFactors>;

export const Hardware = z.strictObject({
  id: z.string().min(1),
  name: z.string(),
  aliases: z.array(z.string()).default([]),
  vendor: z.enum(['nvidia', 'amd']),
  arch: z.string(),
  /** CUDA compute capability as a number (8.0, 8.9, 9.0); ROCm parts carry their gfx name in `arch`. */
  compute_capability: z.number().nullable(),
  platform: z.enum(['cuda', 'rocm']),
  memory_gb: z.number().positive(),
  /** What torch.cuda.mem_get_info reports as total, the base of gpu_memory_utilization. */
  memory_visible_gib: z.number().positive(),
  hbm_bandwidth_gbs: z.number().positive(),
  bf16_tflops: z.number().positive(),
  fp8_tflops: z.number().positive().nullable(),
  interconnect: z.strictObject({
    kind: z.enum(['nvlink', 'pcie', 'infinity_fabric']),
    /** Aggregate bidirectional bandwidth as the datasheet states it. */
    bandwidth_gbs: z.number().positive(),
  }),
  tdp_w: z.number().positive(),
  sim: SimFactors,
  source: z.string().min(1),
});
export type Hardware = z.infer<typeof Hardware>;

/** A deployment's hardware: which GPU and how many. */
export const HardwareRef = z.strictObject({ gpu: z.string().min(1), count: z.int().positive() });
export type HardwareRef = z.infer<typeof HardwareRef>;

/** Whether the GPU has fp8 tensor cores (W8A8 needs SM ≥ 8.9, or ROCm MI300). */
export function hasFp8Compute(hw: Hardware): boolean {
  return hw.fp8_tflops !== null;
}
