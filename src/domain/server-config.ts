import { z } from 'zod';

export const KvCacheDtype = z.enum(['auto', 'fp8', 'fp8_e4m3', 'fp8_e5m2']);
export type KvCacheDtype = z.infer<typeof KvCacheDtype>;
export const Quantization = z.enum(['none', 'fp8']);
export type Quantization = z.infer<typeof Quantization>;

const posInt = z.int().positive();

/**
 * The 12 vLLM engine arguments lm-bench tunes, under vLLM's own names (the CLI flag is `--` plus the
 * name with `-` for `_`). Bounds here are the ones vLLM itself enforces on the field (pydantic `Field`
 * bounds in `vllm/config/cache.py` and `vllm/config/scheduler.py`); the narrower tuning domains live in `search-spaces/vllm.yaml`.
 * These two shapes are the one list of knobs: the name lists, the knob kinds (src/domain/knob-value.ts)
 * and both schemas below are derived from them, so a new knob is one line here.
 */
const CORE_KNOBS = {
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
};

/** Conditional knobs, accepted in a config and by the simulator but not in the core 12. */
const CONDITIONAL_KNOBS = {
  max_cudagraph_capture_size: posInt,
  async_scheduling: z.boolean(),
  long_prefill_token_threshold: z.int().nonnegative(),
  /** MoE only: whole experts per GPU across DP × TP instead of every expert sliced over them. */
  enable_expert_parallel: z.boolean(),
};

export type KnobName = keyof typeof CORE_KNOBS;
export type ConditionalKnobName = keyof typeof CONDITIONAL_KNOBS;
/** Any knob a ServerConfig may set: a core knob or a conditional one. */
export type AnyKnobName = KnobName | ConditionalKnobName;
export const KNOB_NAMES = Object.keys(CORE_KNOBS) as readonly KnobName[];
export const CONDITIONAL_KNOB_NAMES = Object.keys(CONDITIONAL_KNOBS) as readonly ConditionalKnobName[];
/** Every knob, core ones first, in the order configs are written. */
export const ALL_KNOB_NAMES: readonly AnyKnobName[] = [...KNOB_NAMES, ...CONDITIONAL_KNOB_NAMES];

/** A config with every knob resolved (vLLM's defaults filled in for the given hardware and model). */
export const ResolvedServerConfig = z.strictObject({ ...CORE_KNOBS, ...CONDITIONAL_KNOBS });
export type ResolvedServerConfig = z.infer<typeof ResolvedServerConfig>;

/** Every knob is optional: an unset knob is resolved to vLLM's hardware-dependent default. */
export const ServerConfig = ResolvedServerConfig.partial();
export type ServerConfig = z.infer<typeof ServerConfig>;

export type KnobValue = number | boolean | string;

/** The `vllm serve` flag for a knob: `--` plus the name with `-` for `_`. */
export function knobFlag(name: string): string {
  return `--${name.replaceAll('_', '-')}`;
}

/**
 * The argv (no shell) that starts `vllm serve` with this config. Booleans use vLLM's
 * `--flag` / `--no-flag` pairs; `quantization: none` and unset knobs are left out, and so is a false
 * boolean whose default is off in every release (enforce_eager, enable_expert_parallel). Async
 * scheduling is on by default in current releases (physics/resolve.ts), so its false is written.
 */
export function vllmServeArgs(model: string, config: ServerConfig): string[] {
  const args = ['serve', model];
  for (const [name, value] of Object.entries(config) as [string, KnobValue | undefined][]) {
    if (value === undefined) continue;
    if (name === 'quantization' && value === 'none') continue;
    if (typeof value === 'boolean') {
      if (name === 'enforce_eager' || name === 'enable_expert_parallel') {
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

/** `knob=value,knob=value`: the form `--enqueue` reads (values never contain commas). */
export function configAssignments(config: ServerConfig): string {
  return Object.entries(config)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');
}
