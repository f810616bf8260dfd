import type { Hardware, ModelSpec, ResolvedServerConfig, ServerConfig } from '../domain/index.js';
import type { StartupFailure } from './failure.js';
import { checkMemory, memoryModel, type MemoryBreakdown } from './memory.js';
import { resolveConfig } from './resolve.js';
import { weightBytesPerGpu } from './weights.js';
import { validateConfig, type StartupContext } from './validate.js';

export type StartupOutcome =
  | { readonly ok: true; readonly resolved: ResolvedServerConfig; readonly memory: MemoryBreakdown; readonly startupTimeS: number }
  | { readonly ok: false; readonly resolved: ResolvedServerConfig; readonly failure: StartupFailure; readonly startupTimeS: number };

/** Resolve, validate (C1–C11, C17–C20) and check memory (C12–C14) in one go, as `vllm serve` (of `ctx.vllmVersion`) would start. */
export function startupCheck(config: ServerConfig, ctx: StartupContext): StartupOutcome {
  const resolved = resolveConfig(config, ctx.hardware, ctx.model);
  const invalid = validateConfig(resolved, ctx);
  if (invalid !== null) return { ok: false, resolved, failure: invalid, startupTimeS: INIT_S };
  const noMemory = checkMemory(resolved, ctx);
  if (noMemory !== null) {
    // Memory failures surface after weights load and the profile run: costly for a tuner.
    return { ok: false, resolved, failure: noMemory, startupTimeS: INIT_S + weightLoadS(resolved, ctx.model) + PROFILE_S };
  }
  return { ok: true, resolved, memory: memoryModel(resolved, ctx.hardware, ctx.model, ctx.vllmVersion), startupTimeS: startupTimeS(resolved, ctx.hardware, ctx.model) };
}

/** Process start, NCCL and worker init (docs/references/vllm-engine.md#start-up-phases: 5–10 s). */
const INIT_S = 8;
/** Weight loading from page-cached local disk (docs/references/vllm-engine.md#start-up-phases: 2–5 GB/s), per GPU in parallel. */
const WEIGHT_LOAD_GBS = 3;
const PROFILE_S = 2;
/** torch.compile with a warm cache (cold: 20–60 s). */
const COMPILE_S = 25;
const CAPTURE_S_PER_SIZE = 0.05;

/** Each GPU reads its own share (an MoE model's experts spread over DP × TP ranks). */
function weightLoadS(r: ResolvedServerConfig, model: ModelSpec): number {
  return weightBytesPerGpu(r, model) / (WEIGHT_LOAD_GBS * 1e9);
}

export interface StartupPhase {
  /** What vLLM logs for it. */
  readonly phase: 'init' | 'load_weights' | 'profile' | 'torch_compile' | 'cudagraph_capture';
  readonly seconds: number;
}

/** The phases of `vllm serve` start-up (docs/references/vllm-engine.md#start-up-phases) in order; eager mode skips compile and capture. */
export function startupPhases(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec): StartupPhase[] {
  const phases: StartupPhase[] = [
    { phase: 'init', seconds: INIT_S },
    { phase: 'load_weights', seconds: weightLoadS(r, model) },
    { phase: 'profile', seconds: PROFILE_S },
  ];
  if (!r.enforce_eager) {
    phases.push({ phase: 'torch_compile', seconds: COMPILE_S }, { phase: 'cudagraph_capture', seconds: CAPTURE_S_PER_SIZE * memoryModel(r, hw, model).captureSizes });
  }
  return phases;
}

/** Simulated wall time of `vllm serve` start-up: the sum of its phases. */
export function startupTimeS(r: ResolvedServerConfig, hw: Hardware, model: ModelSpec): number {
  return startupPhases(r, hw, model).reduce((a, p) => a + p.seconds, 0);
}
