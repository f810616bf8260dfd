/**
 * The bad-input corpus through the real binary (`node bin/lm-bench.js`): a handful of cases whose exit
 * status, stdout and stderr are those of a process, so nothing the in-process runs cannot see (an
 * uncaught exception, an abort, a stack trace printed by Node itself) goes unnoticed. They run in
 * parallel, each with a time limit.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import type { CliCase, CliRun } from './cli-harness.js';
import { expand, judgeCli } from './cli-harness.js';
import { generatedInputs } from './generate.js';
import { flushVerdicts, formatVerdict, makeSandbox, record, tableCounts, type Sandbox, type Verdict } from './harness.js';

interface SpawnCase extends CliCase {
  /** NODE_OPTIONS for the child, e.g. a small heap so a runaway allocation dies fast. */
  readonly nodeOptions?: string;
}

const SPACE = ['space', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', '$W'];
export const SPAWN_CASES: readonly SpawnCase[] = [
  { id: 'spawn-unknown-command', argv: ['frobnicate'], code: 'LMB_ERR_UNKNOWN_COMMAND', names: /"frobnicate"/ },
  { id: 'spawn-tune-gpus-nan', argv: ['tune', '--study', 's', '--gpu', 'H100-SXM', '--gpus', 'NaN', '--model', 'llama-3.1-8b', '--workload', '$W', '--budget-trials', '1', '--db', '$DB'], code: 'LMB_ERR_INVALID_ARGUMENT', names: /--gpus.*"NaN"/ },
  { id: 'spawn-tune-unknown-flag-json', argv: ['tune', '--bogus'], json: true, code: 'LMB_ERR_INVALID_ARGUMENT', names: /--bogus/ },
  { id: 'spawn-run-config-yaml-bomb', argv: ['run', '--endpoint', 'http://127.0.0.1:9/v1/completions', '--dry-run', '--config', '$F/wl-yaml-bomb.yaml'], code: 'LMB_ERR_CONFIG_INVALID', names: /wl-yaml-bomb\.yaml/ },
  { id: 'spawn-serve-config-syntax', argv: ['serve', '--config', '$F/svc-syntax.yaml', '--db', '$DB', '--quiet'], code: 'LMB_ERR_CONFIG_INVALID', names: /svc-syntax\.yaml:3/ },
  { id: 'spawn-ingest-server-config-directory', argv: ['ingest', '$FX/vllm-serve-2025.json', '--gpu', 'H100-SXM', '--server-config', '$F/', '--db', '$DB'], code: ['LMB_ERR_FILE_NOT_FOUND', 'LMB_ERR_CONFIG_INVALID', 'LMB_ERR_INVALID_ARGUMENT'], names: /bad-inputs\/files/ },
  {
    id: 'spawn-space-int-range-unbounded-grid',
    argv: [...SPACE, '--space', '$F/space-huge-range.yaml'],
    code: 'LMB_ERR_SPACE_INVALID',
    names: /space-huge-range\.yaml:\d+.*max_num_seqs/,
    nodeOptions: '--max-old-space-size=256',
  },
];

const LIMIT_MS = 60_000;
let sb: Sandbox;
const verdicts = new Map<string, Verdict>();

function spawnCase(c: SpawnCase): Promise<CliRun> {
  const argv = [...expand(c.argv, sb, sb.db), ...(c.json === true ? ['--json'] : [])];
  const before = tableCounts(sb.db);
  const env: NodeJS.ProcessEnv = { ...process.env, LMB_DB: sb.db, LMB_LOOPBACK_ONLY: '1' };
  delete env['LMB_DEBUG'];
  if (c.nodeOptions !== undefined) env['NODE_OPTIONS'] = c.nodeOptions;
  return new Promise((done) => {
    execFile(process.execPath, [join(PROJECT_ROOT, 'bin', 'lm-bench.js'), ...argv], { cwd: sb.dir, env, timeout: LIMIT_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: number | string; signal?: string | null; killed?: boolean }) | null;
      const exit = e === null ? 0 : typeof e.code === 'number' ? e.code : e.signal === 'SIGKILL' && e.killed === true ? -2 : 128;
      const note = e?.killed === true ? `\n[killed after ${LIMIT_MS / 1000} s]` : e?.signal ? `\n[terminated by ${e.signal}]` : '';
      done({ exit, stdout, stderr: `${stderr}${note}`, before, after: tableCounts(sb.db) });
    });
  });
}

before(async () => {
  sb = makeSandbox('spawn');
  generatedInputs(sb.dir);
  // The spawned runs share one seeded file; none of them may write, so their counts stay comparable.
  const runs = await Promise.all(SPAWN_CASES.map(async (c) => [c, await spawnCase(c)] as const));
  for (const [c, r] of runs) verdicts.set(c.id, judgeCli(c, r));
});
after(() => {
  for (const v of verdicts.values()) record(v);
  flushVerdicts('spawn');
  sb.cleanup();
});

describe('bad inputs: the real binary', () => {
  for (const c of SPAWN_CASES) {
    it(c.id, () => {
      const v = verdicts.get(c.id);
      assert.ok(v !== undefined, 'no verdict');
      assert.equal(v.category, 'clear', formatVerdict(v));
    });
  }
});
