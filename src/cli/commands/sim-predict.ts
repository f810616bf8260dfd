import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseCsv, type CsvRecord } from '../../calibration/csv.js';
import { MLENERGY_MEASURED_COLUMNS, mlenergyEntries, predictMlenergyEntry, type MlenergyPrediction } from '../../calibration/mlenergy-rows.js';
import { detectRowLayout, headerLineOf, type RowLayout } from '../../calibration/row-layout.js';
import { predictRow, siliconRows, SYSTEM_GPUS, type RowPrediction, type SiliconRow } from '../../calibration/silicon.js';
import { defaultCatalog, registerModel, type Catalog } from '../../catalog/index.js';
import type { SimProfile } from '../../domain/index.js';
import { isLmBenchError, LmBenchError, type ErrorCode } from '../../errors.js';
import { readUserFile } from '../../util/yaml.js';
import { parseFlags, requireFlag } from '../args.js';
import { writeJson, type CliIo } from '../io.js';
import { OFFLINE_FLAG, resolveModelFlag } from '../model-flag.js';
import { profileFromFlags } from '../sim-profile-flag.js';

/**
 * `lm-bench sim predict --rows FILE.csv`: every row of a CSV predicted by the simulator under the
 * protocol it was measured with, in input order. The layout is read from the header: aiconfigurator's
 * silicon rows (mean TTFT and TPOT, src/calibration/silicon.ts) or ML.ENERGY v3's rows (steady-state
 * output throughput, median ITL, and the GPUs' average power and joules per output token over the same
 * window, src/calibration/mlenergy-rows.ts). With measured columns present,
 * each row's signed error and the MAPE per model and GPU. The measured columns are never read to predict.
 */
/** A predicted row of either layout: its figures, what was measured, and the signed error of each figure. */
interface RowOut {
  readonly line: number;
  readonly model: string;
  readonly gpu: string;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly measured: Readonly<Record<string, number | null>>;
  readonly error_pct: Readonly<Record<string, number | null>>;
}

/** Signed % error of a prediction against its measurement; null when either is missing. */
export const errorPct = (sim: number | null, meas: number | null): number | null => (sim === null || meas === null ? null : (sim / meas - 1) * 100);

/** MAPE per model and GPU (in order of first appearance) of each `error_pct` figure, as `<figure>_mape_pct`. */
function mapeTable(rows: readonly RowOut[], figures: readonly string[]): Record<string, string | number | null>[] {
  const compared = rows.filter((r) => r.error === null && figures.some((f) => r.error_pct[f] !== null));
  const keys = [...new Set(compared.map((r) => `${r.model}|${r.gpu}`))];
  return keys.map((k) => {
    const [model, gpu] = k.split('|') as [string, string];
    const g = compared.filter((r) => r.model === model && r.gpu === gpu);
    const m = (f: string): number | null => {
      const v = g.map((r) => r.error_pct[f] ?? null).filter((x): x is number => x !== null).map(Math.abs);
      return v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length;
    };
    return { model, gpu, rows: g.length, ...Object.fromEntries(figures.map((f) => [`${f}_mape_pct`, m(f)])) };
  });
}

/**
 * One GPU's calibrated profile per run (`--profile`), looked up once. Undefined for a GPU the catalog
 * lacks (the row says so) and where the catalog's profile applies: then each row is priced for the vLLM
 * release it names (domain/vllm-release.ts).
 */
function profileCache(values: { profile?: string | undefined; db?: string | undefined }, io: CliIo, catalog: Catalog): (gpuId: string | undefined) => SimProfile | undefined {
  const profiles = new Map<string, SimProfile | null>();
  return (id) => {
    if (id === undefined) return undefined;
    let p = profiles.get(id);
    if (p === undefined) {
      const r = profileFromFlags(values, io, catalog, catalog.gpu(id));
      p = r.stored ? r.profile : null;
      profiles.set(id, p);
    }
    return p ?? undefined;
  };
}

/** A silicon-layout record: the row read, or why it cannot be (its own error, with the names to show beside it). */
type SiliconEntry = { readonly row: SiliconRow } | { readonly line: number; readonly modelPath: string; readonly system: string; readonly error: LmBenchError };

/**
 * Each record read on its own, so that one malformed row (a field that is not a whole number, too few
 * or too many fields) is that row's error and the other rows still come out, as in ML.ENERGY's layout.
 */
function siliconEntries(columns: readonly string[], records: readonly CsvRecord[], file: string): SiliconEntry[] {
  siliconRows(columns, [], file); // a missing column is the file's error
  return records.map((r) => {
    const names = { line: r.line, modelPath: r.fields['model_path'] ?? '', system: r.fields['system'] ?? '' };
    if (r.error !== undefined) return { ...names, error: r.error };
    try {
      return { row: siliconRows(columns, [r], file)[0] as SiliconRow };
    } catch (err) {
      if (!isLmBenchError(err)) throw err;
      return { ...names, error: err };
    }
  });
}

function siliconOut(
  entries: readonly SiliconEntry[],
  models: ReadonlyMap<string, { id: string } | { error: LmBenchError }>,
  catalog: Catalog,
  profileOf: (id: string | undefined) => SimProfile | undefined,
  tick: (i: number) => void,
): (RowOut & RowPrediction)[] {
  const none = { protocol: null, ttft_ms: null, tpot_ms: null };
  return entries.map((e, i) => {
    tick(i);
    if ('error' in e) {
      return { ...unresolved(e.line, e.error), ...none, model: e.modelPath, gpu: e.system, measured: { ttft_ms: null, tpot_ms: null }, error_pct: { ttft: null, tpot: null } };
    }
    const r = e.row;
    const m = models.get(r.modelPath);
    const p: RowPrediction = m !== undefined && 'error' in m ? { ...unresolved(r.line, m.error), ...none } : predictRow(r, catalog, profileOf(SYSTEM_GPUS[r.system]), m?.id);
    return {
      ...p,
      model: r.modelPath,
      gpu: r.system,
      measured: { ttft_ms: r.measuredTtftMs, tpot_ms: r.measuredTpotMs },
      error_pct: { ttft: errorPct(p.ttft_ms, r.measuredTtftMs), tpot: errorPct(p.tpot_ms, r.measuredTpotMs) },
    };
  });
}

function mlenergyOut(entries: ReturnType<typeof mlenergyEntries>, catalog: Catalog, profileOf: (id: string | undefined) => SimProfile | undefined, tick: (i: number) => void): (RowOut & MlenergyPrediction)[] {
  const noMeasure = Object.fromEntries(MLENERGY_MEASURED_COLUMNS.map((c) => [c, null]));
  return entries.map((e, i) => {
    tick(i);
    const p = predictMlenergyEntry(e, catalog, profileOf(e.row === null ? undefined : catalog.findGpu(e.row.gpu)?.id));
    const measured = e.row?.measured ?? noMeasure;
    const measPower = measured['avg_power_w'] ?? null;
    const measTput = measured['output_throughput_tok_s'] ?? null;
    // ML.ENERGY's energy per token is the window's energy over its tokens: average power ÷ output throughput.
    const measJoules = measPower === null || measTput === null ? null : measPower / measTput;
    return {
      line: p.line,
      model: e.model,
      gpu: e.gpu,
      output_throughput_tok_s: p.output_throughput_tok_s,
      median_itl_ms: p.median_itl_ms,
      avg_power_w: p.avg_power_w,
      energy_per_output_token_j: p.energy_per_output_token_j,
      error: p.error,
      measured: { ...measured, energy_per_output_token_j: measJoules },
      error_pct: {
        output_throughput: errorPct(p.output_throughput_tok_s, measTput),
        median_itl: errorPct(p.median_itl_ms, measured['median_itl_ms'] ?? null),
        avg_power: errorPct(p.avg_power_w, measPower),
        energy_per_output_token: errorPct(p.energy_per_output_token_j, measJoules),
      },
    };
  });
}

const f = (x: number | null | undefined, d = 1): string => (x === null || x === undefined ? '–' : x.toFixed(d));
/** "12.3 ms (measured 11.0, 11.8%)", the parenthesis only when something was measured. */
const vs = (sim: number | null, unit: string, meas: number | null | undefined, pctErr: number | null | undefined, d: number): string =>
  `${f(sim, d)} ${unit}${meas === null || meas === undefined ? '' : ` (measured ${f(meas, d)}, ${f(pctErr)}%)`}`;

function humanText(layout: RowLayout, rows: readonly RowOut[], mape: readonly Record<string, string | number | null>[]): string {
  const num = (r: Readonly<Record<string, unknown>>, k: string): number | null => (typeof r[k] === 'number' ? r[k] : null);
  const lines = rows.map((r) => {
    if (r.error !== null) return `line ${r.line}: ${r.error.code}: ${r.error.message}`;
    const o = r as unknown as Record<string, unknown>;
    return layout === 'mlenergy-v3'
      ? `line ${r.line}: output throughput ${vs(num(o, 'output_throughput_tok_s'), 'tok/s', r.measured['output_throughput_tok_s'], r.error_pct['output_throughput'], 0)}, median ITL ${vs(num(o, 'median_itl_ms'), 'ms', r.measured['median_itl_ms'], r.error_pct['median_itl'], 2)}, ` +
        `power ${vs(num(o, 'avg_power_w'), 'W', r.measured['avg_power_w'], r.error_pct['avg_power'], 0)}, energy ${vs(num(o, 'energy_per_output_token_j'), 'J/token', r.measured['energy_per_output_token_j'], r.error_pct['energy_per_output_token'], 3)}`
      : `line ${r.line}: TTFT ${vs(num(o, 'ttft_ms'), 'ms', r.measured['ttft_ms'], r.error_pct['ttft'], 1)}, TPOT ${vs(num(o, 'tpot_ms'), 'ms', r.measured['tpot_ms'], r.error_pct['tpot'], 2)}`;
  });
  let s = `${lines.join('\n')}\n`;
  if (mape.length > 0) {
    const labels: [string, string][] =
      layout === 'mlenergy-v3'
        ? [
            ['output_throughput', 'output throughput'],
            ['median_itl', 'median ITL'],
            ['avg_power', 'power'],
            ['energy_per_output_token', 'J/token'],
          ]
        : [
            ['ttft', 'TTFT'],
            ['tpot', 'TPOT'],
          ];
    const row = (m: Record<string, string | number | null>): string =>
      `  ${String(m['model'])} on ${String(m['gpu'])} (${String(m['rows'])} rows): ${labels.map(([k, l]) => `${l} ${f(num(m, `${k}_mape_pct`))}%`).join(', ')}`;
    s += `\nMAPE per model and GPU:\n${mape.map(row).join('\n')}\n`;
  }
  return s;
}

/**
 * Each model a file names, resolved once as `--model` is (catalog, path, Hugging Face cache, hub) and
 * registered, so the rows' synchronous catalog lookups find it; the map gives the id to look up. A
 * relative path is read from the file's folder. A name that does not resolve is left as it is: its
 * rows answer with the resolver's error (what was tried), the other rows are still predicted.
 */
async function resolveRowModels(names: readonly string[], dir: string, io: CliIo, offline: boolean | undefined): Promise<Map<string, { id: string } | { error: LmBenchError }>> {
  const out = new Map<string, { id: string } | { error: LmBenchError }>();
  for (const name of new Set(names)) {
    if (name === '') continue;
    try {
      const r = await resolveModelFlag(name, { ...io, cwd: dir }, offline);
      registerModel(r.spec, r.config_hash);
      out.set(name, { id: r.spec.id });
    } catch (err) {
      if (!isLmBenchError(err)) throw err;
      out.set(name, { error: err });
    }
  }
  return out;
}

/** A row whose model did not resolve: the resolver's error, as the row's answer. */
const unresolved = (line: number, err: LmBenchError): { line: number; error: { code: ErrorCode; message: string } } => ({ line, error: { code: err.code, message: err.message } });

/**
 * The text of `--rows FILE`. A path that does not exist is named and said not to exist: the shared
 * wording of readUserFile ("FILE: --rows no such file") reads as though the flag were at fault.
 */
function readRowsFile(file: string): string {
  if (!existsSync(file)) throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `--rows ${file}: the file does not exist`, { details: { field: 'rows', file } });
  return readUserFile(file, '--rows');
}

export async function predictCmd(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(argv, { rows: { type: 'string' }, profile: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' }, ...OFFLINE_FLAG });
  const file = resolve(io.cwd, requireFlag(values.rows, 'rows'));
  const text = readRowsFile(file);
  // A row with too few or too many fields is that row's error, not the file's (docs/sim-predict.md).
  const { columns, records } = parseCsv(text, file, { raggedRows: 'keep' });
  const layout = detectRowLayout(columns, file, headerLineOf(text));
  if (records.length === 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}: no rows after the header`, { details: { file } });
  const catalog = defaultCatalog();
  const profileOf = profileCache(values, io, catalog);
  const tty = io.stderr.isTTY === true && values.json !== true;
  const tick = (i: number): void => void (tty && io.stderr.write(`\rsimulating row ${i + 1}/${records.length}…`));
  let out: RowOut[];
  if (layout === 'mlenergy-v3') {
    const entries = mlenergyEntries(records, file);
    // Only a row that was read names a model worth resolving (a short row's cells may be shifted).
    const models = await resolveRowModels(entries.filter((e) => e.row !== null).map((e) => e.model), dirname(file), io, values.offline);
    const resolvedEntries = entries.map((e) => {
      const m = models.get(e.model);
      return m === undefined || e.row === null ? e : 'error' in m ? { ...e, row: null, error: m.error } : { ...e, row: { ...e.row, model_id: m.id } };
    });
    out = mlenergyOut(resolvedEntries, catalog, profileOf, tick);
  } else {
    const entries = siliconEntries(columns, records, file);
    const models = await resolveRowModels(entries.flatMap((e) => ('row' in e ? [e.row.modelPath] : [])), dirname(file), io, values.offline);
    out = siliconOut(entries, models, catalog, profileOf, tick);
  }
  if (tty) io.stderr.write('\n');
  const mape = mapeTable(out, layout === 'mlenergy-v3' ? ['output_throughput', 'median_itl', 'avg_power', 'energy_per_output_token'] : ['ttft', 'tpot']);
  if (values.json === true) writeJson(io, { layout, rows: out, mape });
  else io.stdout.write(humanText(layout, out, mape));
  return out.every((r) => r.error !== null) ? 1 : 0;
}
