import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tokenizeCsv } from '../../src/util/csv.js';

test('cells, quoted commas and doubled quotes, CRLF or LF, each row with its first line', () => {
  const { rows, unclosedQuoteLine } = tokenizeCsv('a,b,c\r\n1,"x, y","say ""hi"""\n"multi\nline",2,\n');
  assert.equal(unclosedQuoteLine, null);
  assert.deepEqual(rows, [
    { line: 1, cells: ['a', 'b', 'c'] },
    { line: 2, cells: ['1', 'x, y', 'say "hi"'] },
    { line: 3, cells: ['multi\nline', '2', ''] },
  ]);
});

test('a blank line is a row with no cells; the last line needs no line end; cells keep their spaces', () => {
  assert.deepEqual(tokenizeCsv('a\n\n b ,c').rows, [
    { line: 1, cells: ['a'] },
    { line: 2, cells: [] },
    { line: 3, cells: [' b ', 'c'] },
  ]);
  assert.deepEqual(tokenizeCsv('').rows, []);
});

test('a quote inside an unquoted cell is text; one left open is reported with its row line, not thrown', () => {
  assert.deepEqual(tokenizeCsv('5" disk,x').rows[0]?.cells, ['5" disk', 'x']);
  const cut = tokenizeCsv('h1,h2\n1,"never\nends');
  assert.equal(cut.unclosedQuoteLine, 2);
});
