import type { Catalog } from '../catalog/index.js';
import { atLeastVersion, type ModelSpec, type ServerConfig, type SimProfile, type Workload } from '../domain/index.js';
import { LmBenchError, isLmBenchError, type ErrorCode } from '../errors.js';
import { simulateSummary, type SimulateInput } from '../sim/index.js';
import type { CsvRecord } from './csv.js';

/**
 * Rows in the layout of aiconfigurator's `silicon_sample.csv` (one measured point of a real server:
 * backend, version, model, GPU, precision, ISL/OSL, client concurrency, parallel layout, mean TTFT and
 * TPOT) → the simulator's prediction of the same point under the same protocol (docs/calibration.md
 * "How the rows were measured"):
 *
 * - `inferencex` rows (the InferenceX nightly's `benchmark_serving.py`, which AIC's adapter writes with
 *   `attention_dp_size` filled): a fresh server per point with `max_num_seqs` = concurrency, 8,192
 *   batched tokens, max_model_len 10,240 (or what the lengths need), prefix caching off, async
 *   scheduling on, an fp8 KV cache for fp8 checkpoints; the client sends 10 × concurrency requests of
 *   random tokens, input and output lengths uniform on [⌊0.8·L⌋, L], ignore_eos, in a closed loop that
 *   starts with every user at once.
 * - `aic-sweep` rows (AIC's own sweep, `attention_dp_size` empty): vLLM's defaults of that version
 *   (max_num_seqs 1024 on ≥ 70 GiB GPUs, 8,192 batched tokens, prefix caching on, async scheduling from
 *   0.14), and the same client: lengths on [⌊0.8·L⌋, L], a closed-loop burst of 10 × concurrency.
 *
 * The measured columns are never read to predict a row.
 */
export type Protocol = 'inferencex' | 'aic-sweep';

export interface SiliconRow {
  readonly line: number;
  readonly backend: string;
  readonly backendVersion: string;
  readonly modelPath: string;
  readonly system: string;
  readonly precision: string;
  readonly mode: string;
  readonly isl: number;
  readonly osl: number;
  readonly batchSize: number;
  readonly tp: number;
  readonly pp: number;
  readonly attentionDp: number | null;
  readonly moeEp: number | null;
  readonly measuredTtftMs: number | null;
  readonly measuredTpotMs: number | null;
}

/** AIC's system names → the catalog's GPU ids. */
export const SYSTEM_GPUS: Readonly<Record<string, string>> = {
  h100_sxm: 'H100-SXM',
  h100_pcie: 'H100-PCIe',
  h200_sxm: 'H200',
  b200_sxm: 'B200',
  a100_sxm: 'A100-80GB',
  l40s: 'L40S',
};

/** The columns a silicon-layout file must have (what `sim predict` recognises the layout by). */
export const SILICON_REQUIRED_COLUMNS = ['backend', 'model_path', 'system', 'isl', 'osl', 'batch_size', 'tp_size'] as const;

function intField(r: CsvRecord, file: string, name: string, required: boolean): number | null {
  const raw = r.fields[name];
  if (raw === undefined || raw === '') {
    if (required) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: ${name} is empty`, { details: { file, line: r.line, field: name } });
    return null;
  }
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: ${name} = "${raw}" is not a whole number`, { details: { file, line: r.line, field: name } });
  return n;
}

function measuredField(r: CsvRecord, file: string, name: string): number | null {
  const raw = r.fields[name];
  if (raw === undefined || raw === '') return null;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: ${name} = "${raw}" is not a positive number`, { details: { file, line: r.line, field: name } });
  return n;
}

/** Records of a CSV in silicon_sample's layout; extra columns are ignored, measured ones may be absent. */
export function siliconRows(columns: readonly string[], records: readonly CsvRecord[], file: string): SiliconRow[] {
  const missing = SILICON_REQUIRED_COLUMNS.filter((c) => !columns.includes(c));
  if (missing.length > 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}: missing column(s) ${missing.join(', ')}`, { details: { file, field: missing[0] } });
  return records.map((r) => {
    const f = (k: string): string => r.fields[k] ?? '';
    return {
      line: r.line,
      backend: f('backend'),
      backendVersion: f('backend_version'),
      modelPath: f('model_path'),
      system: f('system'),
      precision: f('precision'),
      mode: f('mode') || 'agg',
      isl: intField(r, file, 'isl', true) as number,
      osl: intField(r, file, 'osl', true) as number,
      batchSize: intField(r, file, 'batch_size', true) as number,
      tp: intField(r, file, 'tp_size', true) as number,
      pp: intField(r, file, 'pp_size', false) ?? 1,
      attentionDp: intField(r, file, 'attention_dp_size', false),
      moeEp: intField(r, file, 'moe_ep_size', false),
      measuredTtftMs: measuredField(r, file, 'silicon_ttft_ms'),
      measuredTpotMs: measuredField(r, file, 'silicon_tpot_ms'),
    };
  });
}

/** What an empty `backend_version` stands for: InferenceX's Llama-3.3-70B-FP8 H100 runs used vLLM 0.10.2 (docs/calibration-protocol.md). */
export const EMPTY_BACKEND_VERSION = '0.10.2';

export interface RowPlan {
  readonly protocol: Protocol;
  readonly input: SimulateInput;
}

const rowError = (code: ErrorCode, message: string): LmBenchError => new LmBenchError(code, message);

/**
 * `--quantization` for a row's `precision`. A pre-quantized checkpoint (nvidia/…-FP8, Qwen's -FP8,
 * gpt-oss's MXFP4) is served in its own format with no flag (ModelOpt's refuses `--quantization fp8`),
 * so `fp8` on an fp8 checkpoint, and `fp4` on an MXFP4 or NVFP4 one, mean the checkpoint itself;
 * `fp8` on a bf16 checkpoint is vLLM's online fp8. A precision the checkpoint cannot be is refused.
 */
function quantizationOf(row: SiliconRow, model: ModelSpec): ServerConfig['quantization'] {
  const own = model.native_quantization;
  const refuse = (): LmBenchError =>
    rowError('LMB_ERR_KNOB_OUT_OF_DOMAIN', `precision "${row.precision}" of ${row.modelPath}, whose checkpoint is ${own === 'none' ? model.dtype : own}: name the checkpoint that was run`);
  switch (row.precision) {
    case '':
    case 'bf16':
    case 'fp16':
      return 'none';
    case 'fp8':
      if (own === 'none') return 'fp8';
      if (own === 'fp8') return 'none';
      throw refuse();
    case 'fp4':
    case 'mxfp4':
    case 'nvfp4':
      if (own === 'mxfp4' || own === 'fp4') return 'none';
      throw rowError('LMB_ERR_KNOB_OUT_OF_DOMAIN', `precision "${row.precision}" of ${row.modelPath}: only fp4 checkpoints (gpt-oss's MXFP4, ModelOpt NVFP4) are simulated in fp4`);
    default:
      throw rowError('LMB_ERR_KNOB_OUT_OF_DOMAIN', `precision "${row.precision}" of ${row.modelPath} is not simulated (bf16, fp8 and fp4 checkpoints, and online fp8, are)`);
  }
}

/** The simulation that reproduces a row's measurement, or a catalog error for what cannot be simulated. */
export function planRow(row: SiliconRow, catalog: Catalog, modelId: string = row.modelPath): RowPlan {
  if (row.backend !== 'vllm') throw rowError('LMB_ERR_INVALID_ARGUMENT', `backend "${row.backend}": only vllm rows are simulated`);
  if (row.mode !== 'agg') throw rowError('LMB_ERR_INVALID_ARGUMENT', `mode "${row.mode}": only aggregated serving (agg) is simulated`);
  if (row.pp !== 1) throw rowError('LMB_ERR_INVALID_ARGUMENT', `pp_size ${row.pp}: pipeline parallelism is not simulated`);
  const gpuId = SYSTEM_GPUS[row.system];
  if (gpuId === undefined) throw rowError('LMB_ERR_UNKNOWN_GPU', `unknown system "${row.system}"; known: ${Object.keys(SYSTEM_GPUS).join(', ')}`);
  const hw = catalog.gpu(gpuId);
  const model = catalog.model(modelId);
  const dp = row.attentionDp ?? 1;
  const gpus = row.tp * dp;
  const quantization = quantizationOf(row, model);
  // The KV cache InferenceX runs in fp8 for an fp8 model, whether the checkpoint or vLLM quantized it.
  const fp8 = quantization === 'fp8' || model.native_quantization === 'fp8';
  const protocol: Protocol = row.attentionDp === null ? 'aic-sweep' : 'inferencex';
  // An empty backend_version is InferenceX's Llama runs' 0.10.2; on another row it names no release (a current one).
  const v = row.backendVersion !== '' ? row.backendVersion : protocol === 'inferencex' ? EMPTY_BACKEND_VERSION : undefined;
  const conc = row.batchSize;
  // Lengths uniform on [⌊0.8·L⌋, L] (InferenceX's --random-range-ratio 0.8). AIC's own sweep does not
  // publish its client; its TTFTs grow 2–4× over a 16× rise in concurrency, which fixed lengths (every
  // wave of users prefilling together, forever in step) cannot give, so it gets the same range.
  const len = (L: number): Workload['input_len'] => ({ dist: 'uniform', min: Math.max(1, Math.floor(0.8 * L)), max: L });
  const config: ServerConfig =
    protocol === 'inferencex'
      ? {
          tensor_parallel_size: row.tp,
          data_parallel_size: dp,
          max_num_seqs: conc,
          max_num_batched_tokens: 8192,
          max_model_len: Math.max(10240, row.isl + row.osl),
          enable_prefix_caching: false,
          gpu_memory_utilization: 0.9,
          async_scheduling: true,
          quantization,
          kv_cache_dtype: fp8 ? 'fp8' : 'auto',
          // InferenceX's gpt-oss scripts capture graphs up to 2048 (the Llama/Qwen ones keep vLLM's default).
          ...(model.native_quantization === 'mxfp4' ? { max_cudagraph_capture_size: 2048 } : {}),
        }
      : {
          tensor_parallel_size: row.tp,
          data_parallel_size: dp,
          max_model_len: Math.min(model.native_context, Math.max(row.isl + row.osl + 64, 8192)),
          gpu_memory_utilization: 0.9,
          // Async scheduling became vLLM's default in 0.14.
          async_scheduling: v === undefined || atLeastVersion(v, 0, 14),
          quantization,
        };
  const workload: Workload = {
    name: `silicon-${row.line}`,
    api: 'completions',
    input_len: len(row.isl),
    output_len: len(row.osl),
    arrival: { kind: 'closed', concurrency: conc },
    num_prompts: 10 * conc,
    ignore_eos: true,
  };
  return { protocol, input: { config, hardware: { gpu: hw.id, count: gpus }, model: model.id, workload, seed: 1, catalog, runtimeFailures: false, ...(v === undefined ? {} : { vllmVersion: v }) } };
}

export interface RowPrediction {
  readonly line: number;
  readonly protocol: Protocol | null;
  readonly ttft_ms: number | null;
  readonly tpot_ms: number | null;
  readonly error: { readonly code: ErrorCode; readonly message: string } | null;
}

/** Simulates one planned row (summary mode) under a profile (default: the catalog's for the GPU). */
export function simulatePlan(plan: RowPlan, profile?: SimProfile): { ttftMs: number; tpotMs: number } {
  const out = simulateSummary({ ...plan.input, ...(profile === undefined ? {} : { profile }) });
  if (!out.ok) throw new LmBenchError('LMB_ERR_STARTUP_FAILED', `${out.failure.rule}: ${out.failure.message}`, { details: { rule: out.failure.rule } });
  if (out.summary.completed === 0) throw new LmBenchError('LMB_ERR_WORKLOAD_INVALID', 'no request completed');
  return { ttftMs: out.summary.ttftMs.mean, tpotMs: out.summary.tpotMs.mean };
}

/** `modelId`: the id the row's model resolved to (sim predict resolves names first), else its model_path. */
export function predictRow(row: SiliconRow, catalog: Catalog, profile?: SimProfile, modelId?: string): RowPrediction {
  let protocol: Protocol | null = null;
  try {
    const plan = planRow(row, catalog, modelId);
    protocol = plan.protocol;
    const p = simulatePlan(plan, profile);
    return { line: row.line, protocol, ttft_ms: p.ttftMs, tpot_ms: p.tpotMs, error: null };
  } catch (err) {
    if (!isLmBenchError(err)) throw err;
    return { line: row.line, protocol, ttft_ms: null, tpot_ms: null, error: { code: err.code, message: err.message } };
  }
}
