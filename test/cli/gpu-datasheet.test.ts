import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { openStore } from '../../src/store/index.js';
import { runCli, type CliRun } from '../helpers/cli.js';

// `--gpu FILE.yaml` end to end through real child processes and real SQLite files: the datasheet
// rides in the study's spec, so the trials' worker threads price it, and a resume, the report and
// `recommend` still find the GPU after the file is deleted.


function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-gpu-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// LMB_DB points into the temp dir: every command here names --db, and nothing may touch the user's.
const cli = (args: readonly string[], dir: string): Promise<CliRun> => runCli(args, { cwd: PROJECT_ROOT, env: { HF_HUB_OFFLINE: '1', LMB_DB: join(dir, 'unused.db') } });

/** A made-up 96 GB PCIe card no catalog lists. */
const DATASHEET = 'name: Acme Tensor 96\nmemory_gb: 96\nhbm_bandwidth_gbs: 2000\nbf16_tflops: 600\nfp8_tflops: 1200\ninterconnect: { kind: pcie, bandwidth_gbs: 128 }\ntdp_w: 600\n';

function workloadFile(dir: string): string {
  const file = join(dir, 'small.yaml');
  writeFileSync(
    file,
    [
      'name: small-chat',
      'api: completions',
      'input_len: { dist: lognormal, mean: 256, std: 128, min: 16, max: 1024 }',
      'output_len: { dist: lognormal, mean: 64, std: 32, min: 8, max: 256 }',
      'arrival: { kind: closed, concurrency: 16 }',
      'num_prompts: 80',
      'slo: { ttft_p99_ms: 3000, itl_p99_ms: 200 }',
    ].join('\n'),
  );
  return file;
}

function studyOf(db: string, name: string) {
  const store = openStore(db, { readonly: true });
  try {
    const s = store.findStudy(name);
    return s === null ? null : { spec: s.spec, trials: store.listTrials(s.id), runs: store.listRuns({ gpu: s.spec.hardware.gpu }) };
  } finally {
    store.close();
  }
}

test('tune --gpu DATASHEET.yaml runs its trials in worker threads; with the file deleted the study resumes, reports and answers on the stored datasheet; another datasheet under its id is refused', { timeout: 300_000 }, async (t) => {
  const dir = tempDir(t);
  const gpuYaml = join(dir, 'acme-96.yaml');
  writeFileSync(gpuYaml, DATASHEET);
  const workload = workloadFile(dir);
  const db = join(dir, 'history.db');
  const deployment = ['--gpu', gpuYaml, '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--budget-trials', '4', '--parallel', '2', '--seed', '3'];

  const first = await cli(['tune', '--study', 'acme', '--db', db, '--no-report', '--json', ...deployment], dir);
  assert.equal(first.status, 0, first.stderr);
  const a = studyOf(db, 'acme');
  assert.ok(a !== null);
  assert.equal(a.spec.hardware.gpu, 'acme-96');
  assert.equal(a.spec.hardware_spec?.id, 'acme-96');
  assert.equal(a.spec.hardware_spec?.memory_gb, 96);
  assert.equal(a.spec.hardware_spec?.hbm_bandwidth_gbs, 2000);
  assert.equal(a.spec.hardware_spec?.source, `datasheet figures from ${gpuYaml}`);
  // The sim target measures every trial in a piscina worker thread, whose catalog has only data/hardware.yaml.
  assert.deepEqual(a.trials.map((x) => [x.state, x.failure_reason]), a.trials.map(() => ['complete', null]), 'every trial was measured on the carried datasheet');
  assert.equal(a.trials.length, 4);
  assert.equal(a.runs.length, 4, 'the runs are filed under the datasheet’s id');

  // As a controller killed mid-trial leaves it: the last trial still `running`, its result never recorded.
  const last = a.trials.at(-1);
  assert.ok(last !== undefined);
  const raw = new Database(db);
  try {
    raw.prepare(`UPDATE trials SET state = 'running', result = NULL, finished_at_ms = NULL, started = NULL WHERE id = ?`).run(last.id);
    raw.prepare(`DELETE FROM trial_values WHERE trial_id = ?`).run(last.id);
  } finally {
    raw.close();
  }
  rmSync(gpuYaml);

  const resumed = await cli(['tune', '--study', 'acme', '--db', db, '--no-report', '--json'], dir);
  assert.equal(resumed.status, 0, resumed.stderr);
  assert.equal((JSON.parse(resumed.stdout) as { stop_reason: string }).stop_reason, 'budget');
  const b = studyOf(db, 'acme');
  assert.ok(b !== null);
  assert.deepEqual(b.spec, a.spec, 'the study keeps the datasheet it began with');
  const retry = b.trials.find((x) => x.attrs['retry_of'] === last.id);
  assert.ok(retry !== undefined, 'the orphaned trial was queued again');
  assert.equal(retry.state, 'complete', `the re-run trial was measured in a worker thread: ${retry.failure_reason ?? ''}`);
  assert.equal(b.trials.filter((x) => x.state === 'complete').length, 4);

  const out = join(dir, 'report');
  const report = await cli(['report', '--study', 'acme', '--db', db, '--out', out], dir);
  assert.equal(report.status, 0, report.stderr);
  assert.ok(existsSync(join(out, 'report.html')));

  // Named by its id only: the history holds the datasheet.
  const rec = await cli(['recommend', '--gpu', 'acme-96', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--candidates', '2000', '--db', db, '--json'], dir);
  assert.equal(rec.status, 0, rec.stderr);
  const answer = JSON.parse(rec.stdout) as { vllm_command: string | null; enqueue_command: string | null };
  assert.ok(answer.vllm_command?.startsWith('vllm serve '), answer.vllm_command ?? 'no pick');
  assert.match(answer.enqueue_command ?? '', /--gpu acme-96 /);

  // Other figures under the same id would share the first GPU's runs and surrogates: refused, nothing stored.
  const other = join(dir, 'elsewhere');
  mkdirSync(other);
  writeFileSync(join(other, 'acme-96.yaml'), DATASHEET.replace('memory_gb: 96', 'memory_gb: 48'));
  const clash = await cli(['tune', '--study', 'acme-48', '--db', db, '--no-report', '--json', ...deployment.map((x) => (x === gpuYaml ? join(other, 'acme-96.yaml') : x))], dir);
  assert.notEqual(clash.status, 0, clash.stdout);
  const refused = (JSON.parse(clash.stdout) as { error: { code: string; message: string; details: Record<string, unknown> } }).error;
  assert.equal(refused.code, 'LMB_ERR_INVALID_ARGUMENT');
  assert.equal(refused.details['field'], 'gpu');
  assert.match(refused.message, /"acme-96" is filed in this history with other datasheet figures \(study "acme"\)/);
  assert.equal(studyOf(db, 'acme-48'), null, 'the refused study stored nothing');
  const clashRec = await cli(['recommend', '--gpu', join(other, 'acme-96.yaml'), '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--candidates', '2000', '--db', db, '--json'], dir);
  assert.notEqual(clashRec.status, 0);
  assert.match(clashRec.stdout, /other datasheet figures/);
  // The same figures from another path are the same GPU.
  writeFileSync(join(other, 'acme-96.yaml'), DATASHEET);
  const same = await cli(['recommend', '--gpu', join(other, 'acme-96.yaml'), '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', workload, '--candidates', '2000', '--db', db, '--json'], dir);
  assert.equal(same.status, 0, same.stderr);
});
