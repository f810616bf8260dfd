/**
 * The one CSV tokenizer (RFC 4180): comma-separated cells; a cell that opens with a double quote may
 * hold commas, line breaks and doubled quotes (`""`); CRLF or LF line ends. Pure and error-free: a
 * quoted cell left open at the end of the text is reported, not thrown, so each reader (result files,
 * traces, calibration rows) raises its own catalog error naming its file.
 */
export interface CsvRow {
  /** 1-based line of the row's first character. */
  readonly line: number;
  /** The cells as written (not trimmed); [] for a blank line. */
  readonly cells: string[];
}

export interface CsvText {
  readonly rows: CsvRow[];
  /** The line of a quoted cell that never closes (a cut-off file), else null. */
  readonly unclosedQuoteLine: number | null;
}

export function tokenizeCsv(text: string): CsvText {
  const rows: CsvRow[] = [];
  let cells: string[] = [];
  let cell = '';
  let inQuotes = false;
  let quotedCell = false;
  let line = 1;
  let rowLine = 1;
  const endCell = (): void => {
    cells.push(cell);
    cell = '';
    quotedCell = false;
  };
  const endRow = (): void => {
    endCell();
    rows.push({ line: rowLine, cells: cells.length === 1 && cells[0] === '' ? [] : cells });
    cells = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else inQuotes = false;
      } else {
        if (c === '\n') line++;
        cell += c;
      }
      continue;
    }
    if (c === '"' && cell === '' && !quotedCell) {
      inQuotes = true;
      quotedCell = true;
    } else if (c === ',') endCell();
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRow();
      line++;
      rowLine = line;
    } else cell += c;
  }
  const unclosedQuoteLine = inQuotes ? rowLine : null;
  if (cell !== '' || cells.length > 0) endRow();
  return { rows, unclosedQuoteLine };
}
