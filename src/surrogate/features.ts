import { defaultCatalog } from '../catalog/index.js';
import { kvElementsPerTokenLayer, type Hardware, type ModelSpec, type PowerProfile, type ServerConfig, type SimProfile, type Workload } from '../domain/index.js';
import {
  deploymentGpus,
  fullAttentionLayers,
  GIB,
  idleGpus,
  makePowerModel,
  makeStepModel,
  memoryModel,
  moeLayout,
  newStepActivity,
  priceDecodeMs,
  pricePrefillMs,
  resolveConfig,
  stepPowerW,
  type PowerModel,
  type StepModel,
} from '../physics/index.js';
import { defaultPowerProfile } from '../sim/power-profile.js';
import { createRng } from '../util/rng.js';
import { lengthSampler } from '../workload/sample.js';
import type { TargetName } from './targets.js';

/**
 * Feature rows for the surrogate: the encoded knobs (the search space's one encoder, passed in),
 * the workload, the hardware, the model, and physics features from the simulator's memory and
 * roofline model. The physics part also yields a baseline per target; the regressors learn the log
 * of measured ÷ baseline, which is what lets one model carry over to a GPU it has not seen (H200 has
 * more bandwidth than any training GPU; trees cannot extrapolate, but the baseline does).
 */
export interface KnobEncoder {
  readonly featureNames: readonly string[];
  encode(config: ServerConfig, ctx?: FeatureContext): ArrayLike<number>;
}

export interface FeatureContext {
  readonly hardware: Hardware;
  readonly gpuCount: number;
  readonly model: ModelSpec;
  readonly workload: Workload;
  /** The simulator efficiencies the physics features use (default: the catalog's for this GPU). */
  readonly profile?: SimProfile | undefined;
  /** The GPU power model's parameters (default: data/sim-profile.yaml's; null: none, TDP bounds the draw). */
  readonly power?: PowerProfile | null | undefined;
}

export const CONTEXT_FEATURES = [
  'wl_input_mean',
  'wl_input_p90',
  'wl_output_mean',
  'wl_output_p90',
  'wl_log_concurrency_cap',
  'wl_log_rate_rps',
  'wl_shared_prefix_fraction',
  'hw_log_bf16_tflops',
  'hw_log_hbm_gbs',
  'hw_memory_gib',
  'hw_gpu_count',
  'model_log_params_b',
  'model_layers',
  'model_kv_bytes_per_token',
  'model_log_active_params_b',
  'model_moe_experts',
  'model_moe_active_expert_share',
  'phys_moe_expert_parallel',
  'phys_log_kv_token_capacity',
  'phys_weight_gib_per_gpu',
  'phys_log_ideal_decode_step_ms',
  'phys_log_effective_batch',
  'phys_kv_capacity_per_request',
  'phys_log_max_num_seqs',
  'phys_log_max_num_batched_tokens',
  'phys_log_throughput_bound',
  'phys_log_prefill_ms',
  'phys_log_mixed_step_ms',
  'phys_log_ttft_p50_ms',
  'phys_log_ttft_p99_ms',
] as const;

export interface WorkloadStats {
  readonly inputMean: number;
  readonly inputP90: number;
  readonly outputMean: number;
  readonly outputP90: number;
  /** Requests in flight at most (closed-loop concurrency, a cap, or the whole burst). */
  readonly concurrencyCap: number;
  /** Offered rate, or +Infinity for closed loops and bursts. */
  readonly rateRps: number;
  readonly sharedPrefixFraction: number;
  readonly numPrompts: number;
}

const statsCache = new WeakMap<Workload, WorkloadStats>();

/** Length statistics from a fixed-seed sample of the workload's distributions (cached per object). */
export function workloadStats(w: Workload): WorkloadStats {
  const hit = statsCache.get(w);
  if (hit !== undefined) return hit;
  const rng = createRng(12345);
  const sample = (d: Workload['input_len']): { mean: number; p90: number } => {
    const draw = lengthSampler(d, rng);
    const xs = Array.from({ length: 2000 }, draw).sort((a, b) => a - b);
    return { mean: xs.reduce((a, b) => a + b, 0) / xs.length, p90: xs[Math.floor(0.9 * xs.length)] ?? 0 };
  };
  const prefix = w.shared_prefix === undefined ? 0 : w.shared_prefix.length * w.shared_prefix.fraction;
  const inp = sample(w.input_len);
  const out = sample(w.output_len);
  const a = w.arrival;
  const cap =
    a.kind === 'closed' ? a.concurrency : a.kind === 'burst' ? (a.max_concurrency ?? w.num_prompts) : (a.max_concurrency ?? w.num_prompts);
  const rate = a.kind === 'closed' || a.kind === 'burst' ? Number.POSITIVE_INFINITY : a.rate_rps;
  const stats: WorkloadStats = {
    inputMean: inp.mean + prefix,
    inputP90: inp.p90 + prefix,
    outputMean: out.mean,
    outputP90: out.p90,
    concurrencyCap: Math.min(cap, w.num_prompts),
    rateRps: rate,
    sharedPrefixFraction: w.shared_prefix === undefined ? 0 : prefix / (inp.mean + prefix),
    numPrompts: w.num_prompts,
  };
  statsCache.set(w, stats);
  return stats;
}

export interface FeatureRow {
  readonly row: number[];
  /** Physics estimate of each target (natural scale, > 0). */
  readonly baselines: Record<TargetName, number>;
}

const lg = (x: number): number => Math.log(Math.max(x, 1e-6));

/**
 * One GPU's power, W, during the uniform decode step `priceDecodeMs` prices (the same batch, built
 * here because the power model needs the step's activity, not just its time): physics/power.ts
 * `stepPowerW` at the step's tensor, HBM and busy shares of its wall time.
 */
function decodeStepPowerW(step: StepModel, pm: PowerModel, batch: number, contextTokens: number): number {
  const b = Math.max(1, Math.round(batch));
  const c = Math.round(contextTokens);
  const w = Math.min(c, step.windowTokens);
  const act = newStepActivity();
  const wallS = step.stepWithActivity({ tokens: b, requests: b, sampled: b, attnPairs: b * (c + 1), kvReadTokens: b * c, windowPairs: b * (w + 1), windowKvReadTokens: b * w, decodeOnly: true }, act) / 1000;
  return wallS > 0 ? stepPowerW(pm, act.computeS / wallS, act.memoryS / wallS, act.gpuS / wallS) : pm.idleW;
}

/**
 * The context part (everything but the knob encoding) of one feature row, plus the baselines.
 * Decode batch B is the fixed point of B = min(max_num_seqs, KV capacity / context, concurrency cap,
 * rate × E2E(B)) (Little's law per replica), priced with the simulator's ideal decode step.
 */
export function contextFeatures(config: ServerConfig, ctx: FeatureContext): FeatureRow {
  const { hardware: hw, model, workload } = ctx;
  const w = workloadStats(workload);
  const r = resolveConfig(config, hw, model);
  const mem = memoryModel(r, hw, model);
  const dp = r.data_parallel_size;
  const contextTokens = w.inputMean + w.outputMean / 2;
  const kvCap = Math.max(1, mem.kvTokenCapacity);
  const perReplicaCap = Math.max(1, Math.ceil(w.concurrencyCap / dp));
  const hardCap = Math.max(1, Math.min(r.max_num_seqs, kvCap / Math.max(1, contextTokens), perReplicaCap));
  const step = makeStepModel(r, hw, model, ctx.profile ?? defaultCatalog().profileFor(hw));
  // With prefix caching on, the shared system prompt is computed once per group, not per request.
  const prefillTokens = r.enable_prefix_caching ? w.inputMean * (1 - w.sharedPrefixFraction) : w.inputMean;
  const prefillMs = pricePrefillMs(step, r.max_num_batched_tokens, Math.max(1, Math.round(prefillTokens)));
  let batch = hardCap;
  let stepMs = priceDecodeMs(step, Math.max(1, Math.round(batch)), Math.round(contextTokens));
  if (Number.isFinite(w.rateRps)) {
    for (let it = 0; it < 6; it++) {
      const e2eS = (prefillMs + w.outputMean * stepMs) / 1000;
      batch = Math.max(1, Math.min(hardCap, (w.rateRps / dp) * e2eS));
      stepMs = priceDecodeMs(step, Math.max(1, Math.round(batch)), Math.round(contextTokens));
    }
  }
  let throughput = (dp * batch * 1000) / stepMs;
  if (Number.isFinite(w.rateRps)) throughput = Math.min(throughput, w.rateRps * w.outputMean);
  const kvPeakGib = Math.max(0.01, Math.min(mem.kvGibPerGpu, (batch * contextTokens * mem.kvBytesPerTokenPerGpu) / GIB));
  // A decode step that also carries one prefill chunk: what the tail of ITL/TPOT sees.
  const chunkMs = pricePrefillMs(step, r.max_num_batched_tokens, Math.max(1, Math.min(r.max_num_batched_tokens, Math.round(w.inputP90))));
  const mixedStepMs = stepMs + chunkMs;
  const serviceMs = prefillMs + w.outputMean * stepMs;
  const base = prefillMs + stepMs;
  let ttftP50Ms: number;
  let ttftP99Ms: number;
  if (Number.isFinite(w.rateRps)) {
    // Open loop: past the service rate the queue grows for the whole run (the last request waits
    // n·(1/μ − 1/λ)); below it, an M/M/1-like wait on prefill with an exponential tail (ln 100 ≈ 4.6).
    // Service rate: decode slots turning over, or prefill compute (one prompt at a time), whichever binds.
    const muRps = dp * Math.min((hardCap * 1000) / serviceMs, 1000 / prefillMs);
    if (w.rateRps >= muRps) {
      const overloadMs = w.numPrompts * (1 / muRps - 1 / w.rateRps) * 1000;
      ttftP50Ms = base + 0.5 * overloadMs;
      ttftP99Ms = base + 0.99 * overloadMs + chunkMs;
    } else {
      const rho = w.rateRps / muRps;
      const waitMs = (prefillMs * rho) / (1 - rho);
      ttftP50Ms = base + waitMs * 0.7;
      ttftP99Ms = base + 4.6 * waitMs + chunkMs;
    }
  } else {
    // Closed loop (Little's law): users beyond the running batch wait (N / B − 1) services; the tail
    // is the first wave, where every user's prompt arrives at once and prefills one after another.
    const queueMs = Math.max(0, perReplicaCap / batch - 1) * serviceMs;
    const waveMs = Math.min(perReplicaCap, batch) * prefillMs;
    ttftP50Ms = base + queueMs;
    ttftP99Ms = Math.max(ttftP50Ms, waveMs) + chunkMs;
  }
  // Energy per output token: every GPU of the deployment at the decode step's power while steps run,
  // at idle between them (an open loop below its service rate leaves the engine waiting for arrivals).
  // Without a power model the datasheet TDP bounds the draw.
  // GPUs of the deployment no replica uses idle at idle power (sim/simulate.ts counts them the same way).
  const gpusPowered = deploymentGpus(r);
  const unused = idleGpus(ctx.gpuCount, r);
  const power = ctx.power === undefined ? defaultPowerProfile() : ctx.power;
  let deploymentW = gpusPowered * hw.tdp_w;
  if (power !== null) {
    const stepW = decodeStepPowerW(step, makePowerModel(hw, power, r.tensor_parallel_size), batch, contextTokens);
    const idleW = power.idle_tdp_frac * hw.tdp_w;
    const busy = Math.min(1, throughput / ((dp * batch * 1000) / stepMs));
    deploymentW = gpusPowered * (idleW + busy * (stepW - idleW)) + unused * idleW;
  }
  const baselines: Record<TargetName, number> = {
    output_throughput: throughput,
    output_throughput_per_gpu: throughput / Math.max(1, ctx.gpuCount),
    ttft_p50_ms: ttftP50Ms,
    ttft_p99_ms: ttftP99Ms,
    tpot_p50_ms: stepMs,
    tpot_p99_ms: stepMs + chunkMs / Math.max(1, w.outputMean / 8),
    itl_p50_ms: stepMs,
    itl_p99_ms: mixedStepMs,
    e2el_p99_ms: ttftP99Ms + w.outputP90 * stepMs,
    kv_cache_peak_gib: kvPeakGib,
    gpu_memory_reserved_gib: Math.max(0.1, mem.requestedGib + mem.cudagraphGib),
    energy_per_output_token_j: deploymentW / Math.max(1e-6, throughput),
  };
  const row = [
    w.inputMean,
    w.inputP90,
    w.outputMean,
    w.outputP90,
    lg(w.concurrencyCap),
    Number.isFinite(w.rateRps) ? lg(w.rateRps) : 10,
    w.sharedPrefixFraction,
    lg(hw.bf16_tflops),
    lg(hw.hbm_bandwidth_gbs),
    hw.memory_visible_gib,
    ctx.gpuCount,
    lg(model.params_b),
    model.layers,
    // KV that grows with the context, at 2 bytes an element: the full-attention layers' (sliding-window
    // layers hold a window), each K and V of every KV head, or MLA's one latent (the domain's count).
    fullAttentionLayers(model) * kvElementsPerTokenLayer(model) * 2,
    lg(model.active_params_b),
    model.moe?.experts ?? 0,
    model.moe === null ? 1 : model.moe.top_k / model.moe.experts,
    moeLayout(r, model)?.expertParallel === true ? 1 : 0,
    lg(kvCap),
    mem.weightsGibPerGpu,
    lg(stepMs),
    lg(batch),
    kvCap / Math.max(1, contextTokens),
    lg(r.max_num_seqs),
    lg(r.max_num_batched_tokens),
    lg(throughput),
    lg(prefillMs),
    lg(mixedStepMs),
    lg(ttftP50Ms),
    lg(ttftP99Ms),
  ];
  return { row, baselines };
}

export function featureNames(encoder: KnobEncoder): string[] {
  return [...encoder.featureNames.map((n) => `knob_${n}`), ...CONTEXT_FEATURES];
}

/**
 * Stand-in for an inactive conditional knob (the encoder's NaN): ml-xgboost's DMatrix refuses NaN
 * ("you did not set missing=NAN") and aborts the WebAssembly runtime, so missing becomes a value
 * no real encoding takes (log2 columns are ≥ 0 for every knob value ≥ 1).
 */
export const MISSING_FEATURE = -1;

export function encodeKnobs(config: ServerConfig, ctx: FeatureContext, encoder: KnobEncoder): number[] {
  return Array.from(encoder.encode(config, ctx), (v) => (Number.isFinite(v) ? v : MISSING_FEATURE));
}

export function buildFeatureRow(config: ServerConfig, ctx: FeatureContext, encoder: KnobEncoder): FeatureRow {
  const c = contextFeatures(config, ctx);
  return { row: [...encodeKnobs(config, ctx, encoder), ...c.row], baselines: c.baselines };
}
