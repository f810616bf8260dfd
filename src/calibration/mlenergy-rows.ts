import { z } from 'zod';
import type { Catalog } from '../catalog/index.js';
import type { ModelSpec, SimProfile } from '../domain/index.js';
import { LmBenchError, isLmBenchError, type ErrorCode } from '../errors.js';
import { simulateSummary } from '../sim/index.js';
import type { CsvRecord } from './csv.js';
import { mlenergyInput, mlenergyPrediction } from './mlenergy.js';

/**
 * Rows in ML.ENERGY Benchmark v3's CSV layout (data/calibration/mlenergy/) for `sim predict`: one run of
 * a model's `max_num_seqs` sweep per row, predicted under the protocol of `mlenergy.ts` (the one the
 * held-out calibration check uses). Unlike the calibration's reader (`parseMlenergy`), the measured
 * columns may be empty or absent, and a row that cannot be read or simulated is an error of its own
 * rather than the file's, so the other rows still come out.
 */
export const MLENERGY_SETUP_COLUMNS = [
  'model_id',
  'task',
  'weight_precision',
  'total_params_b',
  'active_params_b',
  'gpu',
  'num_gpus',
  'tp',
  'dp',
  'ep',
  'max_num_seqs',
  'avg_output_len',
] as const;

/** What the run measured: kept beside the prediction to compare, never read to make it. */
export const MLENERGY_MEASURED_COLUMNS = ['avg_batch_size', 'output_throughput_tok_s', 'median_itl_ms', 'p90_itl_ms', 'p95_itl_ms', 'p99_itl_ms', 'avg_power_w'] as const;

// Each schema's message completes "<field> = "<raw>" is not …".
const count = z.number({ error: 'a whole number ≥ 1' }).int({ error: 'a whole number ≥ 1' }).min(1, { error: 'a whole number ≥ 1' });
const positive = z.number({ error: 'a positive number' }).positive({ error: 'a positive number' });
const text = z.string({ error: 'text' });

export const MlenergyPredictRow = z.object({
  line: z.number().int(),
  model_id: text.min(1, { error: 'a model id' }),
  task: text,
  weight_precision: text,
  total_params_b: positive.nullable(),
  active_params_b: positive.nullable(),
  gpu: text.min(1, { error: 'a GPU name' }),
  num_gpus: count,
  tp: count,
  dp: count,
  ep: count,
  max_num_seqs: count,
  avg_output_len: positive,
  measured: z.object(Object.fromEntries(MLENERGY_MEASURED_COLUMNS.map((c) => [c, positive.nullable()])) as Record<(typeof MLENERGY_MEASURED_COLUMNS)[number], z.ZodNullable<typeof positive>>),
});
export type MlenergyPredictRow = z.infer<typeof MlenergyPredictRow>;

/** A record read: the row, or why it cannot be (with the names to show beside the error). */
export interface MlenergyEntry {
  readonly line: number;
  readonly model: string;
  readonly gpu: string;
  readonly row: MlenergyPredictRow | null;
  readonly error: LmBenchError | null;
}

const TEXT_COLUMNS = new Set(['model_id', 'task', 'weight_precision', 'gpu']);
/** Setup figures ML.ENERGY always fills but the protocol does not need: empty is allowed. */
const OPTIONAL_NUMBERS = new Set(['total_params_b', 'active_params_b']);

/** A cell as the schema takes it: text stays text; a number column's empty cell is null, anything else a number or the raw text (refused by the schema). */
function cell(raw: string | undefined, column: string, optional: boolean): unknown {
  if (TEXT_COLUMNS.has(column)) return raw ?? '';
  if (raw === undefined || raw === '') return optional ? null : undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : raw;
}

export function mlenergyEntries(records: readonly CsvRecord[], file: string): MlenergyEntry[] {
  return records.map((r) => {
    const get = (c: string, optional: boolean): unknown => cell(r.fields[c], c, optional);
    const input = {
      line: r.line,
      ...Object.fromEntries(MLENERGY_SETUP_COLUMNS.map((c) => [c, get(c, OPTIONAL_NUMBERS.has(c))])),
      measured: Object.fromEntries(MLENERGY_MEASURED_COLUMNS.map((c) => [c, get(c, true)])),
    };
    const base = { line: r.line, model: r.fields['model_id'] ?? '', gpu: r.fields['gpu'] ?? '' };
    // A row with too few or too many fields (csv.ts's `raggedRows: 'keep'`) is this row's error alone.
    if (r.error !== undefined) return { ...base, row: null, error: r.error };
    const parsed = MlenergyPredictRow.safeParse(input);
    if (parsed.success) return { ...base, row: parsed.data, error: null };
    // Every bad cell of the row, each under its column with the text it held.
    const cells = parsed.error.issues.map((issue) => {
      const column = String(issue.path[issue.path.length - 1] ?? '');
      const raw = r.fields[column] ?? '';
      return { column, what: raw === '' ? `${column} is empty` : `${column} = "${raw}" is not ${issue.message}` };
    });
    const field = cells[0]?.column ?? '';
    return { ...base, row: null, error: new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: ${[...new Set(cells.map((c) => c.what))].join('; ')}`, { details: { file, line: r.line, field } }) };
  });
}

/**
 * The one place a row's `model_id` (a Hugging Face id, `Qwen/Qwen3-14B`) becomes a ModelSpec: for now
 * the catalog (ids, aliases and `hf_name`, case-insensitive); resolving any Hugging Face id from its
 * config.json is to be routed through here, so every row of the layout gains it at once.
 */
export function mlenergyModel(name: string, catalog: Catalog): ModelSpec {
  return catalog.model(name);
}

export interface MlenergyPrediction {
  readonly line: number;
  readonly output_throughput_tok_s: number | null;
  readonly median_itl_ms: number | null;
  /** Average power of all the GPUs over the steady-state window, W, and the joules per output token in it (null without a power model). */
  readonly avg_power_w: number | null;
  readonly energy_per_output_token_j: number | null;
  readonly error: { readonly code: ErrorCode; readonly message: string } | null;
}

const BF16 = new Set(['', 'bfloat16', 'bf16', 'float16', 'fp16']);
const FP8 = new Set(['fp8', 'float8', 'float8_e4m3fn']);

/** Refuses what the protocol does not reproduce, rather than predicting another run. */
function checkProtocol(row: MlenergyPredictRow, model: ModelSpec): void {
  const refuse = (code: ErrorCode, field: string, message: string): never => {
    throw new LmBenchError(code, message, { details: { line: row.line, field } });
  };
  // The prompt lengths and the sweep's repeats are lm-arena-chat's; another task is another workload.
  if (row.task !== 'lm-arena-chat') refuse('LMB_ERR_INVALID_ARGUMENT', 'task', `task "${row.task}": only lm-arena-chat rows are simulated (src/calibration/mlenergy.ts)`);
  if (row.dp !== 1) refuse('LMB_ERR_INVALID_ARGUMENT', 'dp', `dp ${row.dp}: the protocol runs TP (with EP for an MoE model) on one engine; data parallelism is not simulated`);
  const fp8 = model.native_quantization === 'fp8';
  const p = row.weight_precision.toLowerCase();
  if (!BF16.has(p) && !FP8.has(p)) refuse('LMB_ERR_KNOB_OUT_OF_DOMAIN', 'weight_precision', `weight_precision "${row.weight_precision}" is not simulated (bfloat16 and fp8 checkpoints are)`);
  if (p !== '' && FP8.has(p) !== fp8) {
    refuse('LMB_ERR_KNOB_OUT_OF_DOMAIN', 'weight_precision', `weight_precision "${row.weight_precision}" but ${model.id}'s checkpoint is ${model.native_quantization}: name the checkpoint that was run`);
  }
}

/**
 * ML.ENERGY serves every model it lists with `--max-model-len 20480` (all of them have at least that
 * context). A checkpoint with a shorter native context (gemma-2-9b-it's 8,192, phi-4's 16,384) cannot
 * start so: vLLM refuses a max_model_len past `max_position_embeddings`. Such a row can only have been
 * measured at the model's own context, so it is predicted there rather than refused; for every model
 * with 20,480 tokens or more (the catalog's, ML.ENERGY's) nothing changes.
 */
export function mlenergyMaxModelLen(model: Pick<ModelSpec, 'native_context'>, protocolTokens: number): number {
  return Math.min(protocolTokens, model.native_context);
}

function withinContext(input: ReturnType<typeof mlenergyInput>, model: ModelSpec): ReturnType<typeof mlenergyInput> {
  const len = input.config.max_model_len;
  return len === undefined ? input : { ...input, config: { ...input.config, max_model_len: mlenergyMaxModelLen(model, len) } };
}

/** One row's prediction under a profile (default: the catalog's for the GPU); errors come back in the row. */
export function predictMlenergyEntry(entry: MlenergyEntry, catalog: Catalog, profile?: SimProfile): MlenergyPrediction {
  const failed = (err: unknown): MlenergyPrediction => {
    if (!isLmBenchError(err)) throw err;
    return { line: entry.line, output_throughput_tok_s: null, median_itl_ms: null, avg_power_w: null, energy_per_output_token_j: null, error: { code: err.code, message: err.message } };
  };
  if (entry.row === null) return failed(entry.error);
  const row = entry.row;
  try {
    const model = mlenergyModel(row.model_id, catalog);
    const gpu = catalog.gpu(row.gpu);
    checkProtocol(row, model);
    const out = simulateSummary({ ...withinContext(mlenergyInput(row, model, gpu), model), catalog, ...(profile === undefined ? {} : { profile }) });
    if (!out.ok) throw new LmBenchError('LMB_ERR_STARTUP_FAILED', `${out.failure.rule}: ${out.failure.message}`, { details: { rule: out.failure.rule } });
    const p = mlenergyPrediction(out.summary);
    if (p === null) throw new LmBenchError('LMB_ERR_WORKLOAD_INVALID', `the run never reached ML.ENERGY's steady-state window (${out.summary.completed} requests completed)`);
    return { line: row.line, output_throughput_tok_s: p.outputThroughput, median_itl_ms: p.medianItlMs, avg_power_w: p.avgPowerW, energy_per_output_token_j: p.energyPerOutputTokenJ, error: null };
  } catch (err) {
    return failed(err);
  }
}
