import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { csvNumber, csvSections, readCsv } from '../../src/ingest/csv-text.js';
import { isLmBenchError } from '../../src/errors.js';
import { parseFile } from '../../src/ingest/index.js';
import { fixtureBytes } from './helpers.js';

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
    assert.equal(csvNumber('1.5e3', 'x'), 1500);
    assert.equal(csvNumber('+.5', 'x'), 0.5);
    // Number() reads these as 141, 3 and 15: no exporter writes a figure so.
    for (const raw of ['0x8D', '0b11', '0o17', 'Infinity']) assert.throws(() => csvNumber(raw, 'x'), /not a number/, raw);
  });
});

describe('AIPerf, genai-perf and GuideLLM CSV: a figure that could be read under another name is refused, not stored', () => {
  const aiperf = new TextDecoder().decode(fixtureBytes('aiperf/v0.8.0-schema1.0/profile_export_aiperf.csv'));
  // Written by Python's csv module: CRLF line ends.
  const guidellm = new TextDecoder().decode(fixtureBytes('guidellm/v0.8.0.dev18-csv/benchmarks.csv'));
  const refuses = (name: string, text: string, re: RegExp) =>
    assert.throws(() => parseFile(name, new TextEncoder().encode(text)), (e: unknown) => isLmBenchError(e, 'LMB_ERR_INGEST_REJECTED') && re.test(e.message), name);
  const TTFT = 'Time to First Token (ms),11205.91,';

  it('the untouched files are read (the checks below are not what refuses them)', () => {
    assert.equal(parseFile('a.csv', new TextEncoder().encode(aiperf)).runs[0]?.result.mean_ttft_ms, 11205.91);
    assert.equal(parseFile('g.csv', new TextEncoder().encode(guidellm)).runs.length, 2);
  });

  it('a number with an unquoted thousands separator (was read one column over: mean TTFT 11 ms, p99 the p95)', () => {
    assert.ok(aiperf.includes(TTFT));
    refuses('a.csv', aiperf.replace(TTFT, 'Time to First Token (ms),11,205.91,'), /^a\.csv line 14: 16 cells where the header has 15 \(a number written with an unquoted comma/);
    // A trailing comma adds an empty cell only: read as before.
    assert.equal(parseFile('a.csv', new TextEncoder().encode(aiperf.replace('Benchmark Duration (sec),141.58', 'Benchmark Duration (sec),141.58,'))).runs[0]?.result.duration, 141.58);
    const lines = guidellm.split('\r\n');
    lines[3] = `${lines[3] ?? ''},12`;
    refuses('g.csv', lines.join('\r\n'), /^g\.csv line 4: .* cells where the header has .* unquoted comma/);
  });

  it('a metric written twice with other figures, or a column twice in the header (the last was stored)', () => {
    refuses('a.csv', aiperf.replace('Benchmark Duration (sec),141.58', 'Benchmark Duration (sec),141.58\nBenchmark Duration (sec),14.158'), /^a\.csv line 19: Benchmark Duration \(sec\) is written twice with different figures \(first on line 18\)/);
    refuses('a.csv', aiperf.replace('Metric,avg,sum,', 'Metric,avg,avg,'), /^a\.csv line 1: column "avg" appears twice in the header/);
    // The same row twice says nothing new: read.
    assert.equal(parseFile('a.csv', new TextEncoder().encode(aiperf.replace('Benchmark Duration (sec),141.58', 'Benchmark Duration (sec),141.58\nBenchmark Duration (sec),141.58'))).runs[0]?.result.duration, 141.58);
    const [g0, g1, g2, ...rest] = guidellm.split('\r\n');
    const i = (g1 ?? '').split(',').indexOf('Successful');
    const dup = (row: string | undefined, cell: string | undefined) => `${row ?? ''},${cell ?? ''}`;
    const cells = (row: string | undefined) => readCsv(row ?? '')[0]?.cells ?? [];
    refuses('g.csv', [dup(g0, cells(g0)[i]), dup(g1, 'Successful'), dup(g2, cells(g2)[i]), ...rest.map((r) => (r.trim() === '' ? r : dup(r, '0')))].join('\r\n'), /^g\.csv: column "Request Counts \/ Successful" appears twice in the header/);
  });
});
