import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestFiles } from '../../src/ingest/index.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';
import { fixture } from './helpers.js';

// What ingest reports it stored (files[].stored), the --model override note, and what a directory walk
// passes over and why — on the real fixture files.

let dir: string;
let n = 0;
const freshStore = (): SqliteStore => openStore(join(dir, `db-${n++}.db`), { now: () => 1_700_000_000_000 });
const CTX = { serverConfig: { max_num_seqs: 256 }, gpu: 'H100-SXM' } as const;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-ingest-stored-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('ingest: what was stored', () => {
  it('one entry per run with its id and the figures as stored; a duplicate names the stored run', () => {
    const store = freshStore();
    const file = fixture('aiperf/v0.1.1-records/profile_export_aiperf.json');
    const s = ingestFiles(store, [file], { ...CTX, model: 'gpt-oss-20b' });
    assert.deepEqual(s.rejected, []);
    const f = s.files[0];
    const id = f?.run_ids[0];
    assert.ok(typeof id === 'number');
    assert.deepEqual(f?.stored, [{ run_id: id, completed: 89, failed: 11, duration_s: 9.317788951, mean_ttft_ms: 2343.219436988764, output_throughput: 2320.7222350404572 }]);
    // The stored row says the same.
    const run = store.getRun(id);
    assert.deepEqual([run.result.completed, run.result.failed, run.result.duration], [89, 11, 9.317788951]);
    const again = ingestFiles(store, [file], { ...CTX, model: 'gpt-oss-20b' });
    assert.deepEqual([again.accepted, again.skipped], [0, 1]);
    assert.deepEqual(again.files[0]?.stored.map((r) => r.run_id), [id], 'the duplicate points at the stored run');
    store.close();
  });

  it('null where the file has no such figure (SGLang 2024: no mean TTFT, no failure count)', () => {
    const store = freshStore();
    const s = ingestFiles(store, [fixture('sglang/llama_3_3_70b_output_online.jsonl')], { ...CTX, model: 'llama-3.1-70b', gpus: 8 });
    assert.deepEqual(s.rejected, []);
    const stored = s.files[0]?.stored ?? [];
    assert.equal(stored.length, 5);
    assert.deepEqual(
      stored.map((r) => [r.completed, r.failed, r.mean_ttft_ms]),
      [300, 600, 1200, 2400, 3200].map((c) => [c, null, null]),
    );
    assert.equal(stored[0]?.duration_s, 298.36731477989815);
    store.close();
  });

  it('--model replacing the model a file names says so; the same model under another name does not', () => {
    const store = freshStore();
    const replaced = ingestFiles(store, [fixture('aiperf/v0.10.0-schema1.3/profile_export_aiperf.json')], { ...CTX, model: 'qwen3-30b-a3b' });
    assert.deepEqual(replaced.rejected, []);
    assert.ok(replaced.files[0]?.warnings.includes('--model overrides the file\'s model "qwen3.6-nvfp4": runs stored as qwen3-30b-a3b'), JSON.stringify(replaced.files[0]?.warnings));
    const same = ingestFiles(store, [fixture('aiperf/v0.1.1-records/profile_export_aiperf.json')], { ...CTX, model: 'gpt-oss-20b' });
    assert.ok(!(same.files[0]?.warnings ?? []).some((w) => w.includes('overrides the file')), 'openai/gpt-oss-20b is gpt-oss-20b');
    const noModel = ingestFiles(store, [fixture('aiperf/v0.1.1-records/profile_export_aiperf.json')], CTX);
    assert.equal(noModel.rejected.length, 0, 'the file\'s own model is used without --model');
    store.close();
  });

  it('a walk reads YAML and CSV results, passes over the CSV beside its JSON and other files, saying why', () => {
    const store = freshStore();
    const root = join(dir, 'walk');
    mkdirSync(join(root, 'aiperf'), { recursive: true });
    mkdirSync(join(root, 'guidellm'), { recursive: true });
    copyFileSync(fixture('aiperf/v0.1.1-records/profile_export_aiperf.json'), join(root, 'aiperf', 'profile_export_aiperf.json'));
    copyFileSync(fixture('aiperf/v0.1.1-records/profile_export_aiperf.csv'), join(root, 'aiperf', 'profile_export_aiperf.csv'));
    copyFileSync(fixture('guidellm/v0.4-from-file/benchmarks_stripped.yaml'), join(root, 'guidellm', 'benchmarks.yaml'));
    copyFileSync(fixture('guidellm/v0.8.0.dev18-csv/benchmarks.csv'), join(root, 'guidellm', 'other.csv'));
    writeFileSync(join(root, 'config.yaml'), 'load:\n  type: constant\n');
    writeFileSync(join(root, 'notes.md'), '# notes\n');
    const s = ingestFiles(store, [root], { ...CTX, model: 'llama-3.1-8b' });
    assert.deepEqual(s.rejected, []);
    assert.deepEqual(s.files.map((f) => [f.path.slice(root.length + 1), f.format, f.accepted]), [
      ['aiperf/profile_export_aiperf.json', 'aiperf', 1],
      ['guidellm/benchmarks.yaml', 'guidellm', 1],
      ['guidellm/other.csv', 'guidellm', 2],
    ]);
    const why = new Map(s.passed_over.map((p) => [p.path.slice(root.length + 1), p.reason]));
    assert.match(why.get('aiperf/profile_export_aiperf.csv') ?? '', /same results as profile_export_aiperf\.json/);
    assert.match(why.get('config.yaml') ?? '', /run configuration/);
    assert.match(why.get('notes.md') ?? '', /not a result format.*\.md/);
    assert.deepEqual(s.ignored, [], '`ignored` lists JSON companions only; the rest is in passed_over with the reason');
    store.close();
  });

  it('an inference-perf report folder: one run per stage; the summary pooling them is passed over', () => {
    const store = freshStore();
    const s = ingestFiles(store, [fixture('inference-perf/kubecon-na-2025-batch_size')], { ...CTX, model: 'llama-3.1-8b' });
    assert.deepEqual(s.rejected, []);
    assert.deepEqual(s.files.map((f) => f.path.split('/').pop()), ['stage_0_lifecycle_metrics.json']);
    assert.match(s.passed_over.find((p) => p.path.endsWith('summary_lifecycle_metrics.json'))?.reason ?? '', /summary of the stage reports/);
    store.close();
  });

  it('an explicitly named CSV beside its JSON is read', () => {
    const store = freshStore();
    const s = ingestFiles(store, [fixture('aiperf/v0.8.0-schema1.0/profile_export_aiperf.csv')], { ...CTX, model: 'llama-3.1-8b' });
    assert.deepEqual(s.rejected, []);
    assert.equal(s.files[0]?.stored[0]?.completed, 481414);
    assert.equal(s.files[0]?.stored[0]?.failed, 18586);
    store.close();
  });
});
