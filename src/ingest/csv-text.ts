import { tokenizeCsv, type CsvRow } from '../util/csv.js';
import { rejected } from './json-text.js';

/**
 * CSV exports of benchmark tools, read with the one tokenizer (util/csv.ts). Tools write several
 * tables into one file separated by blank lines (AIPerf, genai-perf), so blank lines are kept as
 * section breaks. Pure: text in, rows out.
 */
export type { CsvRow };

/** Rows of the text; a row whose cells are all empty is a blank line (`cells` = []). */
export function readCsv(text: string): CsvRow[] {
  const { rows, unclosedQuoteLine } = tokenizeCsv(text);
  if (unclosedQuoteLine !== null) throw rejected(`CSV line ${unclosedQuoteLine}: a quoted field is not closed (the file is cut off?)`);
  return rows;
}

/** The rows split at blank lines into sections (tables), empty sections dropped. */
export function csvSections(rows: readonly CsvRow[]): CsvRow[][] {
  const out: CsvRow[][] = [];
  let cur: CsvRow[] = [];
  for (const r of rows) {
    if (r.cells.length === 0 || r.cells.every((c) => c.trim() === '')) {
      if (cur.length > 0) out.push(cur);
      cur = [];
    } else cur.push(r);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * A number as a CSV export prints it: "1,525.00" (genai-perf's thousands separators), "9.32",
 * "1759522428472357888.00". Empty cells and "N/A" are undefined; anything else that is not a finite
 * number is rejected naming the line and column, since a garbled figure must not become a stored one.
 */
export function csvNumber(raw: string | undefined, where: string): number | undefined {
  if (raw === undefined) return undefined;
  const s = raw.trim();
  if (s === '' || /^(n\/a|none|null|nan)$/i.test(s)) return undefined;
  const cleaned = /^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s) ? s.replaceAll(',', '') : s;
  // Decimal notation only: Number() also reads "0x8D" as 141 and "0b11" as 3, which no exporter writes.
  const v = DECIMAL.test(cleaned) ? Number(cleaned) : NaN;
  if (!Number.isFinite(v)) throw rejected(`${where}: "${raw}" is not a number`);
  return v;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Why a data row does not line up with its header of `width` columns, or null. Shorter: a file cut off
 * mid-row. Longer, with something in the extra cells: a figure with an unquoted comma ("11,205.91"
 * split in two), which would move every later figure one column over, under another statistic's name.
 * (Empty cells past the header, a trailing comma, are harmless.)
 */
export function misfit(row: CsvRow, width: number): string | null {
  if (row.cells.length < width) return `${row.cells.length} cells where the header has ${width} (the file is cut off?)`;
  if (row.cells.slice(width).some((c) => c.trim() !== '')) {
    return `${row.cells.length} cells where the header has ${width} (a number written with an unquoted comma, such as 11,205.91? every figure after it would be read one column over)`;
  }
  return null;
}

/** Whether text looks like a CSV table (first non-empty line has a comma and no JSON/YAML opener). */
export function looksLikeCsv(text: string): boolean {
  const first = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  return first.includes(',') && !/^\s*[[{]/.test(first);
}
