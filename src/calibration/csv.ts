import { LmBenchError } from '../errors.js';
import { tokenizeCsv } from '../util/csv.js';

/**
 * The row files `sim predict` and calibration take, read with the one tokenizer (util/csv.ts): the
 * header names the columns, every record becomes an object by column name with its line.
 */
export interface CsvRecord {
  /** 1-based line of the record in the file. */
  readonly line: number;
  readonly fields: Readonly<Record<string, string>>;
  /**
   * Why the record cannot be read as a row (more or fewer fields than the header), when the caller
   * asked to keep such records (`raggedRows: 'keep'`); its fields are then not to be trusted.
   */
  readonly error?: LmBenchError;
}

/**
 * The header and the records of a CSV. A record with another number of fields than the header is the
 * file's error by default (a fit must not learn from a shifted row); with `raggedRows: 'keep'` it comes
 * back with its `error`, for a reader that answers row by row (`sim predict`) and lets the others through.
 */
export function parseCsv(text: string, file: string, opts: { readonly raggedRows?: 'refuse' | 'keep' } = {}): { columns: string[]; records: CsvRecord[] } {
  const read = tokenizeCsv(text);
  if (read.unclosedQuoteLine !== null) {
    throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${read.unclosedQuoteLine}: a quoted field never ends`, { details: { file, line: read.unclosedQuoteLine } });
  }
  const rows = read.rows.filter((r) => r.cells.length > 0);
  const header = rows.shift();
  if (header === undefined) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}: empty; the first line must name the columns`, { details: { file } });
  const columns = header.cells.map((c) => c.trim());
  const records = rows.map(({ line: at, cells: cs }): CsvRecord => {
    const fields: Record<string, string> = {};
    columns.forEach((c, k) => {
      if (k < cs.length) fields[c] = (cs[k] as string).trim();
    });
    if (cs.length !== columns.length) {
      const error = new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${at}: ${cs.length} fields, the header has ${columns.length}`, { details: { file, line: at } });
      if (opts.raggedRows !== 'keep') throw error;
      return { line: at, fields, error };
    }
    return { line: at, fields };
  });
  return { columns, records };
}

/** A field that must hold a positive number, refused with its file, line and column otherwise. */
export function positiveField(r: CsvRecord, file: string, k: string): number {
  const v = Number(r.fields[k]);
  if (!Number.isFinite(v) || v <= 0) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: ${k} must be a positive number, got "${r.fields[k] ?? ''}"`, { details: { file, line: r.line, field: k } });
  return v;
}

/** A field that must hold a positive whole number (a count), refused with its file, line and column otherwise. */
export function positiveIntegerField(r: CsvRecord, file: string, k: string): number {
  const v = positiveField(r, file, k);
  if (!Number.isInteger(v)) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${r.line}: ${k} must be a whole number, got "${r.fields[k] ?? ''}"`, { details: { file, line: r.line, field: k } });
  return v;
}
