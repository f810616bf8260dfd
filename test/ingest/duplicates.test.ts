import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { ingestFiles } from '../../src/ingest/index.js';
import { openStore, type RunRecord } from '../../src/store/index.js';
import { fixture } from './helpers.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-ingest-dup-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every run of a history file, as stored (a rejected ingest must leave them byte for byte). */
function runsOf(db: string): RunRecord[] {
  const store = openStore(db);
  try {
    return store.listRuns();
  } finally {
    store.close();
  }
}

describe('ingest: a run already stored', () => {
  it('with the same context is skipped without a word; under another context the file is refused and the history left as it was', () => {
    const db = join(dir, 'refuse.db');
    const file = fixture('vllm-serve-2025.json');
    const ctx = { serverConfig: { max_num_seqs: 128 }, gpu: 'A100-80GB', model: 'llama-3.1-8b' };
    let store = openStore(db);
    const first = ingestFiles(store, [file], ctx);
    assert.equal(first.accepted, 1);
    const id = first.files[0]?.run_ids[0];

    const same = ingestFiles(store, [file], ctx);
    assert.equal(same.skipped, 1);
    assert.equal(same.files[0]?.status, 'skipped');
    assert.deepEqual(same.files[0]?.stored.map((r) => r.run_id), [id]);
    assert.deepEqual(same.files[0]?.warnings.filter((w) => /another context/.test(w)), []);
    store.close();
    const before = runsOf(db);

    // A corrected GPU and config: the figures cannot have been measured under both, so nothing is stored
    // and the user is told which run holds them, what differs and how to replace it.
    store = openStore(db);
    const fixed = ingestFiles(store, [file], { ...ctx, serverConfig: { max_num_seqs: 64, enforce_eager: true }, gpu: 'H100-SXM' });
    store.close();
    assert.equal(fixed.files[0]?.status, 'rejected');
    assert.equal(fixed.accepted + fixed.skipped, 0);
    assert.deepEqual(fixed.rejected.map((r) => r.code), ['LMB_ERR_INGEST_REJECTED']);
    const reason = fixed.rejected[0]?.reason ?? '';
    assert.ok(
      reason.includes(`run #${String(id)} has GPUs 1× A100-80GB (this ingest: 1× H100-SXM), enforce_eager=unset max_num_seqs=128 (this ingest: enforce_eager=true max_num_seqs=64)`),
      reason,
    );
    assert.match(reason, /--replace/);
    assert.deepEqual(runsOf(db), before);
  });

  it('reads an unset knob as vLLM default for the GPU and model: stating the default is the same context', () => {
    const store = openStore(join(dir, 'defaults.db'));
    const file = fixture('vllm-serve-2025.json');
    const on = (serverConfig: Record<string, number | boolean>) => ({ serverConfig, gpu: 'H100-SXM', model: 'llama-3.1-8b' });
    assert.equal(ingestFiles(store, [file], on({ enable_prefix_caching: true })).accepted, 1);
    // An llm-d report states tensor_parallel_size 1; vllm serve on an H100 defaults to 1,024 sequences.
    const same = ingestFiles(store, [file], on({ tensor_parallel_size: 1, max_num_seqs: 1024, block_size: 16 }));
    assert.deepEqual([same.skipped, same.rejected], [1, []]);
    const other = ingestFiles(store, [file], on({ enable_prefix_caching: true, max_num_seqs: 256 }));
    assert.equal(other.files[0]?.status, 'rejected');
    assert.match(other.rejected[0]?.reason ?? '', /has max_num_seqs=unset \(this ingest: max_num_seqs=256\); nothing stored/);
    assert.equal(store.countRuns(), 1);
    store.close();
  });

  it('refuses a file of many runs whole when one of them is stored under another context', () => {
    const db = join(dir, 'many.db');
    const jsonl = fixture('vllm-serve-append.jsonl');
    const lines = readFileSync(jsonl, 'utf8').split('\n').filter((l) => l.trim() !== '');
    assert.ok(lines.length >= 2, 'the fixture holds several runs');
    const one = join(dir, 'one.jsonl');
    writeFileSync(one, `${lines[1] ?? ''}\n`);
    const store = openStore(db);
    // The second run of the file first, on the A100.
    assert.equal(ingestFiles(store, [one], { serverConfig: { max_num_seqs: 128 }, gpu: 'A100-80GB', model: 'llama-3.1-8b' }).accepted, 1);
    const before = store.listRuns();
    // The whole file on the H100: its first run is new, its second conflicts; the first is not stored either.
    const all = ingestFiles(store, [jsonl], { serverConfig: { max_num_seqs: 128 }, gpu: 'H100-SXM', model: 'llama-3.1-8b' });
    assert.equal(all.files[0]?.status, 'rejected');
    assert.match(all.rejected[0]?.reason ?? '', new RegExp(`run #${String(before[0]?.id)} has GPUs 1× A100-80GB \\(this ingest: 1× H100-SXM\\)`));
    assert.deepEqual(store.listRuns(), before);
    store.close();
  });

  it('with --replace, the stored run takes the new context: same id and figures, the old context in its notes', () => {
    const db = join(dir, 'replace.db');
    const file = fixture('vllm-serve-2025.json');
    let store = openStore(db, { now: () => Date.UTC(2026, 0, 2) });
    const first = ingestFiles(store, [file], { serverConfig: { max_num_seqs: 128 }, gpu: 'A100-80GB', model: 'llama-3.1-8b' });
    const id = first.files[0]?.run_ids[0] ?? -1;
    const was = store.getRun(id);
    store.close();

    store = openStore(db, { now: () => Date.UTC(2026, 0, 3) });
    const fixed = ingestFiles(store, [file], { serverConfig: { max_num_seqs: 256 }, gpu: 'H100-SXM', model: 'llama-3.1-8b', replace: true });
    assert.equal(fixed.rejected.length, 0, JSON.stringify(fixed.rejected));
    assert.deepEqual({ status: fixed.files[0]?.status, accepted: fixed.accepted, skipped: fixed.skipped, replaced: fixed.replaced }, { status: 'accepted', accepted: 0, skipped: 1, replaced: 1 });
    assert.deepEqual(fixed.files[0]?.replaced_ids, [id]);
    assert.deepEqual(fixed.files[0]?.stored.map((r) => r.run_id), [id]);
    assert.ok(fixed.files[0]?.warnings.some((w) => w.includes(`run #${id}`) && w.includes('GPUs 1× A100-80GB, model llama-3.1-8b, server config max_num_seqs=128')), JSON.stringify(fixed.files[0]?.warnings));
    const now = store.getRun(id);
    assert.equal(store.countRuns(), 1);
    store.close();

    assert.deepEqual(now.hardware, { gpu: 'H100-SXM', count: 1 });
    assert.deepEqual(now.server_config, { max_num_seqs: 256 });
    // The copy of the context inside the result follows, so nothing reads the old one from there.
    assert.deepEqual([now.result.hardware, now.result.server_config, now.result.model], [{ gpu: 'H100-SXM', count: 1 }, { max_num_seqs: 256 }, 'llama-3.1-8b']);
    // Figures, workload, provenance and the time it was first stored stay.
    const { server_config: _c, hardware: _h, model: _m, ...figures } = now.result;
    const { server_config: _c0, hardware: _h0, model: _m0, ...figuresWas } = was.result;
    assert.deepEqual(figures, figuresWas);
    assert.deepEqual([now.workload, now.content_hash, now.source_path, now.created_at_ms], [was.workload, was.content_hash, was.source_path, was.created_at_ms]);
    assert.deepEqual(now.meta.notes.slice(0, -1), was.meta.notes);
    assert.equal(now.meta.notes.at(-1), 'context replaced 2026-01-03T00:00:00.000Z (ingest --replace): was GPUs 1× A100-80GB, model llama-3.1-8b, server config max_num_seqs=128');

    // The corrected context again: an ordinary duplicate.
    store = openStore(db);
    const again = ingestFiles(store, [file], { serverConfig: { max_num_seqs: 256 }, gpu: 'H100-SXM', model: 'llama-3.1-8b' });
    assert.deepEqual({ status: again.files[0]?.status, skipped: again.skipped, replaced: again.replaced }, { status: 'skipped', skipped: 1, replaced: 0 });
    store.close();
  });

  it('bin/lm-bench.js ingest: --set gpu... then another --set is exit 1 naming the run, --replace stores the correction', async () => {
    const db = join(dir, 'spawned.db');
    const file = fixture('vllm-serve-2025.json');
    const run = (extra: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
        const child = execFile(process.execPath, [join(PROJECT_ROOT, 'bin', 'lm-bench.js'), 'ingest', file, '--db', db, ...extra], { cwd: dir, timeout: 60_000 }, (_err, stdout, stderr) =>
          done({ code: child.exitCode, stdout, stderr }),
        );
      });
    const first = await run(['--model', 'llama-3.1-8b', '--gpu', 'H100-SXM', '--set', 'max_num_seqs=128']);
    assert.equal(first.code, 0, first.stderr);
    const before = runsOf(db);
    assert.equal(before.length, 1);
    const id = before[0]?.id ?? -1;

    const other = await run(['--model', 'llama-3.1-8b', '--gpu', 'A100-80GB', '--set', 'max_num_seqs=128']);
    assert.equal(other.code, 1, other.stdout);
    assert.match(other.stdout, /0 run\(s\) accepted, 0 skipped as already stored, 1 file\(s\) rejected/);
    assert.match(other.stdout, new RegExp(`rejected .*vllm-serve-2025\\.json: LMB_ERR_INGEST_REJECTED already stored under another context: run #${id} has GPUs 1× H100-SXM \\(this ingest: 1× A100-80GB\\).*--replace`));
    assert.deepEqual(runsOf(db), before);

    const replaced = await run(['--model', 'llama-3.1-8b', '--gpu', 'A100-80GB', '--set', 'max_num_seqs=128', '--replace', '--json']);
    assert.equal(replaced.code, 0, replaced.stderr);
    const doc = JSON.parse(replaced.stdout) as { accepted: number; skipped: number; replaced: number; files: { replaced_ids: number[] }[] };
    assert.deepEqual([doc.accepted, doc.skipped, doc.replaced, doc.files[0]?.replaced_ids], [0, 1, 1, [id]]);
    const after = runsOf(db);
    assert.deepEqual([after.length, after[0]?.id, after[0]?.hardware.gpu], [1, id, 'A100-80GB']);

    // A model from a config.json, given by --replace alone: its spec is stored with the run that names it.
    const checkpoint = join(dir, 'ckpt');
    mkdirSync(checkpoint);
    const config = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test', 'fixtures', 'hf-configs', 'qwen2.5-32b-instruct.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(checkpoint, 'config.json'), JSON.stringify({ ...config, num_hidden_layers: 48 }));
    const own = await run(['--model', checkpoint, '--offline', '--gpu', 'A100-80GB', '--gpus', '2', '--set', 'max_num_seqs=128', '--replace']);
    assert.equal(own.code, 0, own.stdout + own.stderr);
    const store = openStore(db);
    const model = store.getRun(id).model;
    const specs = store.listModelSpecs().map((m) => m.id);
    store.close();
    assert.notEqual(model, 'llama-3.1-8b');
    assert.ok(specs.includes(model), `${model} among the stored specs ${JSON.stringify(specs)}`);
  });
});
