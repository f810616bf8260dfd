import { checkpointQuantMethod, quantGroupColumns, type Hardware, type ModelSpec, type ResolvedServerConfig, type VllmVersion } from '../domain/index.js';
import type { StartupFailure, StartupRule } from './failure.js';

/** What validation needs besides the config: the GPU, how many of them, the model, and which vLLM starts it. */
export interface StartupContext {
  readonly hardware: Hardware;
  readonly gpuCount: number;
  readonly model: ModelSpec;
  /**
   * The vLLM release that starts the server (`vllm --version`), for the rules that changed between
   * releases (memory.ts `memoryModel`: where the CUDA graphs are budgeted). Absent: the memory model
   * lm-bench was fitted with (graphs outside the pool, vLLM before 0.21).
   */
  readonly vllmVersion?: VllmVersion | undefined;
}

const fail = (rule: StartupRule, message: string): StartupFailure => ({ rule, message, phase: 'validation' });

/**
 * The static rules C1–C11 (docs/references/vllm-engine.md#static-validation-rules, each with the vLLM check it reproduces).
 * Returns the first violation in vLLM's order of checks, or null. C5 (pipeline parallelism on a
 * model without SupportsPP) cannot fire: PP is not a knob here. C11's fp8 W8A8 on SM < 8.9 is a
 * silent downgrade to weight-only fp8 in vLLM, not an error, so only fp8_e5m2 KV on ROCm fails.
 * C17–C19 are the rules a quantized checkpoint and an MoE layout add; C20 a GPU older than the
 * quantization method's floor (below which not even the weight-only fallback runs).
 */
export function validateConfig(r: ResolvedServerConfig, ctx: StartupContext): StartupFailure | null {
  const { model: m, hardware: hw } = ctx;
  const tp = r.tensor_parallel_size;
  const world = tp * r.data_parallel_size;
  if (world > ctx.gpuCount) {
    return fail(
      'C1',
      `The number of required GPUs (tensor_parallel_size=${tp} × data_parallel_size=${r.data_parallel_size} = ${world}) exceeds the total number of available GPUs (${ctx.gpuCount}).`,
    );
  }
  if (r.max_model_len > m.native_context) {
    return fail(
      'C8',
      `User-specified max_model_len (${r.max_model_len}) is greater than the derived max_model_len (max_position_embeddings=${m.native_context} in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.`,
    );
  }
  if (m.num_attention_heads % tp !== 0) {
    return fail('C2', `Total number of attention heads (${m.num_attention_heads}) must be divisible by tensor parallel size (${tp}).`);
  }
  if (m.num_kv_heads % tp !== 0 && tp % m.num_kv_heads !== 0) {
    return fail('C3', `AssertionError: ${m.num_kv_heads} is not divisible by ${tp} (total number of KV heads must be divisible by tensor parallel size, or tensor parallel size by it)`);
  }
  const quant = checkCheckpoint(r, m) ?? checkCapability(r, m, hw);
  if (quant !== null) return quant;
  // An MoE model's MLPs are its experts (C17); a dense MLP is sharded over TP.
  if (m.moe === null && m.intermediate_size % tp !== 0) {
    return fail('C4', `AssertionError: ${m.intermediate_size} is not divisible by ${tp} (intermediate_size of the MLP must be divisible by tensor parallel size)`);
  }
  const experts = checkExperts(r, m);
  if (experts !== null) return experts;
  if (r.max_num_batched_tokens < r.max_num_seqs) {
    return fail(
      'C6',
      `max_num_batched_tokens (${r.max_num_batched_tokens}) must be greater than or equal to max_num_seqs (${r.max_num_seqs}).`,
    );
  }
  if (!r.enable_chunked_prefill && r.max_num_batched_tokens < r.max_model_len) {
    return fail(
      'C7',
      `max_num_batched_tokens (${r.max_num_batched_tokens}) is smaller than max_model_len (${r.max_model_len}). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len.`,
    );
  }
  if (r.long_prefill_token_threshold > r.max_model_len) {
    return fail('C9', `long_prefill_token_threshold (${r.long_prefill_token_threshold}) cannot be greater than the max_model_len (${r.max_model_len}).`);
  }
  if (r.block_size % 16 !== 0) {
    return fail('C10', `Block size must be a multiple of 16. (block_size=${r.block_size})`);
  }
  if (r.kv_cache_dtype === 'fp8_e5m2' && hw.platform === 'rocm') {
    return fail('C11', `fp8_e5m2 kv-cache is not supported with fp8 checkpoints on ROCm (${hw.name}); use --kv-cache-dtype fp8 (fp8_e4m3).`);
  }
  return null;
}

/** FP8 checkpoints (Qwen's, DeepSeek's) scale weights in 128 × 128 blocks: a shard must hold whole blocks. */
export const FP8_BLOCK = 128;

/**
 * C19: `--quantization` that contradicts the checkpoint's own quant_method (vLLM
 * ModelConfig._verify_quantization): a pre-quantized checkpoint fixes the method, so only `none` or
 * the checkpoint's own method pass (a ModelOpt or compressed-tensors FP8 checkpoint refuses `fp8`).
 */
function checkCheckpoint(r: ResolvedServerConfig, m: ModelSpec): StartupFailure | null {
  const method = checkpointQuantMethod(m);
  if (method === 'none' || r.quantization === 'none' || r.quantization === method) return null;
  return fail(
    'C19',
    `ValueError: Quantization method specified in the model config (${method}) does not match the quantization method specified in the \`quantization\` argument (${r.quantization}).`,
  );
}

/**
 * The quantization method vLLM loads the weights with: the checkpoint's own (a ModelOpt checkpoint's
 * FP8 and NVFP4 are two methods, `modelopt` and `modelopt_fp4`), `fp8` under `--quantization fp8` on a
 * 16-bit checkpoint, or null for none.
 */
export function loadedQuantMethod(r: ResolvedServerConfig, m: ModelSpec): string | null {
  const method = checkpointQuantMethod(m);
  if (method === 'none') return r.quantization === 'fp8' ? 'fp8' : null;
  return method === 'modelopt' && m.native_quantization === 'fp4' ? 'modelopt_fp4' : method;
}

/**
 * The lowest CUDA compute capability (major × 10 + minor, as vLLM compares them) each method loads on:
 * its `QuantizationConfig.get_min_capability`, checked in `VllmConfig._get_quantization_config`. Since
 * vLLM's Marlin kernels run on Turing (vllm#29901), an fp8 checkpoint or `--quantization fp8` loads
 * from SM 7.5 as weight-only W8A16 (fp8 tensor cores from 8.9, `fp8Compute`); the Fp8Config of vLLM's
 * 2025 sources asked for 8.0 (Ampere's FP8 Marlin). ModelOpt FP8 asks for 8.0 (as vllm#56660 describes
 * main in September 2026; earlier 2026 sources say 8.9). compressed-tensors passes its config's 7.0 and refuses in its
 * scheme check instead (`_check_scheme_supported`): every scheme lm-bench models (W8A16 fp8, W8A8 int8,
 * WNA16, NVFP4) needs Marlin's or CUTLASS's 7.5. GPTQ's own kernels need 6.0 (GPTQ-Marlin 7.5, tried first).
 */
export const QUANT_MIN_CAPABILITY: Readonly<Record<string, number>> = {
  fp8: 75,
  fbgemm_fp8: 80,
  modelopt: 80,
  modelopt_fp4: 75,
  'compressed-tensors': 75,
  awq: 75,
  gptq: 60,
  mxfp4: 80,
};

/**
 * C20: a quantization method the GPU is too old for (vLLM refuses it before loading; a GPU above the
 * floor but below 8.9 runs fp8 weight-only, which is not an error). ROCm parts and GPUs whose
 * capability the datasheet leaves unknown are not checked.
 */
function checkCapability(r: ResolvedServerConfig, m: ModelSpec, hw: Hardware): StartupFailure | null {
  const method = loadedQuantMethod(r, m);
  const min = method === null ? undefined : QUANT_MIN_CAPABILITY[method];
  if (method === null || min === undefined || hw.platform !== 'cuda' || hw.compute_capability === null) return null;
  const current = Math.round(hw.compute_capability * 10);
  if (current >= min) return null;
  // compressed-tensors raises from its scheme check, a RuntimeError of three strings printed as a tuple.
  return fail(
    'C20',
    method === 'compressed-tensors'
      ? `RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: ${min}. ', 'Current capability: ${current}.') (${hw.name})`
      : `ValueError: The quantization method ${method} is not supported for the current GPU. Minimum capability: ${min}. Current capability: ${current}. (${hw.name})`,
  );
}

/**
 * C17: without expert parallelism every GPU holds a 1/(DP·TP) slice of each expert, which must divide
 * its width (vLLM FusedMoE `divide`). C18: a block- or group-quantized checkpoint's slice must also be
 * whole blocks (vLLM Fp8LinearMethod/Fp8MoEMethod `validate_block_quant_shapes`; the AWQ/GPTQ/Marlin
 * methods' `input_size_per_partition % group_size` checks). With expert
 * parallelism each GPU holds whole experts and neither applies; a dense FP8 checkpoint's MLP is
 * sliced over TP alone.
 */
function checkExperts(r: ResolvedServerConfig, m: ModelSpec): StartupFailure | null {
  const tp = r.tensor_parallel_size;
  const ranks = tp * r.data_parallel_size;
  const ep = m.moe !== null && r.enable_expert_parallel && ranks > 1;
  const width = m.moe === null ? m.intermediate_size : m.moe.expert_intermediate_size;
  const shards = m.moe === null ? tp : ranks;
  if (m.moe !== null && !ep && width % shards !== 0) {
    return fail('C17', `AssertionError: ${width} is not divisible by ${shards} (moe_intermediate_size must be divisible by tensor_parallel_size × data_parallel_size without --enable-expert-parallel)`);
  }
  const group = quantGroupColumns(m);
  if (group !== null && !ep && (width / shards) % group !== 0) {
    return fail(
      'C18',
      m.native_quantization === 'fp8'
        ? `ValueError: The output_size of gate's and up's weight = ${width / shards} is not divisible by weight quantization block_n = ${group}.`
        : `ValueError: The input_size_per_partition of down's weight = ${width / shards} is not divisible by the quantization group_size = ${group}.`,
    );
  }
  return null;
}
