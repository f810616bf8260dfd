import { resolve } from 'node:path';
import { parseCsv } from '../../calibration/csv.js';
import { predictRow, siliconRows, SYSTEM_GPUS, type RowPrediction, type SiliconRow } from '../../calibration/silicon.js';
import { defaultCatalog } from '../../catalog/index.js';
import type { SimProfile } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import { readUserFile } from '../../util/yaml.js';
import { parseFlags, requireFlag } from '../args.js';
import { writeJson, type CliIo } from '../io.js';
import { profileFromFlags } from '../sim-profile-flag.js';

/**
 * `lm-bench sim predict --rows FILE.csv`: every row of a CSV in aiconfigurator's silicon layout
 * predicted by the simulator under the row's measurement protocol (src/calibration/silicon.ts), in
 * input order; with measured columns present, each row's error and the MAPE per model and GPU. The
 * measured columns are never read to predict.
 */
export const PREDICT_USAGE = `  lm-bench sim predict --rows FILE.csv [--profile auto|default|stored] [--db PATH] [--json]`;

interface RowOut extends RowPrediction {
  readonly model: string;
  readonly gpu: string;
  readonly measured: { readonly ttft_ms: number | null; readonly tpot_ms: number | null };
  readonly error_pct: { readonly ttft: number | null; readonly tpot: number | null };
}

const pct = (sim: number | null, meas: number | null): number | null => (sim === null || meas === null ? null : (sim / meas - 1) * 100);

function mapeTable(rows: readonly RowOut[]): { model: string; gpu: string; rows: number; ttft_mape_pct: number | null; tpot_mape_pct: number | null }[] {
  const keys = [...new Set(rows.filter((r) => r.error === null && (r.measured.ttft_ms !== null || r.measured.tpot_ms !== null)).map((r) => `${r.model}|${r.gpu}`))];
  return keys.map((k) => {
    const [model, gpu] = k.split('|') as [string, string];
    // The rows of this model and GPU that have something to compare with.
    const g = rows.filter((r) => r.error === null && r.model === model && r.gpu === gpu && (r.measured.ttft_ms !== null || r.measured.tpot_ms !== null));
    const m = (xs: (number | null)[]): number | null => {
      const v = xs.filter((x): x is number => x !== null).map(Math.abs);
      return v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length;
    };
    return { model, gpu, rows: g.length, ttft_mape_pct: m(g.map((r) => r.error_pct.ttft)), tpot_mape_pct: m(g.map((r) => r.error_pct.tpot)) };
  });
}

export function predictCmd(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(argv, { rows: { type: 'string' }, profile: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' } });
  const file = resolve(io.cwd, requireFlag(values.rows, 'rows'));
  const text = readUserFile(file, '--rows');
  const { columns, records } = parseCsv(text, file);
  if (records.length === 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}: no rows after the header`, { details: { file } });
  const rows: SiliconRow[] = siliconRows(columns, records, file);
  const catalog = defaultCatalog();
  const profiles = new Map<string, SimProfile>();
  const profileOf = (system: string): SimProfile | undefined => {
    const id = SYSTEM_GPUS[system];
    if (id === undefined) return undefined;
    let p = profiles.get(id);
    if (p === undefined) {
      p = profileFromFlags(values, io, catalog, catalog.gpu(id)).profile;
      profiles.set(id, p);
    }
    return p;
  };
  const tty = io.stderr.isTTY === true && values.json !== true;
  const out: RowOut[] = rows.map((r, i) => {
    if (tty) io.stderr.write(`\rsimulating row ${i + 1}/${rows.length}…`);
    const p = predictRow(r, catalog, profileOf(r.system));
    return {
      ...p,
      model: r.modelPath,
      gpu: r.system,
      measured: { ttft_ms: r.measuredTtftMs, tpot_ms: r.measuredTpotMs },
      error_pct: { ttft: pct(p.ttft_ms, r.measuredTtftMs), tpot: pct(p.tpot_ms, r.measuredTpotMs) },
    };
  });
  if (tty) io.stderr.write('\n');
  const mape = mapeTable(out);
  if (values.json === true) writeJson(io, { rows: out, mape });
  else {
    const f = (x: number | null, d = 1): string => (x === null ? '–' : x.toFixed(d));
    const lines = out.map((r) =>
      r.error !== null
        ? `line ${r.line}: ${r.error.code}: ${r.error.message}`
        : `line ${r.line}: TTFT ${f(r.ttft_ms)} ms${r.measured.ttft_ms === null ? '' : ` (measured ${f(r.measured.ttft_ms)}, ${f(r.error_pct.ttft)}%)`}, TPOT ${f(r.tpot_ms, 2)} ms${r.measured.tpot_ms === null ? '' : ` (measured ${f(r.measured.tpot_ms, 2)}, ${f(r.error_pct.tpot)}%)`}`,
    );
    io.stdout.write(`${lines.join('\n')}\n`);
    if (mape.length > 0 && mape.some((m) => m.ttft_mape_pct !== null)) {
      io.stdout.write(`\nMAPE per model and GPU:\n${mape.map((m) => `  ${m.model} on ${m.gpu} (${m.rows} rows): TTFT ${f(m.ttft_mape_pct)}%, TPOT ${f(m.tpot_mape_pct)}%`).join('\n')}\n`);
    }
  }
  return Promise.resolve(out.every((r) => r.error !== null) ? 1 : 0);
}
