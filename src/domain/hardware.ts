import { z } from 'zod';
import { SimProfileOverrides } from './sim-profile.js';

/**
 * A GPU from `data/hardware.yaml`: datasheet facts (docs/references/vllm-engine.md#gpu-datasheets), each file row carrying its
 * source. The simulator prices every GPU with one set of efficiencies (`SimProfile`); `sim` may
 * override some of them for a platform whose kernels differ (ROCm), never to fit one GPU's data.
 */
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
  /** The hourly price of one of these GPUs, where its datasheet YAML states one (else data/prices.yaml). */
  usd_per_gpu_hour: z.number().nonnegative().optional(),
  sim: SimProfileOverrides.optional(),
  /**
   * On top of `sim`, for vLLM 0.14 and later (domain/vllm-release.ts): the decode attention's KV read
   * rate as that release's kernels measure it, where the fitted profile stands for vLLM 0.10–0.12.
   */
  sim_recent: SimProfileOverrides.optional(),
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
