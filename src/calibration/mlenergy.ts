import type { Catalog } from '../catalog/index.js';
import type { Hardware, ModelSpec, Workload } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import type { SimSummary, SimulateInput } from '../sim/index.js';
import { parseCsv } from './csv.js';

/**
 * ML.ENERGY Benchmark v3 `lm-arena-chat` rows (data/calibration/mlenergy/) as simulations of the same
 * run: vLLM 0.11.1 with TP = the GPUs, `max_num_seqs` swept, 8,192 batched tokens, max_model_len 20,480,
 * async scheduling; 1,024 LMArena prompts × the sweep's repeats, all sent at t = 0, the server's
 * max_num_seqs the only cap; throughput over the steady-state window (from max_num_seqs first tokens to
 * N − max_num_seqs − 1 finishes), ITL pooled over the whole run. Output lengths: lognormal with the row's
 * mean (a median of ~0.81 × the mean, as the leaderboard's histograms show), at most 4,096. Prompt
 * lengths are not published: lognormal with mean 400 and std 600 tokens is an assumption
 * (docs/calibration.md says how much it moves the result).
 */
export interface MlenergyRow {
  readonly line: number;
  readonly model_id: string;
  readonly gpu: string;
  readonly num_gpus: number;
  readonly tp: number;
  readonly dp: number;
  readonly ep: number;
  readonly max_num_seqs: number;
  readonly avg_batch_size: number;
  readonly avg_output_len: number;
  readonly output_throughput_tok_s: number;
  readonly median_itl_ms: number;
  /** Average power of all the run's GPUs together over the steady-state window, W (null where the file leaves it empty). */
  readonly avg_power_w: number | null;
}

type NumericColumn = 'num_gpus' | 'tp' | 'dp' | 'ep' | 'max_num_seqs' | 'avg_batch_size' | 'avg_output_len' | 'output_throughput_tok_s' | 'median_itl_ms' | 'avg_power_w';

export function parseMlenergy(text: string, file: string): MlenergyRow[] {
  const { records } = parseCsv(text, file);
  return records.map((r) => {
    const num = (k: NumericColumn): number => {
      const v = Number(r.fields[k]);
      if (!Number.isFinite(v)) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: ${k} is not a number`, { details: { file, line: r.line, field: k } });
      return v;
    };
    return {
      line: r.line,
      model_id: r.fields['model_id'] ?? '',
      gpu: r.fields['gpu'] ?? '',
      num_gpus: num('num_gpus'),
      tp: num('tp'),
      dp: num('dp'),
      ep: num('ep'),
      max_num_seqs: num('max_num_seqs'),
      avg_batch_size: num('avg_batch_size'),
      avg_output_len: num('avg_output_len'),
      output_throughput_tok_s: num('output_throughput_tok_s'),
      median_itl_ms: num('median_itl_ms'),
      avg_power_w: r.fields['avg_power_w'] === undefined || r.fields['avg_power_w'] === '' ? null : num('avg_power_w'),
    };
  });
}

/** Requests sent per run: 1,024 prompts × the sweep's repeats (ml-energy/benchmark `sweeps.yaml`). */
export function mlenergyRequests(row: Pick<MlenergyRow, 'gpu' | 'max_num_seqs'>): number {
  const m = row.max_num_seqs;
  const repeats = m >= 4096 ? 7 : m >= 2048 ? (row.gpu === 'B200' ? 6 : 3) : m >= 1024 ? 4 : m >= 256 && row.gpu === 'B200' ? 2 : 1;
  return 1024 * repeats;
}

export interface MlenergyPoint {
  readonly row: MlenergyRow;
  readonly model: string;
  readonly input: Omit<SimulateInput, 'catalog'>;
}

/** The release ML.ENERGY Benchmark v3 ran (its configs' image); only its era matters to the simulator. */
export const MLENERGY_VLLM_VERSION = '0.11.1';

export const PROMPT_MEAN_TOKENS = 400;
export const PROMPT_STD_TOKENS = 600;

/** What of a row the protocol reads: the layout, the sweep's max_num_seqs and the mean output length. */
export type MlenergySetup = Pick<MlenergyRow, 'line' | 'num_gpus' | 'tp' | 'max_num_seqs' | 'avg_output_len'>;

/**
 * One row's run as a simulation of `model` on `gpu` (both already resolved). The MoE model's 2-GPU rows
 * ran `--tensor-parallel-size 2 --enable-expert-parallel` (ML.ENERGY's toolkit labels them tp=1, ep=2),
 * so TP is the GPU count for an MoE model. Typed on `MlenergySetup` so no measured column can reach it.
 */
export function mlenergyInput(row: MlenergySetup, model: ModelSpec, gpu: Hardware, prompt = { mean: PROMPT_MEAN_TOKENS, std: PROMPT_STD_TOKENS }): Omit<SimulateInput, 'catalog'> {
  // The repeats depend on the GPU: by catalog id, so an alias ("b200_sxm") gets B200's sweep.
  const n = mlenergyRequests({ gpu: gpu.id, max_num_seqs: row.max_num_seqs });
  const workload: Workload = {
    name: `mlenergy-${row.line}`,
    api: 'chat',
    input_len: { dist: 'lognormal', mean: prompt.mean, std: prompt.std, min: 4, max: 16_000 },
    output_len: { dist: 'lognormal', mean: row.avg_output_len, std: 0.71 * row.avg_output_len, min: 1, max: 4096 },
    arrival: { kind: 'burst' },
    num_prompts: n,
    ignore_eos: true,
  };
  return {
    config: {
      tensor_parallel_size: model.moe === null ? row.tp : row.num_gpus,
      ...(model.moe === null ? {} : { enable_expert_parallel: true }),
      max_num_seqs: row.max_num_seqs,
      max_num_batched_tokens: 8192,
      max_model_len: 20480,
      async_scheduling: true,
    },
    hardware: { gpu: gpu.id, count: row.num_gpus },
    model: model.id,
    workload,
    seed: 1,
    vllmVersion: MLENERGY_VLLM_VERSION,
    runtimeFailures: false,
    window: { startAfterFirstTokens: row.max_num_seqs, endAfterFinished: n - row.max_num_seqs - 1 },
  };
}

/** The rows the catalog knows, as simulations (rows of another model or GPU are left out). */
export function mlenergyPoints(rows: readonly MlenergyRow[], catalog: Catalog, prompt = { mean: PROMPT_MEAN_TOKENS, std: PROMPT_STD_TOKENS }): MlenergyPoint[] {
  const out: MlenergyPoint[] = [];
  for (const row of rows) {
    let model;
    let gpu;
    try {
      model = catalog.model(row.model_id);
      gpu = catalog.gpu(row.gpu);
    } catch {
      continue;
    }
    out.push({ row, model: model.id, input: mlenergyInput(row, model, gpu, prompt) });
  }
  return out;
}

/**
 * What ML.ENERGY reports of a run, from its simulation (null: the run never reached its window): the
 * window's output throughput, the median ITL over the run, and, with a power model, the average power
 * of all the GPUs over the same window and the joules per output token (energy ÷ the window's tokens).
 */
export function mlenergyPrediction(
  s: SimSummary,
  _p?: MlenergyPoint,
): { outputThroughput: number; medianItlMs: number; meanRunning: number; avgPowerW: number | null; energyPerOutputTokenJ: number | null } | null {
  if (s.window === null) return null;
  const e = s.energy !== null && s.energy.rule === 'steady-state' ? s.energy : null;
  return { outputThroughput: s.window.outputThroughput, medianItlMs: s.itlMs.median, meanRunning: s.window.meanRunning, avgPowerW: e?.avgPowerW ?? null, energyPerOutputTokenJ: e?.energyPerOutputTokenJ ?? null };
}
