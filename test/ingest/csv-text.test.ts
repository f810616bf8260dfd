import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { csvNumber, csvSections, readCsv } from '../../src/ingest/csv-text.js';
import { isLmBenchError } from '../../src/errors.js';

describe('csv-text', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks, CRLF or LF, and keeps blank lines as section breaks', () => {
    const rows = readCsv('a,"b,1","say ""hi"""\r\n\r\nMetric,Value\n"two\nlines",3\n');
    assert.deepEqual(
      rows.map((r) => [r.line, r.cells]),
      [
        [1, ['a', 'b,1', 'say "hi"']],
        [2, []],
        [3, ['Metric', 'Value']],
        [4, ['two\nlines', '3']],
      ],
    );
    assert.deepEqual(csvSections(rows).map((s) => s.length), [1, 2]);
  });

  it('refuses a file cut inside a quoted field, naming the line', () => {
    assert.throws(() => readCsv('a,b\n1,"unfinished'), (e: unknown) => isLmBenchError(e, 'LMB_ERR_INGEST_REJECTED') && /CSV line 2: a quoted field is not closed/.test(e.message));
  });

  it('numbers as exports print them; a garbled one is refused, an empty or N/A one is absent', () => {
    assert.equal(csvNumber('1,525.00', 'x'), 1525);
    assert.equal(csvNumber('-21.09', 'x'), -21.09);
    assert.equal(csvNumber('1759522428472357888.00', 'x'), 1759522428472357888);
    assert.equal(csvNumber('', 'x'), undefined);
    assert.equal(csvNumber('N/A', 'x'), undefined);
    assert.throws(() => csvNumber('12ms', 'f.csv line 3'), (e: unknown) => isLmBenchError(e, 'LMB_ERR_INGEST_REJECTED') && /f\.csv line 3: "12ms" is not a number/.test(e.message));
    assert.throws(() => csvNumber('1,52', 'x'), /not a number/, 'a comma that is not a thousands separator');
  });
});
