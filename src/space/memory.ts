import type { ModelSpec, ServerConfig } from '../domain/index.js';
import { CONTEXT_RESERVED_GIB, memoryModel, resolveConfig, type MemoryBreakdown } from '../physics/index.js';
import type { SpaceContext } from './context.js';

/**
 * The memory built-ins rules may call (C12–C14 and users' own policies): thin views of the
 * simulator's one memory model (`src/sim/memory.ts`), never a second model. Each built-in takes
 * `config` and declares the knobs its value depends on, so rules calling it are cached over those
 * knobs only; `test/space/memory.test.ts` checks each declaration against the simulator.
 */
export interface MemoryFacts {
  readonly requested_gib: number;
  readonly free_gib: number;
  readonly weights_gib: number;
  readonly activation_gib: number;
  readonly non_kv_gib: number;
  readonly kv_cache_gib: number;
  readonly kv_blocks: number;
  readonly kv_tokens: number;
  readonly cudagraph_gib: number;
  readonly headroom_gib: number;
  readonly max_concurrency: number;
}

interface MemoryFunction {
  readonly type: 'int' | 'double';
  readonly field: keyof MemoryFacts;
  /**
   * The knobs the simulator's formula for this value reads (the rest of the config is defaulted), for
   * any model: `memoryReads` drops those a dense model's value ignores.
   */
  readonly reads: readonly string[];
  readonly description: string;
}

const KV = ['tensor_parallel_size', 'data_parallel_size', 'enable_expert_parallel', 'quantization', 'max_num_batched_tokens', 'max_num_seqs', 'gpu_memory_utilization', 'kv_cache_dtype', 'block_size'];

export const MEMORY_FUNCTIONS = {
  requested_memory_gib: { type: 'double', field: 'requested_gib', reads: ['gpu_memory_utilization'], description: 'ceil(visible × gpu_memory_utilization), per GPU' },
  free_memory_gib: { type: 'double', field: 'free_gib', reads: [], description: 'memory free on each GPU when vLLM starts' },
  weights_gib: { type: 'double', field: 'weights_gib', reads: ['tensor_parallel_size', 'data_parallel_size', 'enable_expert_parallel', 'quantization'], description: 'weights per GPU' },
  activation_gib: {
    type: 'double',
    field: 'activation_gib',
    reads: ['tensor_parallel_size', 'max_num_batched_tokens', 'max_num_seqs'],
    description: 'peak of the profiling forward',
  },
  non_kv_memory_gib: {
    type: 'double',
    field: 'non_kv_gib',
    reads: ['tensor_parallel_size', 'data_parallel_size', 'enable_expert_parallel', 'quantization', 'max_num_batched_tokens', 'max_num_seqs'],
    description: 'weights + activation peak + non-torch memory per GPU',
  },
  kv_cache_gib: { type: 'double', field: 'kv_cache_gib', reads: KV, description: 'KV-cache memory per GPU (≤ 0: no room)' },
  kv_cache_blocks: { type: 'int', field: 'kv_blocks', reads: KV, description: 'KV blocks per GPU' },
  kv_cache_tokens: { type: 'int', field: 'kv_tokens', reads: KV, description: 'tokens the KV cache of one replica holds' },
  cudagraph_memory_gib: {
    type: 'double',
    field: 'cudagraph_gib',
    reads: ['enforce_eager', 'max_cudagraph_capture_size', 'max_num_batched_tokens'],
    description: 'CUDA-graph pool, allocated outside gpu_memory_utilization',
  },
  memory_headroom_gib: {
    type: 'double',
    field: 'headroom_gib',
    reads: ['gpu_memory_utilization', 'enforce_eager', 'max_cudagraph_capture_size', 'max_num_batched_tokens'],
    description: 'free memory left after the requested pool and the CUDA graphs (< 0: capture OOM)',
  },
  max_concurrency: {
    type: 'double',
    field: 'max_concurrency',
    reads: [...KV, 'max_model_len'],
    description: 'max_model_len-long requests the KV cache holds at once',
  },
} as const satisfies Record<string, MemoryFunction>;
export type MemoryFunctionName = keyof typeof MEMORY_FUNCTIONS;

/** Every knob some memory built-in reads. */
export const MEMORY_READS: readonly string[] = [...new Set(Object.values(MEMORY_FUNCTIONS).flatMap((f) => f.reads))];

/**
 * Knobs a memory value reads only through an MoE model's expert layout (`src/physics/weights.ts`
 * `moeLayout`: the experts shard over DP × TP, whole experts per rank with expert parallelism). A
 * dense model's memory per GPU is one replica's and ignores them; a rule table reading them anyway
 * grows by the DP grid (8 replica counts on 8 GPUs) for nothing.
 */
const EXPERT_LAYOUT_KNOBS: ReadonlySet<string> = new Set(['data_parallel_size', 'enable_expert_parallel']);

const DENSE_READS: ReadonlyMap<MemoryFunctionName, readonly string[]> = new Map(
  (Object.keys(MEMORY_FUNCTIONS) as MemoryFunctionName[]).map((fn) => [fn, (MEMORY_FUNCTIONS[fn].reads as readonly string[]).filter((r) => !EXPERT_LAYOUT_KNOBS.has(r))]),
);

/** The knobs a built-in's value reads for this model (`test/space/memory.test.ts` checks both kinds against the simulator). */
export function memoryReads(fn: MemoryFunctionName, model: ModelSpec): readonly string[] {
  return (model.moe === null ? DENSE_READS.get(fn) : undefined) ?? MEMORY_FUNCTIONS[fn].reads;
}

/** The facts for a (possibly partial) config: unset knobs take vLLM's defaults, which the value does not depend on. */
export function memoryFacts(config: ServerConfig, ctx: SpaceContext): MemoryFacts {
  const resolved = resolveConfig(config, ctx.hardware, ctx.model);
  return factsOf(memoryModel(resolved, ctx.hardware, ctx.model));
}

export function factsOf(m: MemoryBreakdown): MemoryFacts {
  return {
    requested_gib: m.requestedGib,
    free_gib: m.visibleGib - CONTEXT_RESERVED_GIB,
    weights_gib: m.weightsGibPerGpu,
    activation_gib: m.activationGib,
    non_kv_gib: m.weightsGibPerGpu + m.activationGib + m.nonTorchGib,
    kv_cache_gib: m.kvGibPerGpu,
    kv_blocks: m.numBlocks,
    kv_tokens: m.kvTokenCapacity,
    cudagraph_gib: m.cudagraphGib,
    headroom_gib: m.headroomGib,
    max_concurrency: m.maxConcurrency,
  };
}
