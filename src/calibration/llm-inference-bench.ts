import { z } from 'zod';
import type { Hardware, ModelSpec, Workload } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import type { SimSummary, SimulateInput } from '../sim/index.js';
import { parseCsv } from './csv.js';

/**
 * LLM-Inference-Bench's results (argonne-lcf/LLM-Inference-Bench `Plots/All_results.csv`,
 * data/calibration/llm-inference-bench/): a batch of B prompts of L tokens, L output tokens each, all
 * submitted at once to vLLM (≈0.4–0.5) on N GPUs of one node; Latency (s) for the whole batch and
 * Throughput = B·(L + L) / Latency (tok/s). Simulated as the same batch: burst arrival, fixed lengths,
 * ignore_eos, TP = N, every other knob vLLM's default (max_model_len the model's native context, as
 * `vllm serve` without the flag).
 */

/** The GPUs the file names, as catalog ids. */
export const LIB_GPUS: Readonly<Record<string, string>> = {
  // ALCF Polaris nodes (4 × A100-SXM4-40GB), where the paper's A100 runs were made.
  'Nvidia A100 GPU': 'A100-40GB',
  'Nvidia H100 GPU': 'H100-SXM',
};

const count = z.number().int().min(1);
export const LibRow = z.object({
  line: z.number().int(),
  hardware: z.string().min(1),
  num_gpus: count,
  framework: z.string().min(1),
  model: z.string().min(1),
  /** Input length = output length, tokens. */
  io_len_tokens: count,
  batch_size: count,
  measured_latency_s: z.number().positive(),
  measured_throughput_tok_s: z.number().positive(),
});
export type LibRow = z.infer<typeof LibRow>;

const COLUMNS = { hardware: 'Hardware', num_gpus: 'Num of Hardware', framework: 'Framework', model: 'Model', io_len_tokens: 'Input Output Length', batch_size: 'Batch Size', measured_latency_s: 'Latency', measured_throughput_tok_s: 'Throughput' } as const;
const TEXT = new Set<keyof typeof COLUMNS>(['hardware', 'framework', 'model']);

export function parseLibRows(text: string, file: string): LibRow[] {
  const { columns, records } = parseCsv(text, file);
  const missing = Object.values(COLUMNS).filter((c) => !columns.includes(c));
  if (missing.length > 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}: not LLM-Inference-Bench's layout (no ${missing.join(', ')} column)`, { details: { file, field: missing[0] } });
  return records.map((r) => {
    const input = Object.fromEntries(Object.entries(COLUMNS).map(([k, c]) => [k, TEXT.has(k as keyof typeof COLUMNS) ? (r.fields[c] ?? '') : Number(r.fields[c])]));
    const parsed = LibRow.safeParse({ line: r.line, ...input });
    if (parsed.success) return parsed.data;
    // Every bad cell of the row, each under its column with the text it held.
    const cells = parsed.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? '');
      const column = COLUMNS[field as keyof typeof COLUMNS] ?? field;
      return { column, what: `${column} = "${r.fields[column] ?? ''}" is not valid (${issue.message})` };
    });
    throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: ${cells.map((c) => c.what).join('; ')}`, { details: { file, line: r.line, field: cells[0]?.column ?? '' } });
  });
}

/** The release LLM-Inference-Bench's vLLM rows ran (≈0.4–0.5, 2024); only its era matters to the simulator. */
export const LIB_VLLM_VERSION = '0.5.0';

/** One row's batch as a simulation of `model` on `gpu` (both resolved). Typed so that no measured figure can reach it. */
export function libInput(row: Pick<LibRow, 'line' | 'num_gpus' | 'io_len_tokens' | 'batch_size'>, model: ModelSpec, gpu: Hardware): Omit<SimulateInput, 'catalog'> {
  const workload: Workload = {
    name: `llm-inference-bench-${row.line}`,
    api: 'completions',
    input_len: { dist: 'fixed', value: row.io_len_tokens },
    output_len: { dist: 'fixed', value: row.io_len_tokens },
    arrival: { kind: 'burst' },
    num_prompts: row.batch_size,
    ignore_eos: true,
  };
  return {
    config: { tensor_parallel_size: row.num_gpus },
    hardware: { gpu: gpu.id, count: row.num_gpus },
    model,
    workload,
    seed: 1,
    vllmVersion: LIB_VLLM_VERSION,
    // The measured batches finished: a run-time OOM draw would predict a run that did not happen.
    runtimeFailures: false,
  };
}

export interface LibPrediction {
  readonly latencyS: number;
  readonly throughputTokS: number;
}

/** The row's figures from its simulation; null when a request of the batch did not complete. */
export function libPrediction(s: SimSummary, row: Pick<LibRow, 'io_len_tokens' | 'batch_size'>): LibPrediction | null {
  if (s.completed !== row.batch_size || !(s.durationS > 0)) return null;
  return { latencyS: s.durationS, throughputTokS: (row.batch_size * 2 * row.io_len_tokens) / s.durationS };
}
