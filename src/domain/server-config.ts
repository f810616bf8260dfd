import { z } from 'zod';

/**
 * The 12 vLLM engine arguments lm-bench tunes, under vLLM's own names (the CLI flag is `--` plus the
 * name with `-` for `_`). Bounds here are the ones vLLM itself enforces on the field (pydantic `Field`
 * bounds, reference §4 V17); the narrower tuning domains live in `search-spaces/vllm.yaml`.
 * Every knob is optional: an unset knob is resolved to vLLM's hardware-dependent default.
 */
export const KNOB_NAMES = [
  'tensor_parallel_size',
  'data_parallel_size',
  'max_num_seqs',
  'max_num_batched_tokens',
  'block_size',
  'gpu_memory_utilization',
  'enable_chunked_prefill',
  'enable_prefix_caching',
  'kv_cache_dtype',
  'quantization',
  'max_model_len',
  'enforce_eager',
] as const;
export type KnobName = (typeof KNOB_NAMES)[number];

/** Conditional knobs, accepted in a config and by the simulator but not in the core 12. */
export const CONDITIONAL_KNOB_NAMES = ['max_cudagraph_capture_size', 'async_scheduling', 'long_prefill_token_threshold', 'enable_expert_parallel'] as const;
export type ConditionalKnobName = (typeof CONDITIONAL_KNOB_NAMES)[number];

export const KvCacheDtype = z.enum(['auto', 'fp8', 'fp8_e4m3', 'fp8_e5m2']);
export type KvCacheDtype = z.infer<typeof KvCacheDtype>;
export const Quantization = z.enum(['none', 'fp8']);
export type Quantization = z.infer<typeof Quantization>;

const posInt = z.int().positive();

export const ServerConfig = z.strictObject({
  tensor_parallel_size: posInt.optional(),
  data_parallel_size: posInt.optional(),
  max_num_seqs: posInt.optional(),
  max_num_batched_tokens: posInt.optional(),
  block_size: posInt.optional(),
  gpu_memory_utilization: z.number().gt(0).lte(1).optional(),
  enable_chunked_prefill: z.boolean().optional(),
  enable_prefix_caching: z.boolean().optional(),
  kv_cache_dtype: KvCacheDtype.optional(),
  quantization: Quantization.optional(),
  max_model_len: posInt.optional(),
  enforce_eager: z.boolean().optional(),
  max_cudagraph_capture_size: posInt.optional(),
  async_scheduling: z.boolean().optional(),
  long_prefill_token_threshold: z.int().nonnegative().optional(),
  /** MoE only: whole experts per GPU across DP × TP instead of every expert sliced over them. */
  enable_expert_parallel: z.boolean().optional(),
});
export type ServerConfig = z.infer<typeof ServerConfig>;

/** A config with every knob resolved (vLLM's defaults filled in for the given hardware and model). */
export const ResolvedServerConfig = z.strictObject({
  tensor_parallel_size: posInt,
  data_parallel_size: posInt,
  max_num_seqs: posInt,
  max_num_batched_tokens: posInt,
  block_size: posInt,
  gpu_memory_utilization: z.number().gt(0).lte(1),
  enable_chunked_prefill: z.boolean(),
  enable_prefix_caching: z.boolean(),
  kv_cache_dtype: KvCacheDtype,
  quantization: Quantization,
  max_model_len: posInt,
  enforce_eager: z.boolean(),
  max_cudagraph_capture_size: posInt,
  async_scheduling: z.boolean(),
  long_prefill_token_threshold: z.int().nonnegative(),
  enable_expert_parallel: z.boolean(),
});
export type ResolvedServerConfig = z.infer<typeof ResolvedServerConfig>;

export type KnobValue = number | boolean | string;

/** The `vllm serve` flag for a knob: `--` plus the name with `-` for `_`. */
export function knobFlag(name: string): string {
  return `--${name.replaceAll('_', '-')}`;
}

/**
 * The argv (no shell) that starts `vllm serve` with this config. Booleans use vLLM's
 * `--flag` / `--no-flag` pairs; `quantization: none` and unset knobs are left out.
 */
export function vllmServeArgs(model: string, config: ServerConfig): string[] {
  const args = ['serve', model];
  for (const [name, value] of Object.entries(config) as [string, KnobValue | undefined][]) {
    if (value === undefined) continue;
    if (name === 'quantization' && value === 'none') continue;
    if (typeof value === 'boolean') {
      if (name === 'enforce_eager' || name === 'async_scheduling' || name === 'enable_expert_parallel') {
        if (value) args.push(knobFlag(name));
      } else {
        args.push(value ? knobFlag(name) : `--no-${name.replaceAll('_', '-')}`);
      }
    } else {
      args.push(knobFlag(name), String(value));
    }
  }
  return args;
}
