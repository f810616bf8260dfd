import type { Hardware, ResolvedServerConfig } from '../domain/index.js';
import type { RuntimeFailure } from './failure.js';
import type { MemoryBreakdown } from './memory.js';

/**
 * Run-time CUDA out-of-memory: the failure a server that started can still have. vLLM sizes its KV
 * cache so that the profiled peak fits inside `gpu_memory_utilization × total`; what it does not
 * profile (allocator fragmentation, NCCL and cuBLAS workspaces growing, a sampler sort over a batch
 * the warm-up did not see; reference §4 warnings, vllm-project/vllm#26863, #15105, #13252 at 0.97)
 * has to fit in the headroom the utilization leaves. The simulator draws that need per request:
 *
 *   P(a run of 1,000 requests crashes) = 1 / (1 + exp((headroom_GiB − 1.0) / 0.25))
 *
 * an estimate, not a fit (no public data gives the rate): on an H100 (79.2 GiB visible, 64-layer
 * model with CUDA graphs) utilization 0.90 leaves 6.4 GiB and never crashes, 0.95 leaves 2.5 GiB
 * (0.3%), 0.96 leaves 1.7 GiB (6%), 0.98 leaves 0.1 GiB (97%). The draw is seeded: the same run
 * crashes, or not, every time.
 */
export const RUNTIME_OOM_MIDPOINT_GIB = 1.0;
export const RUNTIME_OOM_SCALE_GIB = 0.25;
/** The number of requests the per-run probability above refers to. */
export const RUNTIME_OOM_REQUESTS_PER_RUN = 1000;

export function runtimeOomRunProbability(memory: MemoryBreakdown): number {
  return 1 / (1 + Math.exp((memory.headroomGib - RUNTIME_OOM_MIDPOINT_GIB) / RUNTIME_OOM_SCALE_GIB));
}

/** The chance that any one request's step is the one that runs out of memory. */
export function runtimeOomPerRequest(memory: MemoryBreakdown): number {
  const p = runtimeOomRunProbability(memory);
  if (p >= 1) return 1;
  return -Math.expm1(Math.log1p(-p) / RUNTIME_OOM_REQUESTS_PER_RUN);
}

/**
 * The request index (0-based, in admission order) at which a run of `requests` requests crashes,
 * or null; `u` is one uniform draw per request from the caller's seeded stream.
 */
export function runtimeOomAt(memory: MemoryBreakdown, requests: number, u: () => number): number | null {
  const h = runtimeOomPerRequest(memory);
  if (h < 1e-12) return null;
  // Geometric: the first request whose draw falls under h, found with one draw.
  const k = h >= 1 ? 0 : Math.floor(Math.log1p(-u()) / Math.log1p(-h));
  return k < requests ? k : null;
}

/** vLLM's (torch's) wording for the crash, with this GPU's figures. */
export function runtimeOomFailure(r: ResolvedServerConfig, hw: Hardware, memory: MemoryBreakdown, atS: number, atRequest: number): RuntimeFailure {
  const freeMib = Math.max(0, memory.headroomGib) * 1024;
  const tryMib = Math.max(2, freeMib + 64);
  return {
    rule: 'R1',
    phase: 'runtime',
    atS,
    atRequest,
    message:
      `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tryMib.toFixed(2)} MiB. GPU 0 has a total capacity of ${memory.visibleGib.toFixed(2)} GiB of which ${freeMib.toFixed(2)} MiB is free. ` +
      `(gpu_memory_utilization=${r.gpu_memory_utilization} leaves ${memory.headroomGib.toFixed(2)} GiB outside vLLM's pool on ${hw.id}; decrease gpu_memory_utilization.) ` +
      'EngineCore encountered an issue: EngineDeadError.',
  };
}
