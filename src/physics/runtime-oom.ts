import type { Hardware, ResolvedServerConfig } from '../domain/index.js';
import type { RuntimeFailure } from './failure.js';
import type { MemoryBreakdown } from './memory.js';

/**
 * Run-time CUDA out-of-memory: the failure a server that started can still have.
 *
 * What vLLM accounts for. At start-up each worker (`vllm/v1/worker/gpu_worker.py`,
 * `determine_available_memory`, with `vllm/utils/mem_utils.py` `memory_profiling`) loads the weights,
 * runs one dummy forward of `max_num_batched_tokens` tokens and one dummy sampler pass over
 * `min(max_num_seqs, max_num_batched_tokens)` rows (`gpu_model_runner.py` `profile_run`), records the
 * torch peak and the non-torch growth (NCCL, custom all-reduce), and gives the KV cache whatever is left of
 * `gpu_memory_utilization × total`. `memory.ts` models exactly that, so everything vLLM profiles is inside
 * the pool by construction. CUDA graphs are captured after the KV cache and take their share from the
 * `1 − utilization` slice; `headroomGib` is what remains of that slice after them and the CUDA context.
 *
 * What it does not account for, and so has to fit in `headroomGib`:
 * - the caching allocator's fragmentation: blocks torch keeps reserved but cannot reuse for a step of
 *   another shape. torch's own OOM message prints it as "reserved by PyTorch but unallocated"; in six
 *   run-time OOMs users pasted it is 0.12 GiB on a 15.8 GiB card (vllm-project/vllm#10637), 0.19 and
 *   0.28 GiB on 23.6 GiB cards (vllm#26863 at utilization 0.95; noonghunna/club-3090#16) and 0.43, 0.60
 *   and 1.47 GiB on 79 GiB cards (vllm#13100, vllm#9290 at 0.941, vllm#13067): 0.55–1.85 % of the card,
 *   geometric mean 0.9 %. It grows with the card because larger cards run larger batches and longer
 *   contexts. vllm#153 lowered vLLM's utilization once already for this very reason.
 * - transients of shapes the warm-up never ran: fp32 logits under logprobs (vllm#5907, vllm#52054),
 *   sorting for top-p/top-k over a batch, a long prefill's MLP output. They scale with the batch vLLM
 *   profiled, which is why vLLM's own advice on V1 OOMs is to lower `max_num_seqs` (vllm#15357). The
 *   failing allocations in the same reports are 50–524 MiB on the 16–24 GB cards and 0.14–1.27 GiB on
 *   the 80 GB ones.
 * - fixed per-process workspaces created lazily after profiling (cuBLAS/cuBLASLt workspace for a new
 *   stream or handle: tens of MiB).
 *
 * The model. A run's peak unprofiled need has the median
 *
 *   needGib = 0.04 + 1.0 % × visibleGib + 5 % × activationGib
 *
 * and the run crashes when it exceeds the headroom; the need is log-logistic around that median, so
 *
 *   P(a run of 1,000 requests crashes) = 1 / (1 + (headroomGib / needGib)^12)
 *
 * (1 when the headroom is not positive). The shape 12 means a need 1.8× its median (or more) occurs in
 * 0.1 % of runs: a run's peak is the largest of many steps' allocations, which varies little between
 * runs of one deployment; the spread between deployments is carried by the median instead.
 *
 * What that gives. vLLM's maintainers call 0.90 → 0.95 safe in practice on an 80 GB card (vllm#1298);
 * proposals to run near 0.98 keep about 1.5 GiB free for dynamic allocations (vllm#5158, not merged):
 * H100, Llama-3.1-8B: 0.90 leaves 6.9 GiB against a 1.07 GiB median need (≈ 2e-10 per run), 0.95 leaves
 * 3.0 GiB (≈ 5e-6), 0.97 leaves 1.4 GiB (≈ 4 %), 0.98 leaves 0.6 GiB (≈ 100 %). An L4 running
 * Llama-3.2-3B at the default 0.90 keeps 1.2 GiB against 0.37 GiB (≈ 5e-7); the tightest catalog
 * deployment that starts at 0.90 (Llama-3.1-70B FP8 on 8 L4s, 0.77 GiB after 0.83 GiB of CUDA graphs)
 * stays near 2e-4; at 0.95 an L4 has 0.14 GiB left and crashes almost surely, as a 24 GB card at 0.95 did
 * in vllm#26863. A B200 needs 2.1 GiB and keeps 8.0 GiB at 0.95, 0.8 GiB at 0.99 (≈ 100 %). The draw is
 * seeded: the same run crashes, or not, every time. docs/calibration.md, "Run-time out-of-memory", says
 * what the rate rests on.
 */
/** Workspaces created after the profile run (cuBLAS/cuBLASLt for a new stream or handle). */
export const RUNTIME_OOM_WORKSPACE_GIB = 0.04;
/** Allocator fragmentation as a share of the card (0.9 % geometric mean in the reports above, rounded). */
export const RUNTIME_OOM_CAPACITY_SHARE = 0.01;
/** Transients of shapes the warm-up did not run, as a share of the profiled activation peak. */
export const RUNTIME_OOM_ACTIVATION_SHARE = 0.05;
/** Log-logistic shape: how sharply a run's chance to crash falls as headroom grows past the need. */
export const RUNTIME_OOM_SHAPE = 12;
/** The number of requests the per-run probability above refers to. */
export const RUNTIME_OOM_REQUESTS_PER_RUN = 1000;

/** The median over runs of the peak memory a run allocates that the profile run did not see, per GPU. */
export function unprofiledNeedGib(memory: MemoryBreakdown): number {
  return RUNTIME_OOM_WORKSPACE_GIB + RUNTIME_OOM_CAPACITY_SHARE * memory.visibleGib + RUNTIME_OOM_ACTIVATION_SHARE * memory.activationGib;
}

export function runtimeOomRunProbability(memory: MemoryBreakdown): number {
  if (memory.headroomGib <= 0) return 1;
  return 1 / (1 + (memory.headroomGib / unprofiledNeedGib(memory)) ** RUNTIME_OOM_SHAPE);
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
