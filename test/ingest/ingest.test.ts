import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestBuffer, ingestFiles, type IngestSummary } from '../../src/ingest/index.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';
import { fixture, FIXTURES, garbage, NIGHTLY_DIR } from './helpers.js';

let dir: string;
let n = 0;
const freshStore = (): SqliteStore => openStore(join(dir, `db-${n++}.db`), { now: () => 1_700_000_000_000 });
const statuses = (s: IngestSummary) => s.files.map((f) => f.status);

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-ingest-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('ingestFiles', () => {
  it('stores the real vLLM nightly tables and skips them when ingested again', () => {
    const store = freshStore();
    const first = ingestFiles(store, [NIGHTLY_DIR]);
    assert.equal(first.accepted, 30);
    assert.deepEqual(first.rejected, []);
    assert.equal(store.countRuns(), 30);
    assert.equal(store.countRuns({ gpu: 'A100-80GB', model: 'llama-3.1-70b', gpuCount: 4 }), 10);
    assert.equal(store.countRuns({ sourceFormat: 'vllm_nightly', config: { tensor_parallel_size: 2 } }), 10);
    // No workload in the table: reconstructed from it (mean lengths, Poisson at the QPS), and noted.
    const qps4 = store.listRuns().find((r) => r.result.label === 'vllm_055_llama8B_tp1_sharegpt_qps_4');
    assert.deepEqual(qps4?.workload?.arrival, { kind: 'poisson', rate_rps: 4 });
    assert.deepEqual(qps4?.workload?.input_len, { dist: 'fixed', value: Math.round(100895 / 500) });
    assert.ok(qps4?.meta.notes.some((n) => n.startsWith('workload derived')));
    assert.deepEqual(store.listRuns().find((r) => r.result.request_rate === 'inf')?.workload?.arrival, { kind: 'burst' });
    const again = ingestFiles(store, [NIGHTLY_DIR]);
    assert.equal(again.accepted, 0);
    assert.equal(again.skipped, 30);
    assert.deepEqual(statuses(again), ['skipped', 'skipped']);
    assert.equal(store.countRuns(), 30);
    store.close();
  });

  it('walks the fixtures: every good format accepted, every broken file rejected, companions passed over with the reason', () => {
    const store = freshStore();
    // The flat files, the sweep folder and the broken files (the real-file folders have tests of their own).
    const flat = readdirSync(FIXTURES).filter((n) => /\.jsonl?$/.test(n)).map((n) => join(FIXTURES, n));
    const s = ingestFiles(store, [...flat, join(FIXTURES, 'sweep'), join(FIXTURES, 'broken')], { serverConfig: { max_num_seqs: 256 }, gpu: 'H100-SXM' });
    const byName = new Map(s.files.map((f) => [f.path.slice(FIXTURES.length + 1), f]));
    for (const name of ['vllm-serve-legacy.json', 'vllm-serve-2025.json', 'vllm-serve-newest.json', 'vllm-serve-append.jsonl', 'guidellm-v0.3.json', 'guidellm-v0.5.json', 'guidellm-v0.7.json', 'profile_export_genai_perf.json', 'lm-bench-result.json']) {
      assert.equal(byName.get(name)?.status, 'accepted', name);
    }
    assert.equal(s.rejected.length, 6);
    assert.ok(s.rejected.every((r) => r.path.includes('/broken/')));
    assert.ok(s.ignored.some((p) => p.endsWith('summary.json')) && s.ignored.some((p) => p.endsWith('warmup.json')));
    assert.match(s.passed_over.find((p) => p.path.endsWith('warmup.json'))?.reason ?? '', /warm-up run/);
    assert.match(s.passed_over.find((p) => p.path.endsWith('summary.csv'))?.reason ?? '', /sweep summary/);
    assert.match(s.passed_over.find((p) => p.path.endsWith('lm-bench.config.yaml'))?.reason ?? '', /sidecar/);
    // Nothing of a rejected file is stored: the row count is exactly the accepted runs.
    assert.equal(store.countRuns(), s.accepted);
    assert.equal(s.accepted, 1 + 1 + 1 + 2 + 1 + 3 + 1 + 1 + 1 + 4);
    const genai = store.listRuns({ sourceFormat: 'genai_perf' })[0];
    assert.equal(genai?.model, 'llama-3.1-8b', 'Meta-Llama-3-8B-Instruct is a catalog alias');
    assert.deepEqual(genai?.server_config, { max_num_seqs: 256 });
    assert.deepEqual(genai?.result.server_config, { max_num_seqs: 256 }, 'the config is attached to the result too');
    assert.deepEqual(genai?.hardware, { gpu: 'H100-SXM', count: 1 });
    assert.deepEqual(genai?.workload?.arrival, { kind: 'closed', concurrency: 8 });
    assert.equal(genai?.workload?.api, 'chat');
    const lmb = store.listRuns({ sourceFormat: 'lm_bench' })[0];
    assert.deepEqual(lmb?.hardware, { gpu: 'H100-SXM', count: 2 });
    assert.equal(lmb?.workload?.name, 'chat');
    store.close();
  });

  it('builds sweep run configs from the folder sidecar (base serve command) and each run\'s serve parameters', () => {
    const store = freshStore();
    const s = ingestFiles(store, [join(FIXTURES, 'sweep')]);
    assert.deepEqual(s.rejected, []);
    assert.equal(s.accepted, 4);
    const configs = store.listRuns().map((r) => r.server_config);
    assert.deepEqual(configs.filter((c) => c.max_num_seqs === 64).length, 2);
    assert.deepEqual(
      configs.find((c) => c.max_num_seqs === 128),
      { tensor_parallel_size: 1, max_num_batched_tokens: 8192, max_num_seqs: 128, enable_prefix_caching: true },
    );
    assert.equal(store.listRuns()[0]?.model, 'llama-3.1-8b');
    // summary.json holds the same runs: named explicitly, it is read and skipped as duplicates, with the
    // base serve command the folder's sidecar gave them or without it (TP 1 and 8,192 batched tokens are
    // vLLM's defaults on an H100); with another base its runs' configs contradict the stored ones, and
    // the file is refused naming them.
    const summary = join(FIXTURES, 'sweep/20260101_120000/SERVE-max_num_seqs=64-enable_prefix_caching=False-BENCH-max_concurrency=16/summary.json');
    const before = store.listRuns();
    for (const serverConfig of [{ tensor_parallel_size: 1, max_num_batched_tokens: 8192 }, {}]) {
      const again = ingestFiles(store, [summary], { gpu: 'H100-SXM', serverConfig });
      assert.deepEqual([again.accepted, again.skipped, again.rejected], [0, 2, []]);
    }
    const other = ingestFiles(store, [summary], { gpu: 'H100-SXM', serverConfig: { max_num_batched_tokens: 2048 } });
    assert.deepEqual([other.accepted, other.skipped, other.rejected.map((r) => r.code)], [0, 0, ['LMB_ERR_INGEST_REJECTED']]);
    assert.match(other.rejected[0]?.reason ?? '', /already stored under another context: runs #\d+, #\d+ have max_num_batched_tokens=8192 \(this ingest: max_num_batched_tokens=2048\)/);
    assert.deepEqual(store.listRuns(), before);
    store.close();
  });

  it('rejects runs without enough context, naming what is missing, and stores nothing of them', () => {
    const store = freshStore();
    const file = fixture('vllm-serve-2025.json');
    const reason = (s: IngestSummary) => `${s.rejected[0]?.code ?? ''} ${s.rejected[0]?.reason ?? ''}`;
    assert.match(reason(ingestFiles(store, [file], { gpu: 'H100-SXM' })), /LMB_ERR_INGEST_CONTEXT_MISSING .*no server config/);
    assert.match(reason(ingestFiles(store, [file], { serverConfig: {} })), /LMB_ERR_INGEST_CONTEXT_MISSING .*no GPU/);
    assert.match(
      reason(ingestFiles(store, [file], { serverConfig: { tensor_parallel_size: 4 }, gpu: 'H100-SXM', gpus: 2 })),
      /needs tensor_parallel_size × data_parallel_size = 4 GPUs/,
    );
    // One JSON Lines file, the second record naming a model the catalog lacks: the whole file is refused.
    const lines = readFileSync(fixture('vllm-serve-append.jsonl'), 'utf8').trim().split('\n');
    const second = { ...(JSON.parse(lines[1] ?? '{}') as object), model_id: 'acme/secret-model' };
    const mixed = join(dir, 'mixed.jsonl');
    writeFileSync(mixed, `${lines[0] ?? ''}\n${JSON.stringify(second)}\n`);
    const s = ingestFiles(store, [mixed], { serverConfig: {}, gpu: 'H100-SXM' });
    assert.match(reason(s), /line 2: model "acme\/secret-model" is not in data\/models.yaml/);
    assert.equal(store.countRuns(), 0);
    // With --model the same file is accepted.
    assert.equal(ingestFiles(store, [mixed], { serverConfig: {}, gpu: 'H100-SXM', model: 'qwen2.5-7b' }).accepted, 2);
    store.close();
  });

  it('reads a <file>.config.yaml sidecar, and rejects a broken one with its line', () => {
    const store = freshStore();
    const file = join(dir, 'with-sidecar.json');
    copyFileSync(fixture('vllm-serve-2025.json'), file);
    writeFileSync(`${file}.config.yaml`, 'gpu: L40S\ngpus: 2\ntensor_parallel_size: 2\nserver_config:\n  kv_cache_dtype: fp8\n');
    const ok = ingestFiles(store, [file]);
    assert.deepEqual(ok.rejected, []);
    const run = store.listRuns()[0];
    assert.deepEqual(run?.server_config, { tensor_parallel_size: 2, kv_cache_dtype: 'fp8' });
    assert.deepEqual(run?.hardware, { gpu: 'L40S', count: 2 });
    const bad = join(dir, 'bad-sidecar.json');
    copyFileSync(fixture('vllm-serve-newest.json'), bad);
    writeFileSync(`${bad}.config.yaml`, 'gpu: L40S\nmax_num_seqs: lots\n');
    const s = ingestFiles(store, [bad]);
    assert.equal(s.rejected[0]?.code, 'LMB_ERR_CONFIG_INVALID');
    assert.match(s.rejected[0]?.reason ?? '', /config\.yaml:2: max_num_seqs/);
    assert.equal(store.countRuns(), 1);
    store.close();
  });

  it('handles a 50 MB result file, refuses it over the size limit, and refuses 50 MB of garbage', () => {
    const store = freshStore();
    const big = JSON.parse(readFileSync(fixture('vllm-serve-legacy.json'), 'utf8')) as Record<string, unknown>;
    const requests = 2000;
    big['num_prompts'] = requests;
    big['completed'] = requests;
    big['ttfts'] = Array.from({ length: requests }, (_, i) => 0.05 + (i % 100) / 1000);
    big['itls'] = Array.from({ length: requests }, (_, i) => Array.from({ length: 100 }, (_, j) => 0.01 + ((i + j) % 50) / 10_000));
    big['errors'] = Array.from({ length: requests }, () => '');
    big['input_lens'] = Array.from({ length: requests }, () => 100);
    big['output_lens'] = Array.from({ length: requests }, () => 101);
    // The fixture's statistics are of its own 4 requests: left out, they are recomputed from these 2000.
    for (const k of Object.keys(big)) if (/_(ttft|tpot|itl|e2el)_ms$/.test(k)) delete big[k];
    // The rates as vLLM writes them, over the fixture's duration (ingest holds a file to vLLM's definitions).
    const duration = big['duration'] as number;
    big['total_input_tokens'] = requests * 100;
    big['total_output_tokens'] = requests * 101;
    big['request_throughput'] = requests / duration;
    big['output_throughput'] = (requests * 101) / duration;
    if ('total_token_throughput' in big) big['total_token_throughput'] = (requests * 201) / duration;
    // Long generated texts make up the bulk, as they do in real legacy files.
    big['generated_texts'] = Array.from({ length: requests }, (_, i) => `${'lorem ipsum dolor sit amet '.repeat(950)}${i}`);
    const path = join(dir, 'big.json');
    writeFileSync(path, JSON.stringify(big));
    const size = readFileSync(path).byteLength;
    assert.ok(size > 50 * 2 ** 20 && size < 60 * 2 ** 20, `size ${size}`);
    const tooBig = ingestFiles(store, [path], { serverConfig: {}, gpu: 'H100-SXM', maxFileBytes: 10 * 2 ** 20 });
    assert.equal(tooBig.rejected[0]?.code, 'LMB_ERR_INGEST_REJECTED');
    assert.match(tooBig.rejected[0]?.reason ?? '', /over the 10 MiB limit/);
    const s = ingestFiles(store, [path], { serverConfig: {}, gpu: 'H100-SXM' });
    assert.deepEqual(s.rejected, []);
    const run = store.listRuns()[0];
    assert.equal(run?.result.completed, requests);
    assert.ok((run?.result.p90_itl_ms ?? 0) > 0 && !(run?.meta.unavailable ?? []).includes('p90_itl_ms'));
    assert.equal('generated_texts' in (run?.result ?? {}), false, 'per-request arrays are not stored');
    const junk = join(dir, 'junk.json');
    writeFileSync(junk, garbage(50 * 2 ** 20));
    const g = ingestFiles(store, [junk], { serverConfig: {}, gpu: 'H100-SXM' });
    assert.equal(g.rejected[0]?.code, 'LMB_ERR_INGEST_UNKNOWN_FORMAT');
    assert.equal(store.countRuns(), 1);
    store.close();
  });

  it('reports a missing path as rejected and keeps going', () => {
    const store = freshStore();
    const s = ingestFiles(store, [join(dir, 'nope.json'), fixture('vllm-serve-newest.json')], { serverConfig: {}, gpu: 'H100-SXM' });
    assert.equal(s.rejected[0]?.code, 'LMB_ERR_FILE_NOT_FOUND');
    assert.equal(s.accepted, 1);
    store.close();
  });
});

describe('ingestBuffer', () => {
  it('ingests bytes with a sidecar text, dedupes, and rejects garbage', () => {
    const store = freshStore();
    const bytes = readFileSync(fixture('guidellm-v0.5.json'));
    const s = ingestBuffer(store, { name: 'upload.json', bytes, sidecarYaml: 'gpu: H100-SXM\nmax_num_seqs: 512\n' });
    assert.equal(s.accepted, 3);
    assert.deepEqual(store.listRuns().map((r) => r.server_config.max_num_seqs), [512, 512, 512]);
    assert.equal(ingestBuffer(store, { name: 'again.json', bytes, sidecarYaml: 'gpu: H100-SXM\n' }).skipped, 0, 'no config: rejected before dedupe');
    const again = ingestBuffer(store, { name: 'again.json', bytes }, { serverConfig: { max_num_seqs: 512 }, gpu: 'H100-SXM' });
    assert.deepEqual([again.accepted, again.skipped, again.files[0]?.status], [0, 3, 'skipped']);
    // The same figures with another config: refused, not skipped as if it had been stored so.
    const other = ingestBuffer(store, { name: 'again.json', bytes }, { serverConfig: {}, gpu: 'H100-SXM' });
    assert.deepEqual([other.accepted, other.skipped, other.files[0]?.status, other.rejected[0]?.code], [0, 0, 'rejected', 'LMB_ERR_INGEST_REJECTED']);
    const g = ingestBuffer(store, { name: 'x.bin', bytes: garbage(1000) }, { serverConfig: {}, gpu: 'H100-SXM' });
    assert.equal(g.rejected[0]?.code, 'LMB_ERR_INGEST_UNKNOWN_FORMAT');
    assert.equal(store.countRuns(), 3);
    store.close();
  });

  it('uses the folder sidecar nearest to the file inside a walked directory', () => {
    const store = freshStore();
    const root = join(dir, 'tree');
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    writeFileSync(join(root, 'lm-bench.config.yaml'), 'gpu: H200\nmodel: qwen2.5-7b\n');
    writeFileSync(join(root, 'a', 'lm-bench.config.yaml'), 'gpu: L4\nenforce_eager: true\n');
    copyFileSync(fixture('vllm-serve-2025.json'), join(root, 'a', 'b', 'r.json'));
    copyFileSync(fixture('vllm-serve-newest.json'), join(root, 'r2.json'));
    const s = ingestFiles(store, [root], { serverConfig: {} });
    assert.deepEqual(s.rejected, []);
    const byGpu = new Map(store.listRuns().map((r) => [r.hardware.gpu, r]));
    assert.deepEqual(byGpu.get('L4')?.server_config, { enforce_eager: true });
    assert.equal(byGpu.get('H200')?.model, 'qwen2.5-7b', 'the sidecar model wins over the file');
    store.close();
  });
});

describe('ingest notes', () => {
  it('a flag the file overrides is noted once per file, not once per run (a nightly table made 15 identical notes)', () => {
    const store = freshStore();
    const s = ingestFiles(store, [join(NIGHTLY_DIR, '2024-08-23_18-47-20_vllm_055_nightly_results.json')], { serverConfig: { max_num_seqs: 64 } });
    assert.equal(s.accepted, 15);
    assert.deepEqual(
      s.files[0]?.warnings.filter((w) => w.includes('from the flags ignored')),
      ['max_num_seqs=64 from the flags ignored: the file records 256'],
    );
    store.close();
  });
});

describe('ingest directory walk', () => {
  it('a dangling link is rejected and a link back up the tree walked once; the rest is stored (both made the whole ingest LMB_ERR_INTERNAL)', () => {
    const root = join(dir, 'links');
    mkdirSync(join(root, 'sub'), { recursive: true });
    copyFileSync(fixture('vllm-serve-2025.json'), join(root, 'sub', 'run.json'));
    symlinkSync(join(root, 'nowhere.json'), join(root, 'dangling.json'));
    symlinkSync('..', join(root, 'sub', 'up'));
    const store = freshStore();
    const s = ingestFiles(store, [root], { serverConfig: { max_num_seqs: 128 }, gpu: 'H100-SXM', model: 'llama-3.1-8b' });
    assert.equal(s.accepted, 1);
    assert.equal(store.countRuns(), 1);
    assert.deepEqual(s.files.map((f) => f.path).sort(), [join(root, 'dangling.json'), join(root, 'sub', 'run.json')]);
    assert.deepEqual(s.rejected.map((r) => [r.path, r.code]), [[join(root, 'dangling.json'), 'LMB_ERR_FILE_NOT_FOUND']]);
    assert.match(s.rejected[0]?.reason ?? '', /dangling\.json: cannot be read: it does not exist/);
    assert.deepEqual(s.passed_over.filter((p) => p.path.endsWith('up')).map((p) => p.reason), [`a link to ${realpathSync(root)}, a folder already walked`]);
    store.close();
  });
});
