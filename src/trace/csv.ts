import { z } from 'zod';
import { tokenizeCsv } from '../util/csv.js';
import { recordError, traceError, type NumberedLine } from './request.js';

/**
 * The CSV the public traces use: a header row naming the columns, one request a line, no embedded
 * newlines, each line split by the one tokenizer (util/csv.ts; quoted fields are read though none of
 * the known traces quote anything).
 */
export function splitCsvLine(line: string): string[] {
  const cells = tokenizeCsv(line).rows[0]?.cells ?? [];
  return (cells.length === 0 ? [''] : cells).map((f) => f.trim());
}

/** Header names as the file spells them, compared without case or surrounding spaces. */
export function hasColumns(header: string, names: readonly string[]): boolean {
  const cols = new Set(splitCsvLine(header).map((c) => c.toLowerCase()));
  return names.every((n) => cols.has(n.toLowerCase()));
}

/** A token count in a CSV cell: digits only (a sign, a decimal point or a word is refused). */
export const countCell = z
  .string()
  .regex(/^-?\d+(\.0+)?$/, 'expected a whole number of tokens')
  .transform(Number)
  .pipe(z.int().nonnegative('a token count cannot be negative'));

/** A time in seconds in a CSV cell (BurstGPT, Splitwise): a plain decimal number, ≥ 0. */
export const secondsCell = z
  .string()
  .regex(/^-?\d+(\.\d*)?([eE][-+]?\d+)?$/, 'expected a number of seconds')
  .transform(Number)
  .pipe(z.number().nonnegative('a time cannot be negative'));

/**
 * The data rows of a CSV trace as objects keyed by the wanted columns (the file's spelling and order
 * do not matter), each validated with `schema`: errors name the file, the line and the column. Lazy:
 * a row is split when the caller asks for it, so a week-long trace is never held as text.
 */
export function* csvRecords<S extends z.ZodType>(lines: Iterable<NumberedLine>, file: string, columns: readonly string[], schema: S): Generator<{ line: number; value: z.output<S> }> {
  const it = lines[Symbol.iterator]();
  const first = it.next();
  if (first.done === true) return;
  const head = first.value;
  const header = splitCsvLine(head.text).map((c) => c.toLowerCase());
  const index = columns.map((name) => {
    const at = header.indexOf(name.toLowerCase());
    if (at < 0) throw traceError(file, head.line, name, 'column missing from the header');
    return at;
  });
  for (let next = it.next(); next.done !== true; next = it.next()) {
    const { line, text } = next.value;
    const cells = splitCsvLine(text);
    if (cells.length !== header.length) {
      throw traceError(file, line, null, `${cells.length} fields where the header has ${header.length} (a truncated or garbled line)`);
    }
    const obj: Record<string, string> = {};
    columns.forEach((name, k) => {
      obj[name] = cells[index[k] as number] as string;
    });
    const res = schema.safeParse(obj);
    if (!res.success) throw recordError(file, line, res.error);
    yield { line, value: res.data };
  }
}
