import { z } from 'zod';

/**
 * The simulator's efficiencies: how close vLLM's kernels come to a GPU's datasheet limits, and the
 * fixed costs that do not shrink with the model. One set for every NVIDIA GPU — a GPU differs by its
 * specs (bandwidth, FLOPs, interconnect) in `data/hardware.yaml` — so a GPU nobody measured follows from
 * its datasheet; a GPU whose kernels were measured reaching its datasheet differently carries `sim:`
 * overrides there (the A100's, fitted on per-operator kernel times by scripts/calibrate.ts). The default set is fitted on real vLLM H100 runs
 * (`data/sim-profile.yaml`, docs/calibration.md); `lm-bench sim calibrate` fits the same parameters to a
 * user's own runs and stores them per GPU.
 */
const frac = z.number().gt(0).lte(1);
const nonneg = z.number().nonnegative();

const PROFILE_SHAPE = {
  /** Fraction of peak HBM bandwidth a GEMM reaches while it streams its weights (memory-bound decode). */
  eta_weights: frac,
  /** Fraction of peak HBM bandwidth attention reaches while it reads the KV cache. */
  eta_kv: frac,
  /**
   * An fp8 KV cache's share of `eta_kv`: it reads half the bytes, at this fraction of the bf16 rate (1:
   * half the time; 0.5: no faster than bf16). The default is the fit set's Hopper decode on vLLM 0.10.2,
   * through FlashAttention 3's fp8 path before vllm-project/flash-attention PR #96; GPUs whose decode
   * kernels read fp8 at the bf16 byte rate override it (docs/calibration.md, "Profiles beyond Hopper").
   */
  kv_fp8_efficiency: frac,
  /** Fraction of the dense bf16 peak that large bf16 GEMMs reach. */
  mfu_bf16: frac,
  /** Fraction of the dense fp8 peak that large fp8 (W8A8) GEMMs reach. */
  mfu_fp8: frac,
  /** Attention's FLOPs efficiency relative to the GEMMs' (prefill attention is compute-bound). */
  attn_compute_share: frac,
  /** Shortest time of one GEMM or attention kernel, µs: tiny shapes are latency-bound. */
  kernel_floor_us: nonneg,
  /** Time per layer of the small kernels (norms, rotary, activation, residual) under CUDA graphs, µs. */
  layer_fixed_us: nonneg,
  /** Latency of one all-reduce, µs, by interconnect. */
  allreduce_nvlink_us: nonneg,
  allreduce_pcie_us: nonneg,
  /** Fraction of the per-direction link bandwidth an all-reduce reaches. */
  link_efficiency: frac,
  /** GPU time of one engine step besides the layers (graph launch, sampling), ms. */
  step_fixed_ms: nonneg,
  /** Extra per layer when a step runs attention outside the CUDA graph (mixed prefill/decode), µs. */
  piecewise_per_layer_us: nonneg,
  /** Extra per layer without CUDA graphs (--enforce-eager), µs. */
  eager_per_layer_us: nonneg,
  /** CPU time per engine step (scheduler, input preparation), ms; hidden under GPU time with async scheduling. */
  cpu_step_ms: nonneg,
  /** CPU time per scheduled request per step (sampling bookkeeping, output processing), µs. */
  cpu_per_request_us: nonneg,
  /**
   * Time per scheduled request per step that nothing overlaps, µs: added to the step after the GPU and
   * CPU times, async scheduling or not. The H100 rows of vLLM 0.10–0.12 decode about 0.03 ms a step slower
   * per running request than their kernels account for, on every model alike (docs/calibration.md, "A
   * per-request cost of the step"); from 0.14 on, none is charged unless a GPU's `sim_recent` sets it.
   */
  request_step_us: nonneg,
  /**
   * Mixture-of-experts layers: the share of the dense GEMMs' compute efficiency (`moe_efficiency`) and
   * weight-streaming efficiency (`moe_weight_efficiency`) the grouped expert GEMMs reach. Separate
   * because they fail differently: many small matrices and MXFP4 dequantisation in the inner loop cost
   * FLOPs in prefill, while decode streams 4.25-bit weights close to the dense rate.
   */
  moe_efficiency: frac,
  moe_weight_efficiency: frac,
  /** Latency of one expert-parallel dispatch or combine (all-gather / reduce-scatter across DP × TP), µs. */
  moe_dispatch_us: nonneg,
  /** API-server time before a request reaches the engine, ms, and per prompt token, µs (tokenising). */
  frontend_ms: nonneg,
  frontend_us_per_token: nonneg,
};

/** `kv_fp8_efficiency` and `request_step_us` are defaulted so that profiles stored before them still read (as they were fitted: 0 for the latter). */
export const SimProfile = z.strictObject({ ...PROFILE_SHAPE, kv_fp8_efficiency: PROFILE_SHAPE.kv_fp8_efficiency.default(0.5), request_step_us: PROFILE_SHAPE.request_step_us.default(0) });
/** A GPU's `sim:` overrides (data/hardware.yaml): any of the parameters, none defaulted. */
export const SimProfileOverrides = z.strictObject(PROFILE_SHAPE).partial();
export type SimProfile = z.infer<typeof SimProfile>;

/** The profile names the parameters a fit may move; the rest keep their default values. */
export type ProfileParam = keyof SimProfile;
export const PROFILE_PARAMS = Object.keys(SimProfile.shape) as ProfileParam[];

/**
 * Where a fit may move each parameter: the physically plausible range, so that a fit cannot buy a
 * better loss with an impossible GPU. Upper bounds on efficiencies from what microbenchmarks reach on
 * Hopper (streaming copies ≈ 90% of peak HBM bandwidth; the BLIS fit's marginal prefill token ≈ 88% of
 * the bf16 peak, docs/references/vllm-engine.md#calibration-measurements K18; fp8 GEMMs reach a lower share of their doubled peak, docs/references/vllm-engine.md#efficiency-estimates);
 * decode attention, alone in aiconfigurator's vLLM kernel tables, reads the KV cache at up to 97.5% of the
 * datasheet bandwidth once its launch is counted apart (B200 and H100, docs/calibration.md "Profiles beyond Hopper");
 * lower bounds on fixed costs from what a CUDA kernel launch or an engine step cannot go under
 * (≈ 1 µs a kernel inside a graph, some CPU per step and per request, some API-server time per request).
 */
export const PROFILE_BOUNDS: Readonly<Record<ProfileParam, readonly [number, number]>> = {
  eta_weights: [0.3, 0.92],
  eta_kv: [0.2, 0.98],
  kv_fp8_efficiency: [0.3, 1],
  mfu_bf16: [0.2, 0.88],
  mfu_fp8: [0.15, 0.8],
  attn_compute_share: [0.2, 1],
  kernel_floor_us: [1, 20],
  layer_fixed_us: [1, 200],
  allreduce_nvlink_us: [2, 100],
  allreduce_pcie_us: [5, 400],
  link_efficiency: [0.2, 0.95],
  step_fixed_ms: [0.02, 10],
  piecewise_per_layer_us: [1, 400],
  eager_per_layer_us: [5, 1000],
  cpu_step_ms: [0.05, 10],
  cpu_per_request_us: [0.5, 100],
  request_step_us: [1, 100],
  moe_efficiency: [0.1, 1],
  moe_weight_efficiency: [0.3, 1],
  moe_dispatch_us: [2, 500],
  frontend_ms: [0.2, 30],
  frontend_us_per_token: [0.01, 20],
};

/** `v` inside `bounds[k]`, to 4 significant digits: how a fitted override is written. */
export function withinBounds<K extends string>(bounds: Readonly<Record<K, readonly [number, number]>>, k: K, v: number): number {
  return Number(Math.min(bounds[k][1], Math.max(bounds[k][0], v)).toPrecision(4));
}

/**
 * The simulator's GPU power model (src/physics/power.ts), in fractions of each GPU's datasheet TDP so
 * that one set serves every GPU: a GPU holding a loaded model draws `idle_tdp_frac` × TDP between
 * steps; while a step runs it adds, of the range from idle to TDP, `busy_weight` for running kernels at
 * all, `compute_weight` × the tensor-core utilisation (FLOPs ÷ datasheet peak ÷ step time) and
 * `memory_weight` × the HBM utilisation (bytes ÷ datasheet bandwidth ÷ step time), never past TDP.
 * Fitted on ML.ENERGY's measured power (docs/calibration.md); a separate block from the step-time
 * efficiencies, so that a latency fit (`sim calibrate`) never moves it.
 */
export const PowerProfile = z.strictObject({
  idle_tdp_frac: frac,
  busy_weight: nonneg,
  compute_weight: nonneg,
  memory_weight: nonneg,
});
export type PowerProfile = z.infer<typeof PowerProfile>;

/** A stored profile: the parameters and where they came from. */
export const SimProfileFile = z.strictObject({
  version: z.literal(1),
  name: z.string().min(1),
  description: z.string(),
  fitted_on: z.string(),
  command: z.string(),
  profile: SimProfile,
  /** The power model's parameters and what they were fitted on; absent: the simulator reports no energy. */
  power: z.strictObject({ fitted_on: z.string(), params: PowerProfile }).optional(),
});
export type SimProfileFile = z.infer<typeof SimProfileFile>;

/** A profile with some parameters replaced (absent or undefined ones keep their value). */
export function withOverrides(profile: SimProfile, overrides: Partial<Record<ProfileParam, number | undefined>> | undefined): SimProfile {
  const out = { ...profile };
  for (const [k, v] of Object.entries(overrides ?? {}) as [ProfileParam, number | undefined][]) if (v !== undefined) out[k] = v;
  return out;
}
