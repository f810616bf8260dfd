import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeStudyReport } from '../../src/cli/report-files.js';
import { isLmBenchError } from '../../src/errors.js';
import { openStore } from '../../src/store/index.js';
import { specOf } from '../report/study/fixture.js';

// `lm-bench demo --out FILE` ran its whole study, then died with LMB_ERR_INTERNAL (exit 70, "a bug;
// please report it") on mkdir's EEXIST: a path the user gave is an argument error, and the study,
// already stored, can be rendered elsewhere.

test('a report directory that cannot be written fails as the flag’s argument error, naming how to render the stored study again', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-cli-report-files-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'h.db'));
  t.after(() => store.close());
  store.createStudy(specOf('empty'));
  const refused = (flag: string, why: RegExp) => (err: unknown) =>
    isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') &&
    err.exitCode === 2 &&
    err.details['field'] === flag &&
    why.test(err.message) &&
    err.message.includes('study "empty" is stored: render its report elsewhere with `lm-bench report --study empty --out DIR`');

  const file = join(dir, 'a-file');
  writeFileSync(file, 'x');
  await assert.rejects(writeStudyReport(store, 'empty', file), refused('out', /^--out .*a-file: is a file, not a directory/));

  // The directory exists, but report.html cannot be written in it (here: a directory stands there).
  const out = join(dir, 'out');
  mkdirSync(join(out, 'report.html'), { recursive: true });
  await assert.rejects(writeStudyReport(store, 'empty', out, { flag: 'report-dir' }), refused('report-dir', /^--report-dir .*out: cannot write the report \(EISDIR/));
});
