import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LMB_BIN } from '../helpers/cli.js';

/**
 * bin/lm-bench.js in a copy of the package without node_modules (a production install has no tsx, a dev
 * dependency): dist/ holds a stand-in build, src/ one file. The launcher refused to start (exit 70, "no
 * build in dist/") as soon as any source was newer than the build.
 */
function launch(opts: { srcNewer: boolean; env?: Record<string, string> }): Promise<{ status: number; stdout: string; stderr: string }> {
  const root = mkdtempSync(join(tmpdir(), 'lmb-cli-launcher-'));
  mkdirSync(join(root, 'bin'));
  mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
  mkdirSync(join(root, 'src'));
  copyFileSync(LMB_BIN, join(root, 'bin', 'lm-bench.js'));
  writeFileSync(join(root, 'package.json'), '{"type":"module"}');
  writeFileSync(join(root, 'dist', 'cli', 'main.js'), "console.log('from dist');\n");
  writeFileSync(join(root, 'src', 'x.ts'), 'export {};\n');
  const [older, newer] = [new Date(2020, 0, 1), new Date(2021, 0, 1)];
  utimesSync(join(root, 'dist', 'cli', 'main.js'), opts.srcNewer ? older : newer, opts.srcNewer ? older : newer);
  utimesSync(join(root, 'src', 'x.ts'), opts.srcNewer ? newer : older, opts.srcNewer ? newer : older);
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, 'bin', 'lm-bench.js')], { cwd: root, env: { PATH: process.env['PATH'] ?? '', ...opts.env }, timeout: 30_000 }, (err, stdout, stderr) => {
      rmSync(root, { recursive: true, force: true });
      resolve({ status: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
  });
}

test('without tsx, sources newer than the build still run the build, with a warning', async () => {
  const r = await launch({ srcNewer: true });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'from dist\n');
  assert.match(r.stderr, /^lm-bench: warning: src\/ changed after the build in dist\/ and tsx is not installed/);
});

test('without tsx, a current build runs silently; LMB_FROM_SOURCE=1 still refuses, naming why', async () => {
  const current = await launch({ srcNewer: false });
  assert.deepEqual([current.status, current.stdout, current.stderr], [0, 'from dist\n', '']);
  const forced = await launch({ srcNewer: false, env: { LMB_FROM_SOURCE: '1' } });
  assert.equal(forced.status, 70);
  assert.match(forced.stderr, /LMB_ERR_INTERNAL: LMB_FROM_SOURCE=1 but no tsx to run the sources/);
});
