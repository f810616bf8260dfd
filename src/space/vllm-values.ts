import type { z } from 'zod';
import { knobKind, ResolvedServerConfig, type AnyKnobName, type KnobKind, type KnobValue } from '../domain/index.js';

/**
 * What `vllm serve` accepts for each knob, checked when a space file is loaded so a value vLLM
 * refuses (block_size 7, gpu_memory_utilization 1.2, kv_cache_dtype int4, a switch given as a number)
 * is an error at its line, not a configuration the tuner proposes and vLLM rejects at start-up.
 * Types and bounds are ServerConfig's (the field bounds vLLM enforces); some fields accept a fixed set.
 */

/**
 * vllm/config/cache.py `BlockSize = Literal[1, 8, 16, 32, 64, 128, 256]`, the choices of `--block-size`
 * (256 joined in 0.11; older releases stop at 128). Backends narrow it further (C10: multiples of 16).
 */
const CHOICES: Partial<Record<AnyKnobName, readonly number[]>> = {
  block_size: [1, 8, 16, 32, 64, 128, 256],
};

/** The knob type a space file must declare for each kind of ServerConfig field. */
const KNOB_TYPE: Record<KnobKind, 'int' | 'float' | 'bool' | 'categorical'> = { integer: 'int', number: 'float', boolean: 'bool', choice: 'categorical' };

export function expectedType(name: AnyKnobName): 'int' | 'float' | 'bool' | 'categorical' {
  return KNOB_TYPE[knobKind(name)];
}

/**
 * Why a value of a knob cannot be passed to vLLM, or null when it can. `bound`: the value is a range's
 * low or high, held to the field's bounds but not to its set of choices (low: 1 with grid [16, 32]).
 */
export function vllmRefuses(name: AnyKnobName, value: KnobValue, opts: { bound?: boolean } = {}): string | null {
  const field: z.ZodType = ResolvedServerConfig.shape[name];
  const r = field.safeParse(value);
  if (!r.success) return `${name} ${JSON.stringify(value)} is not a value lm-bench can pass to vLLM: ${r.error.issues.map((i) => i.message).join('; ')}`;
  const choices = CHOICES[name];
  if (opts.bound !== true && choices !== undefined && typeof value === 'number' && !choices.includes(value)) {
    return `vLLM refuses ${name} ${value}: --${name.replaceAll('_', '-')} takes one of ${choices.join(', ')}`;
  }
  return null;
}
