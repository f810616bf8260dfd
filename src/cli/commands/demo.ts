import { join } from 'node:path';
import type { Command } from '../io.js';
import { writeJson } from '../io.js';
import { parseFlags } from '../args.js';
import { DATA_DIR, defaultCatalog } from '../../catalog/index.js';
import { Workload } from '../../domain/index.js';
import { loadYamlFile } from '../../util/yaml.js';
import { simulate } from '../../sim/index.js';
import { formatResultText, startupFailedError } from './sim.js';

/**
 * What `npm start` runs: for now one simulated benchmark, Llama-3.1-8B on 1×H100 under the chat
 * workload with vLLM's default configuration, printed the way `vllm bench serve` prints it.
 */
export const command: Command = {
  name: 'demo',
  summary: 'the main job on the embedded simulator (what `npm start` runs)',
  usage: 'Usage: lm-bench demo [--seed S] [--json]\n\nSimulates Llama-3.1-8B on 1×H100-SXM under data/workloads/chat.yaml with vLLM defaults.',
  run(argv, io) {
    const { values } = parseFlags(argv, { seed: { type: 'string' }, json: { type: 'boolean' } });
    const seed = values.seed === undefined ? 1 : Number(values.seed);
    const workload = loadYamlFile(join(DATA_DIR, 'workloads', 'chat.yaml'), Workload);
    const catalog = defaultCatalog();
    const out = simulate({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, seed, catalog, startEpochMs: Date.now() });
    if (!out.ok) throw startupFailedError(out.failure);
    if (values.json === true) {
      writeJson(io, out.result);
      return Promise.resolve(0);
    }
    const r = out.resolved;
    io.stdout.write(
      `lm-bench demo: simulated vLLM V1, Llama-3.1-8B on 1×H100-SXM, workload "${workload.name}" (${workload.description ?? ''})\n` +
        `resolved config: max_num_seqs=${r.max_num_seqs} max_num_batched_tokens=${r.max_num_batched_tokens} block_size=${r.block_size} ` +
        `gpu_memory_utilization=${r.gpu_memory_utilization} chunked_prefill=${r.enable_chunked_prefill} prefix_caching=${r.enable_prefix_caching} ` +
        `max_model_len=${r.max_model_len} cuda_graphs=${!r.enforce_eager}\n` +
        `memory per GPU: weights ${out.memory.weightsGibPerGpu.toFixed(2)} GiB, activation peak ${out.memory.activationGib.toFixed(2)} GiB, KV ${out.memory.kvGibPerGpu.toFixed(2)} GiB = ${out.memory.kvTokenCapacity} tokens\n\n`,
    );
    io.stdout.write(formatResultText(out.result));
    const slo = workload.slo;
    if (slo !== undefined) {
      const ok = (slo.ttft_p99_ms === undefined || out.result.p99_ttft_ms <= slo.ttft_p99_ms) && (slo.itl_p99_ms === undefined || out.result.p99_itl_ms <= slo.itl_p99_ms);
      io.stdout.write(`SLO (TTFT p99 ≤ ${slo.ttft_p99_ms ?? '-'} ms, ITL p99 ≤ ${slo.itl_p99_ms ?? '-'} ms): ${ok ? 'met' : 'missed'}\n`);
    }
    return Promise.resolve(0);
  },
};
