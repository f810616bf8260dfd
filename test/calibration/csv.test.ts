import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCsv } from '../../src/calibration/csv.js';
import { isLmBenchError } from '../../src/errors.js';

const TEXT = 'a,b,c\n1,2,3\n4,5\n6,7,8,9\n10,11,12\n';

test('parseCsv: a row with another number of fields than the header is the file’s error by default (a fit must not read it)', () => {
  assert.throws(
    () => parseCsv(TEXT, 'f.csv'),
    (err: unknown) => isLmBenchError(err, 'LMB_ERR_CONFIG_INVALID') && err.message === 'f.csv:3: 2 fields, the header has 3' && err.details['line'] === 3,
  );
});

test('parseCsv with raggedRows "keep": each ragged row comes back with its own error and the rest as always', () => {
  const { columns, records } = parseCsv(TEXT, 'f.csv', { raggedRows: 'keep' });
  assert.deepEqual(columns, ['a', 'b', 'c']);
  assert.deepEqual(
    records.map((r) => [r.line, r.error?.message ?? null]),
    [
      [2, null],
      [3, 'f.csv:3: 2 fields, the header has 3'],
      [4, 'f.csv:4: 4 fields, the header has 3'],
      [5, null],
    ],
  );
  assert.ok(records.every((r) => r.error === undefined || isLmBenchError(r.error, 'LMB_ERR_CONFIG_INVALID')));
  assert.deepEqual(records[0]?.fields, { a: '1', b: '2', c: '3' });
  assert.deepEqual(records[1]?.fields, { a: '4', b: '5' });
  assert.deepEqual(records[3]?.fields, { a: '10', b: '11', c: '12' });
});
