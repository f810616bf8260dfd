/**
 * The bad-input corpus, `lm-bench serve` and `sim serve`: the cases of serve-cases.ts run in a child
 * process (serve-runner.ts), so that nothing a case starts can outlive the test. Each must fail before
 * listening, with a catalog code and a message naming the file, field or flag.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { flushVerdicts, formatVerdict, record, stackProblems, verdict, type Verdict } from './harness.js';
import { SERVE_CASES } from './serve-cases.js';

const MARKER = '@@BAD-INPUT-VERDICTS@@';
let verdicts: Map<string, Verdict> | undefined;
let failure = '';

before(async () => {
  const { stdout, stderr, error } = await new Promise<{ stdout: string; stderr: string; error: Error | null }>((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(PROJECT_ROOT, 'test', 'bad-inputs', 'serve-runner.ts')],
      { cwd: PROJECT_ROOT, env: { ...process.env, LMB_TEST: '1', LMB_LOOPBACK_ONLY: '1' }, timeout: 240_000, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 },
      (err, out, errOut) => done({ stdout: out, stderr: errOut, error: err }),
    );
  });
  const at = stdout.lastIndexOf(MARKER);
  if (at < 0) {
    failure = `the serve runner produced no verdicts (${error?.message ?? 'no error'}): ${stderr.slice(-2000)}`;
    return;
  }
  const list = JSON.parse(stdout.slice(at + MARKER.length)) as Verdict[];
  verdicts = new Map(list.map((v) => [v.id, v]));
  // Whatever the runner itself printed around the cases must not be a stack trace either.
  const stray = stackProblems(`${stdout.slice(0, at)}\n${stderr}`);
  if (stray.length > 0) failure = `the serve runner printed: ${stray.map((p) => p.what).join('; ')}\n${stderr.slice(-2000)}`;
});
after(() => {
  for (const v of verdicts?.values() ?? []) record(v);
  flushVerdicts('serve');
});

describe('bad inputs: serve and sim serve (in a child process)', () => {
  for (const c of SERVE_CASES) {
    it(c.id, () => {
      const v = verdicts?.get(c.id) ?? verdict(c.id, [{ category: 'crash', what: failure || 'no verdict' }], 'runner failed');
      assert.equal(v.category, 'clear', formatVerdict(v));
    });
  }
  it('the runner ran cleanly', () => {
    assert.equal(failure, '');
  });
});
