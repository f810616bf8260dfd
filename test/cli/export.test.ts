import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { STAT_KEYS } from '../../src/domain/index.js';
import type { ExportReport } from '../../src/export/types.js';
import { openStore, runMetric, type RunRecord } from '../../src/store/index.js';
import { at, brSchemaErrors } from '../export/br-schema.js';
import { SMALL_CHAT_WORKLOAD_YAML } from '../helpers/workloads.js';
import { runCli, type CliRun } from '../helpers/cli.js';

// `lm-bench export` end to end through real child processes and real SQLite files: a study run on the
// simulator and ingested runs, exported in both formats; the vllm files ingested back into a fresh
// history with the same figures, config, GPU and model; bad input fails with its code, writes nothing
// and leaves the history as it was.

const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'ingest');

// LMB_DB points into the temp dir: every command here names --db, and nothing may touch the user's.
const cli = (args: readonly string[], cwd: string): Promise<CliRun> => runCli(args, { cwd, env: { HF_HUB_OFFLINE: '1', LMB_DB: join(cwd, 'unused.db') } });

let dir: string;
let db: string;
const sha = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-export-cli-'));
  db = join(dir, 'history.db');
  writeFileSync(join(dir, 'small.yaml'), SMALL_CHAT_WORKLOAD_YAML);
  const tune = await cli(['tune', '--study', 'chat', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'small.yaml', '--target', 'sim', '--budget-trials', '2', '--seed', '2', '--no-report', '--db', db], dir);
  assert.equal(tune.status, 0, tune.stderr);
  const ingest = await cli(['ingest', join(FIXTURES, 'vllm-serve-newest.json'), join(FIXTURES, 'guidellm-v0.5.json'), '--gpu', 'H100-SXM', '--model', 'llama-3.1-8b', '--set', 'max_num_seqs=64', '--db', db], dir);
  assert.equal(ingest.status, 0, ingest.stdout + ingest.stderr);
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('lm-bench export', () => {
  it("--study --format llm-d-br --json: one valid report per complete trial, named predictably", async () => {
    const r = await cli(['export', '--study', 'chat', '--format', 'llm-d-br', '--out', 'br', '--db', db, '--json'], dir);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as ExportReport;
    assert.equal(report.format, 'llm-d-br');
    assert.equal(report.out, join(dir, 'br'));
    assert.deepEqual(
      report.files.map((f) => [f.path, f.study, f.trial, f.format]),
      [0, 1].map((n) => [join(dir, 'br', `benchmark_report_v0.2,_chat-trial-${n}.yaml`), 'chat', n, 'llm-d-br']),
    );
    assert.equal(report.summary, null);
    assert.deepEqual(readdirSync(join(dir, 'br')).sort(), report.files.map((f) => f.path.split('/').pop()).sort(), 'nothing else, no staging folder');
    const store = openStore(db, { readonly: true });
    try {
      const trials = store.listTrials(store.getStudy('chat').id);
      for (const f of report.files) {
        const doc: unknown = parse(readFileSync(f.path, 'utf8'));
        assert.deepEqual(brSchemaErrors(doc), [], f.path);
        const t = trials.find((x) => x.number === f.trial);
        const aggregate = (...p: string[]): unknown => at(doc, 'results', 'request_performance', 'aggregate', ...p);
        assert.equal(aggregate('latency', 'time_to_first_token', 'p99'), t?.result?.p99_ttft_ms);
        assert.equal(aggregate('throughput', 'output_token_rate', 'mean'), t?.result?.output_throughput);
      }
    } finally {
      store.close();
    }
  });

  it('--runs … --format vllm, then `ingest` of the folder: the same runs come back with the same figures and context', async () => {
    const r = await cli(['export', '--runs', 'gpu=H100-SXM,source_format=guidellm,config.max_num_seqs=64', '--format', 'vllm', '--out', 'v', '--db', db, '--json'], dir);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as ExportReport;
    assert.equal(report.files.length, 3, 'the three GuideLLM benchmarks');
    assert.ok(report.files.every((f) => f.run_id !== undefined && f.sidecar === `${f.path}.config.yaml` && existsSync(f.sidecar)));
    assert.equal(report.summary, join(dir, 'v', 'summary.json'));
    assert.equal((JSON.parse(readFileSync(join(dir, 'v', 'summary.json'), 'utf8')) as unknown[]).length, 3);

    const back = join(dir, 'back.db');
    const ingest = await cli(['ingest', 'v', '--db', back, '--json'], dir);
    assert.equal(ingest.status, 0, ingest.stdout + ingest.stderr);
    const summary = JSON.parse(ingest.stdout) as { accepted: number; files: { path: string; format: string; run_ids: number[] }[]; ignored: string[] };
    assert.equal(summary.accepted, 3);
    assert.ok(summary.files.every((f) => f.format === 'vllm_bench_serve'));
    assert.deepEqual(summary.ignored, [join(dir, 'v', 'summary.json')], 'summary.json is a companion, not a run');
    const orig = openStore(db, { readonly: true });
    const copy = openStore(back, { readonly: true });
    try {
      for (const f of report.files) {
        const a: RunRecord = orig.getRun(f.run_id as number);
        const runId = summary.files.find((x) => x.path === f.path)?.run_ids[0];
        assert.ok(runId !== undefined, f.path);
        const b = copy.getRun(runId);
        assert.deepEqual(b.server_config, a.server_config);
        assert.deepEqual(b.hardware, a.hardware);
        assert.equal(b.model, a.model);
        for (const key of ['completed', 'failed', 'duration', 'total_input_tokens', 'total_output_tokens', 'request_throughput', 'output_throughput', ...STAT_KEYS]) {
          assert.equal(runMetric(b, key), runMetric(a, key), `run ${a.id} ${key}`);
        }
      }
    } finally {
      orig.close();
      copy.close();
    }
  });

  it('human output names the files; --runs all takes every run', async () => {
    const r = await cli(['export', '--runs', 'all', '--format', 'vllm', '--out', 'all', '--db', db], dir);
    assert.equal(r.status, 0, r.stderr);
    // Two trials (stored as runs too), one vllm run, three GuideLLM benchmarks.
    assert.match(r.stdout, /^6 file\(s\) as `vllm bench serve` result JSON in all:\n/);
    assert.match(r.stdout, /all\/run-1\.json \(\+ all\/run-1\.json\.config\.yaml\)/);
    assert.match(r.stdout, /all\/summary\.json/);
    // A model by its Hugging Face name resolves to the history's id, as GET /v1/runs?model= does.
    const byModel = await cli(['export', '--runs', 'model=meta-llama/Llama-3.1-8B-Instruct,gpus=1', '--format', 'llm-d-br', '--out', 'm', '--db', db, '--json'], dir);
    assert.equal(byModel.status, 0, byModel.stderr);
    assert.equal((JSON.parse(byModel.stdout) as ExportReport).files.length, 6);
  });

  it('bad input: its code, non-zero exit, nothing written, the history unchanged', async () => {
    const before = sha(db);
    const cases: [string[], number, RegExp][] = [
      [['--study', 'nope', '--format', 'vllm'], 2, /LMB_ERR_STUDY_NOT_FOUND/],
      [['--runs', 'gpu', '--format', 'vllm'], 2, /LMB_ERR_INVALID_ARGUMENT: --runs: "gpu" is not key=value/],
      [['--runs', 'config.bogus=1', '--format', 'vllm'], 2, /LMB_ERR_UNKNOWN_KNOB/],
      [['--runs', 'gpu=TPU-v9', '--format', 'vllm'], 2, /LMB_ERR_UNKNOWN_GPU/],
      [['--runs', 'gpus=8', '--format', 'vllm'], 2, /LMB_ERR_NOT_FOUND: no stored run matches --runs gpus=8/],
      [['--study', 'chat', '--format', 'csv'], 2, /LMB_ERR_INVALID_ARGUMENT: --format must be one of llm-d-br, vllm, got "csv"/],
      [['--study', 'chat', '--runs', 'all', '--format', 'vllm'], 2, /give one of --study NAME or --runs FILTER/],
      [['--format', 'vllm'], 2, /give one of --study NAME or --runs FILTER/],
    ];
    for (const [args, status, message] of cases) {
      const r = await cli(['export', ...args, '--out', 'bad', '--db', db], dir);
      assert.equal(r.status, status, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
      assert.equal(existsSync(join(dir, 'bad')), false, `${args.join(' ')} wrote nothing`);
    }
    const missingDb = await cli(['export', '--study', 'chat', '--format', 'vllm', '--out', 'bad', '--db', 'absent.db'], dir);
    assert.equal(missingDb.status, 2);
    assert.match(missingDb.stderr, /LMB_ERR_FILE_NOT_FOUND: no history database at .*absent\.db/);
    assert.equal(existsSync(join(dir, 'absent.db')), false, 'a missing history is not created');

    writeFileSync(join(dir, 'a-file'), 'x');
    const unwritable = await cli(['export', '--study', 'chat', '--format', 'llm-d-br', '--out', 'a-file/out', '--db', db, '--json'], dir);
    assert.equal(unwritable.status, 2);
    const err = (JSON.parse(unwritable.stdout) as { error: { code: string; details: { field: string } } }).error;
    assert.equal(err.code, 'LMB_ERR_INVALID_ARGUMENT');
    assert.equal(err.details.field, 'out');
    assert.equal(sha(db), before, 'the history is read, never written');
  });

  // Last: it ingests into the tests' history (nothing is stored, but the file may be touched).
  it("a study's export ingested into its own history is recognised as the trials' runs, not stored again", async () => {
    for (const format of ['vllm', 'llm-d-br']) {
      const out = `study-again-${format}`;
      const r = await cli(['export', '--study', 'chat', '--format', format, '--out', out, '--db', db], dir);
      assert.equal(r.status, 0, r.stderr);
      const back = await cli(['ingest', out, '--db', db, '--json'], dir);
      assert.equal(back.status, 0, back.stdout + back.stderr);
      const summary = JSON.parse(back.stdout) as { accepted: number; skipped: number };
      assert.deepEqual([summary.accepted, summary.skipped], [0, 2], `${format}: both trials already stored`);
    }
    const store = openStore(db, { readonly: true });
    try {
      assert.equal(store.listRuns({ sourceFormat: 'lm_bench' }).length, 2, 'the two trials, once each');
    } finally {
      store.close();
    }
  });
});
