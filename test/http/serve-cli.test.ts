import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { isCommandName } from '../../src/cli/registry.js';
import { AUTH, seedTrainedDb, tempDb, TOKEN } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Until `serve` is in the registry, a launcher that does what bin/lm-bench.js does (tsx's register(),
// which worker threads do not inherit) and runs the command; afterwards the real binary.
const LAUNCHER = `const { register } = await import(${JSON.stringify(`${ROOT}node_modules/tsx/dist/esm/api/index.mjs`)}); register();
const { command } = await import(${JSON.stringify(`${ROOT}src/cli/commands/serve.ts`)});
const { processIo } = await import(${JSON.stringify(`${ROOT}src/cli/io.ts`)});
process.exitCode = await command.run(process.argv.slice(2), processIo());`;

test('`lm-bench serve` runs its worker threads from the real CLI and stops cleanly on SIGTERM', { timeout: 90_000 }, async (t) => {
  const db = tempDb(t);
  await seedTrainedDb(db);
  const args = ['--port', '0', '--db', db, '--quiet'];
  // A file, not `node -e`: workers inherit execArgv, and `-e <script>` must not be among them.
  const launcher = join(dirname(db), 'launch.mjs');
  writeFileSync(launcher, LAUNCHER);
  const argv = isCommandName('serve') ? [`${ROOT}bin/lm-bench.js`, 'serve', ...args] : [launcher, ...args];
  const child = spawn(process.execPath, argv, { cwd: ROOT, env: { ...process.env, LMB_API_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m?.[1] !== undefined) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${String(code)}: ${stderr}`)));
  });

  // The recommendation worker (src/http/recommend-worker.mjs) under the CLI's tsx mode.
  const rec = await request(`${url}/v1/recommendations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat', candidates: 300 }),
  });
  const recBody = (await rec.body.json()) as { surrogate_id: number };
  assert.equal(rec.statusCode, 200, JSON.stringify(recBody));
  assert.equal(recBody.surrogate_id, 1);

  // The model-fitting pool (src/workers) under the same mode.
  const train = await request(`${url}/v1/models/train`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...AUTH },
    body: JSON.stringify({ folds: 0, members: 1, rounds: 5 }),
  });
  const trainBody = (await train.body.json()) as { model: { id: number } };
  assert.equal(train.statusCode, 201, JSON.stringify(trainBody));
  assert.equal(trainBody.model.id, 2);

  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0, stderr);
});
