import { LmBenchError } from '../errors.js';

/**
 * A small RFC 4180 reader (quoted fields, doubled quotes, CRLF or LF) for the row files `sim predict`
 * takes: the header names the columns, every record becomes an object by column name with its line.
 */
export interface CsvRecord {
  /** 1-based line of the record in the file. */
  readonly line: number;
  readonly fields: Readonly<Record<string, string>>;
}

export function parseCsv(text: string, file: string): { columns: string[]; records: CsvRecord[] } {
  const rows: { line: number; cells: string[] }[] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === '\n') line++;
        cell += c;
      }
      continue;
    }
    if (c === '"' && cell === '') quoted = true;
    else if (c === ',') {
      cells.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      cells.push(cell);
      if (cells.length > 1 || cells[0] !== '') rows.push({ line: rowLine, cells });
      cells = [];
      cell = '';
      line++;
      rowLine = line;
    } else cell += c;
  }
  if (quoted) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${rowLine}: a quoted field never ends`, { details: { file, line: rowLine } });
  if (cell !== '' || cells.length > 0) {
    cells.push(cell);
    rows.push({ line: rowLine, cells });
  }
  const header = rows.shift();
  if (header === undefined) throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}: empty; the first line must name the columns`, { details: { file } });
  const columns = header.cells.map((c) => c.trim());
  const records = rows.map(({ line: at, cells: cs }) => {
    if (cs.length !== columns.length) {
      throw new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}:${at}: ${cs.length} fields, the header has ${columns.length}`, { details: { file, line: at } });
    }
    const fields: Record<string, string> = {};
    columns.forEach((c, k) => (fields[c] = (cs[k] as string).trim()));
    return { line: at, fields };
  });
  return { columns, records };
}
