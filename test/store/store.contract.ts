import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isLmBenchError } from '../../src/errors.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import { runMetric, type Store, type StoreOptions } from '../../src/store/index.js';
import { manualClock, sampleResult, sampleRun, sampleSpec } from './samples.js';

export interface StoreHarness {
  readonly store: Store;
  readonly advance: (ms: number) => void;
  readonly dispose: () => void;
}

/** Builds a fresh, empty store on the given clock. */
export type StoreFactory = (options: StoreOptions) => { store: Store; dispose: () => void };

const code = (c: string) => (err: unknown) => isLmBenchError(err) && err.code === c;

/**
 * The Store contract (the invariants documented on `SqliteStore`), after Optuna's
 * `optuna/testing/pytest_storages.py`; run against the store on a file and on ':memory:'.
 */
export function storeContract(label: string, factory: StoreFactory): void {
  const open = (): StoreHarness => {
    const clock = manualClock();
    const { store, dispose } = factory({ now: clock.now });
    return { store, advance: clock.advance, dispose };
  };
  const withStore = (fn: (h: StoreHarness) => void) => () => {
    const h = open();
    try {
      fn(h);
    } finally {
      h.dispose();
    }
  };

  describe(`Store contract: ${label}`, () => {
    it(
      'creates studies, finds them by id and name, resumes an identical spec and refuses a different one',
      withStore(({ store, advance }) => {
        const a = store.createStudy(sampleSpec('a'));
        advance(5);
        const b = store.createStudy(sampleSpec('b'));
        assert.equal(a.state, 'created');
        assert.notEqual(a.id, b.id);
        assert.deepEqual(store.getStudy(a.id), a);
        assert.deepEqual(store.getStudy('b'), b);
        assert.deepEqual(store.createStudy(sampleSpec('a')), a, 'same spec resumes');
        assert.throws(() => store.createStudy(sampleSpec('a', { seed: 2 })), code('LMB_ERR_STUDY_EXISTS'));
        assert.throws(() => store.getStudy('nope'), code('LMB_ERR_STUDY_NOT_FOUND'));
        assert.throws(() => store.getStudy(999), code('LMB_ERR_STUDY_NOT_FOUND'));
        assert.equal(store.findStudy('nope'), null);
        assert.deepEqual(store.listStudies().map((s) => s.spec.name), ['a', 'b']);
        advance(10);
        const running = store.setStudyState(a.id, 'running');
        assert.equal(running.state, 'running');
        assert.equal(running.updated_at_ms, a.created_at_ms + 15);
        assert.equal(running.created_at_ms, a.created_at_ms);
      }),
    );

    it(
      'numbers trials per study and hands each waiting trial to exactly one claimer, oldest first',
      withStore(({ store }) => {
        const s1 = store.createStudy(sampleSpec('s1'));
        const s2 = store.createStudy(sampleSpec('s2'));
        const t0 = store.createTrial(s1.id, { config: { max_num_seqs: 64 }, origin: 'default' });
        const t1 = store.createTrial(s1.id, { config: { max_num_seqs: 128 }, origin: 'space_filling' });
        const u0 = store.createTrial(s2.id, { config: {}, origin: 'random', state: 'running' });
        assert.deepEqual([t0.number, t1.number, u0.number], [0, 1, 0]);
        assert.equal(t0.state, 'waiting');
        assert.equal(t0.started_at_ms, null);
        assert.equal(u0.state, 'running');
        assert.notEqual(u0.started_at_ms, null);
        const c1 = store.claimWaitingTrial(s1.id);
        const c2 = store.claimWaitingTrial(s1.id);
        assert.deepEqual([c1?.id, c2?.id], [t0.id, t1.id]);
        assert.equal(c1?.state, 'running');
        assert.equal(store.claimWaitingTrial(s1.id), null);
        assert.throws(() => store.startTrial(t0.id), code('LMB_ERR_INVALID_ARGUMENT'));
        assert.throws(() => store.createTrial(999, { config: {}, origin: 'default' }), code('LMB_ERR_STUDY_NOT_FOUND'));
        assert.throws(() => store.getTrial(999), code('LMB_ERR_NOT_FOUND'));
      }),
    );

    it(
      'stores ±Infinity, NaN and null objective values and results faithfully',
      withStore(({ store, advance }) => {
        const s = store.createStudy(sampleSpec());
        const t = store.createTrial(s.id, { config: { enforce_eager: false }, origin: 'default', state: 'running' });
        advance(1000);
        const result = sampleResult({ request_goodput: null, label: 'x' });
        const done = store.completeTrial(t.id, {
          values: { thr: 1234.5, ttft: Infinity, neg: -Infinity, nan: NaN, none: null, zero: 0 },
          result,
        });
        const back = store.getTrial(t.id);
        assert.deepEqual(back, done);
        assert.equal(back.state, 'complete');
        assert.equal(back.started, true);
        assert.equal(back.finished_at_ms, t.created_at_ms + 1000);
        assert.equal(back.values['thr'], 1234.5);
        assert.equal(back.values['ttft'], Infinity);
        assert.equal(back.values['neg'], -Infinity);
        assert.ok(Number.isNaN(back.values['nan']));
        assert.equal(back.values['none'], null);
        assert.equal(back.values['zero'], 0);
        assert.equal('missing' in back.values, false);
        assert.deepEqual(back.result, result);
        assert.deepEqual(back.config, { enforce_eager: false });
      }),
    );

    it(
      'refuses every write to a finished trial',
      withStore(({ store }) => {
        const s = store.createStudy(sampleSpec());
        const a = store.createTrial(s.id, { config: {}, origin: 'default' });
        const b = store.createTrial(s.id, { config: {}, origin: 'default' });
        const c = store.createTrial(s.id, { config: {}, origin: 'default' });
        const failed = store.failTrial(a.id, { reason: 'CUDA out of memory', started: false });
        assert.equal(failed.state, 'failed');
        assert.equal(failed.started, false);
        assert.equal(failed.failure_reason, 'CUDA out of memory');
        store.pruneTrial(b.id, { reason: 'dominated' });
        store.completeTrial(c.id, { values: { x: 1 }, result: null });
        for (const id of [a.id, b.id, c.id]) {
          const before = store.getTrial(id);
          assert.throws(() => store.completeTrial(id, { values: { x: 2 }, result: null }), code('LMB_ERR_TRIAL_FINISHED'));
          assert.throws(() => store.failTrial(id, { reason: 'x', started: true }), code('LMB_ERR_TRIAL_FINISHED'));
          assert.throws(() => store.pruneTrial(id), code('LMB_ERR_TRIAL_FINISHED'));
          assert.throws(() => store.heartbeat(id), code('LMB_ERR_TRIAL_FINISHED'));
          assert.throws(() => store.setTrialAttrs(id, { k: 1 }), code('LMB_ERR_TRIAL_FINISHED'));
          assert.throws(() => store.startTrial(id), code('LMB_ERR_TRIAL_FINISHED'));
          assert.deepEqual(store.getTrial(id), before);
        }
      }),
    );

    it(
      'returns copies: mutating a returned object or writing later changes nothing already returned',
      withStore(({ store }) => {
        const s = store.createStudy(sampleSpec());
        const t = store.createTrial(s.id, { config: { max_num_seqs: 8 }, origin: 'default', attrs: { a: [1, 2] } });
        const snapshot = store.getTrial(t.id);
        snapshot.config.max_num_seqs = 999;
        (snapshot.attrs['a'] as number[]).push(3);
        assert.equal(store.getTrial(t.id).config.max_num_seqs, 8);
        assert.deepEqual(store.getTrial(t.id).attrs, { a: [1, 2] });
        const before = store.getTrial(t.id);
        store.startTrial(t.id);
        store.setTrialAttrs(t.id, { b: 'x' });
        store.completeTrial(t.id, { values: { v: 1 }, result: null });
        assert.equal(before.state, 'waiting');
        assert.deepEqual(before.values, {});
        assert.deepEqual(before.attrs, { a: [1, 2] });
        const study = store.getStudy(s.id);
        study.spec.seed = 42;
        assert.equal(store.getStudy(s.id).spec.seed, 1);
      }),
    );

    it(
      'merges attributes, keeping Infinity, null and absent keys apart',
      withStore(({ store }) => {
        const s = store.createStudy(sampleSpec());
        const t = store.createTrial(s.id, { config: {}, origin: 'enqueued', attrs: { keep: 1, inf: Infinity } });
        const out = store.setTrialAttrs(t.id, { n: null, skip: undefined, deep: { x: -Infinity, y: [NaN] } });
        assert.deepEqual(Object.keys(out.attrs).sort(), ['deep', 'inf', 'keep', 'n']);
        assert.equal(out.attrs['inf'], Infinity);
        assert.equal(out.attrs['n'], null);
        const deep = out.attrs['deep'] as { x: number; y: number[] };
        assert.equal(deep.x, -Infinity);
        assert.ok(Number.isNaN(deep.y[0]));
        assert.deepEqual(store.getTrial(t.id), out);
      }),
    );

    it(
      'leaves the running trials it is told to keep (a controller reattached to their jobs)',
      withStore(({ store, advance }) => {
        const s = store.createStudy(sampleSpec());
        const followed = store.createTrial(s.id, { config: { block_size: 16 }, origin: 'default', state: 'running' });
        const orphan = store.createTrial(s.id, { config: { block_size: 32 }, origin: 'surrogate', state: 'running' });
        advance(60_000);
        const report = store.requeueStaleTrials(s.id, orphan.created_at_ms + 30_000, [followed.id]);
        assert.deepEqual(report.failed.map((t) => t.id), [orphan.id]);
        assert.equal(store.getTrial(followed.id).state, 'running');
        assert.deepEqual(report.requeued.map((t) => t.config), [{ block_size: 32 }]);
      }),
    );

    it(
      'fails stale running trials and requeues their configs in one step',
      withStore(({ store, advance }) => {
        const s = store.createStudy(sampleSpec());
        const alive = store.createTrial(s.id, { config: { block_size: 16 }, origin: 'default', state: 'running' });
        const dead = store.createTrial(s.id, { config: { block_size: 32 }, origin: 'surrogate', state: 'running' });
        const waiting = store.createTrial(s.id, { config: {}, origin: 'default' });
        advance(60_000);
        store.heartbeat(alive.id);
        advance(1_000);
        const cutoff = alive.created_at_ms + 30_000;
        const report = store.requeueStaleTrials(s.id, cutoff);
        assert.deepEqual(report.failed.map((t) => t.id), [dead.id]);
        assert.equal(report.failed[0]?.state, 'failed');
        assert.equal(report.failed[0]?.started, null);
        assert.match(report.failed[0]?.failure_reason ?? '', /^stale/);
        assert.equal(report.requeued.length, 1);
        const again = report.requeued[0];
        assert.equal(again?.state, 'waiting');
        assert.equal(again?.origin, 'enqueued');
        assert.deepEqual(again?.config, { block_size: 32 });
        assert.deepEqual(again?.attrs, { retry_of: dead.id });
        assert.equal(again?.number, 3);
        assert.equal(store.getTrial(alive.id).state, 'running');
        assert.equal(store.getTrial(waiting.id).state, 'waiting');
        assert.deepEqual(store.requeueStaleTrials(s.id, cutoff), { failed: [], requeued: [] });
        assert.deepEqual(
          store.listTrials(s.id, { states: ['waiting'] }).map((t) => t.id),
          [waiting.id, again?.id],
        );
        assert.deepEqual(store.listTrials(s.id).map((t) => t.number), [0, 1, 2, 3]);
        assert.deepEqual(store.listTrials(s.id, { states: [] }), []);
      }),
    );

    it(
      'stores runs once per content hash and filters them by model, GPU and knob values',
      withStore(({ store }) => {
        const [first] = store.storeRuns([sampleRun('h1')]);
        assert.equal(first?.status, 'new');
        const a = first.id;
        assert.deepEqual(store.storeRuns([sampleRun('h1')]), [{ status: 'duplicate', id: a }]);
        const h3 = sampleRun('h3', { hardware: { gpu: 'A100-80GB', count: 2 }, serverConfig: { kv_cache_dtype: 'fp8' } });
        const batch = store.storeRuns([
          sampleRun('h2', { model: 'qwen2.5-7b', serverConfig: { max_num_seqs: 256, enable_prefix_caching: false } }),
          sampleRun('h1'),
          h3,
          // Repeated in the batch: the run stored a line before.
          { ...h3, sourcePath: '/tmp/h3-again.json' },
        ]);
        const ids = batch.map((o) => o.id);
        assert.deepEqual(batch.map((o) => o.status), ['new', 'duplicate', 'new', 'duplicate']);
        assert.deepEqual([ids[1], ids[3]], [a, ids[2]]);
        assert.equal(new Set([a, ids[0], ids[2]]).size, 3, 'each new run its own id');
        assert.equal(store.getRun(ids[2] ?? -1).source_path, '/tmp/h3.json', 'a duplicate writes nothing');
        assert.equal(store.countRuns(), 3);
        assert.deepEqual(store.listRuns().map((r) => r.content_hash), ['h3', 'h2', 'h1'], 'newest first');
        assert.deepEqual(store.listRuns({ limit: 1, offset: 1 }).map((r) => r.content_hash), ['h2']);
        assert.equal(store.countRuns({ model: 'llama-3.1-8b' }), 2);
        assert.equal(store.countRuns({ gpu: 'A100-80GB', gpuCount: 2 }), 1);
        assert.equal(store.countRuns({ gpu: 'A100-80GB', gpuCount: 1 }), 0);
        assert.deepEqual(store.listRuns({ config: { enable_prefix_caching: true } }).map((r) => r.content_hash), ['h1']);
        assert.deepEqual(store.listRuns({ config: { enable_prefix_caching: false } }).map((r) => r.content_hash), ['h2']);
        assert.deepEqual(store.listRuns({ config: { max_num_seqs: 256 } }).map((r) => r.content_hash), ['h2']);
        assert.deepEqual(store.listRuns({ config: { kv_cache_dtype: 'fp8' } }).map((r) => r.content_hash), ['h3']);
        assert.equal(store.countRuns({ config: { block_size: 16 } }), 0, 'an absent knob never matches');
        assert.equal(store.countRuns({ sourceFormat: 'guidellm' }), 0);
        const r = store.getRun(a);
        assert.deepEqual(r.result, sampleResult());
        assert.deepEqual(r.server_config, { max_num_seqs: 128, enable_prefix_caching: true });
        assert.deepEqual(r.hardware, { gpu: 'H100-SXM', count: 1 });
        assert.equal(r.workload, null);
        assert.equal(r.source_format, 'vllm_bench_serve');
        assert.deepEqual(r.meta, { unavailable: [], percentile_method: 'linear', notes: [] });
        const meta = { unavailable: ['p99_itl_ms'], percentile_method: 'nearest_rank' as const, notes: ['x'] };
        const [withMeta] = store.storeRuns([sampleRun('h4', { meta })]);
        const r4 = store.getRun(withMeta?.id ?? -1);
        assert.deepEqual(r4.meta, meta);
        assert.equal(runMetric(r4, 'p99_itl_ms'), null);
        assert.equal(runMetric(r4, 'p99_ttft_ms'), r4.result.p99_ttft_ms);
        assert.throws(() => store.getRun(999), code('LMB_ERR_NOT_FOUND'));
      }),
    );

    it(
      'storeRuns: one measurement, one context — another context refuses the whole batch, or with replace takes the stored run',
      withStore(({ store, advance }) => {
        const [first] = store.storeRuns([sampleRun('c1')]);
        assert.equal(first?.status, 'new');
        const id = first?.id ?? -1;
        // Same figures and context (knobs in another order): a duplicate naming the stored run.
        assert.deepEqual(store.storeRuns([sampleRun('c1', { serverConfig: { enable_prefix_caching: true, max_num_seqs: 128 } })]), [{ status: 'duplicate', id }]);
        // Another GPU for c1 after a new run c2 in the same batch: refused, c2 rolled back.
        assert.throws(
          () => store.storeRuns([sampleRun('c2'), sampleRun('c1', { hardware: { gpu: 'A100-80GB', count: 1 } })]),
          (e: unknown) =>
            isLmBenchError(e, 'LMB_ERR_INGEST_REJECTED') &&
            e.message === `already stored under another context: run #${id} has GPUs 1× H100-SXM (this ingest: 1× A100-80GB); nothing stored` &&
            JSON.stringify(e.details['runs']) === JSON.stringify([id]),
        );
        assert.deepEqual(store.listRuns().map((r) => r.content_hash), ['c1']);
        // The same figures twice in one batch under two contexts: refused, naming the figures, not the id
        // the first of them had before the rollback (no such run exists after it).
        const c3 = 'c3'.padEnd(64, '0');
        assert.throws(
          () => store.storeRuns([sampleRun(c3), sampleRun(c3, { model: 'qwen2.5-7b' })]),
          (e: unknown) =>
            isLmBenchError(e, 'LMB_ERR_INGEST_REJECTED') &&
            e.message === `given twice in one batch under two contexts: figures ${c3.slice(0, 12)} came first with model llama-3.1-8b (this ingest: qwen2.5-7b); nothing stored` &&
            JSON.stringify(e.details) === JSON.stringify({ runs: [], repeated: [c3] }),
        );
        // Both kinds in one batch: each said, only the stored run's id in details.runs.
        assert.throws(
          () => store.storeRuns([sampleRun(c3), sampleRun('c1', { hardware: { gpu: 'A100-80GB', count: 1 } }), sampleRun(c3, { serverConfig: {} })]),
          (e: unknown) =>
            isLmBenchError(e, 'LMB_ERR_INGEST_REJECTED') &&
            /^already stored under another context: run #\d+ has GPUs .*; given twice in one batch under two contexts: figures c30{10} came first with .*; nothing stored$/.test(e.message) &&
            JSON.stringify(e.details) === JSON.stringify({ runs: [id], repeated: [c3] }),
        );
        assert.deepEqual(store.listRuns().map((r) => r.content_hash), ['c1']);
        // replace: same id, figures and provenance, the new context, the old one in a note.
        advance(1000);
        const was = store.getRun(id);
        const out = store.storeRuns([sampleRun('c2'), sampleRun('c1', { model: 'qwen2.5-7b', serverConfig: { max_num_seqs: 64 }, sourcePath: '/elsewhere.json' })], { replace: true });
        assert.deepEqual(out[1], { status: 'replaced', id, was: { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', server_config: { max_num_seqs: 128, enable_prefix_caching: true } } });
        assert.equal(out[0]?.status, 'new');
        const now = store.getRun(id);
        assert.deepEqual([now.model, now.server_config, now.hardware], ['qwen2.5-7b', { max_num_seqs: 64 }, { gpu: 'H100-SXM', count: 1 }]);
        assert.deepEqual([now.result, now.source_path, now.created_at_ms, now.content_hash], [was.result, was.source_path, was.created_at_ms, was.content_hash]);
        assert.match(now.meta.notes.at(-1) ?? '', /^context replaced .*: was GPUs 1× H100-SXM, model llama-3.1-8b, server config enable_prefix_caching=true max_num_seqs=128$/);
        // A judge that calls the contexts one: a duplicate, nothing written.
        assert.deepEqual(store.storeRuns([sampleRun('c1')], { change: () => null }), [{ status: 'duplicate', id }]);
        assert.equal(store.getRun(id).model, 'qwen2.5-7b');
      }),
    );

    it(
      'saves models with their blobs and returns the latest of a kind',
      withStore(({ store, advance }) => {
        const blob = new Uint8Array([0, 1, 2, 255, 128]);
        const m1 = store.saveModel({ kind: 'surrogate', blob, metadata: { rows: 10 }, metrics: { r2: 0.9, mae: null } });
        advance(1);
        const m2 = store.saveModel({ kind: 'surrogate', blob: new Uint8Array([9]), metadata: {}, metrics: { r2: -Infinity } });
        store.saveModel({ kind: 'feasibility', blob: new Uint8Array(0), metadata: {}, metrics: {} });
        blob[0] = 77;
        assert.ok(m1.blob instanceof Uint8Array);
        assert.deepEqual([...store.getModel(m1.id).blob], [0, 1, 2, 255, 128]);
        assert.equal(store.getModel(m1.id).size_bytes, 5);
        assert.deepEqual(store.getModel(m1.id).metrics, { r2: 0.9, mae: null });
        const latest = store.latestModel('surrogate');
        assert.equal(latest?.id, m2.id);
        assert.equal(latest?.metrics['r2'], -Infinity);
        assert.equal(store.latestModel('nope'), null);
        const infos = store.listModels('surrogate');
        assert.deepEqual(infos.map((m) => m.id), [m2.id, m1.id]);
        assert.equal('blob' in (infos[0] ?? {}), false);
        assert.equal(store.listModels().length, 3);
        assert.throws(() => store.getModel(999), code('LMB_ERR_NOT_FOUND'));
      }),
    );

    it(
      'a model saved into a slot replaces the one there, in one step, and leaves other slots alone',
      withStore(({ store }) => {
        const a1 = store.saveModel({ kind: 'surrogate', slot: 'study:a', blob: new Uint8Array([1]), metadata: { n: 1 }, metrics: {} });
        const b1 = store.saveModel({ kind: 'surrogate', slot: 'study:b', blob: new Uint8Array([2]), metadata: {}, metrics: {} });
        const free = store.saveModel({ kind: 'surrogate', blob: new Uint8Array([3]), metadata: {}, metrics: {} });
        const a2 = store.saveModel({ kind: 'surrogate', slot: 'study:a', blob: new Uint8Array([4]), metadata: { n: 2 }, metrics: {} });
        assert.equal(a2.slot, 'study:a');
        assert.deepEqual(store.listModels('surrogate').map((m) => [m.id, m.slot]), [[a2.id, 'study:a'], [free.id, null], [b1.id, 'study:b']]);
        assert.throws(() => store.getModel(a1.id), code('LMB_ERR_NOT_FOUND'));
        assert.deepEqual(store.getModel(a2.id).metadata, { n: 2 });
      }),
    );

    it(
      'adopts derived model specs: a new id as given, the same hash the stored spec, another hash its own ID@HASH8; a catalog model stores nothing',
      withStore(({ store, advance }) => {
        const base = { ...defaultCatalog().model('qwen3-8b'), id: 'org/qwen', hf_name: 'Org/Qwen', source: 'a config.json' };
        const hashA = 'a'.repeat(64);
        const hashB = `1234abcd${'b'.repeat(56)}`;
        assert.equal(store.adoptModelSpec({ spec: defaultCatalog().model('qwen3-8b'), config_hash: null, origin: 'catalog', location: 'catalog' }).id, 'qwen3-8b');
        assert.deepEqual(store.listModelSpecs(), []);
        const first = store.adoptModelSpec({ spec: base, config_hash: hashA, origin: 'hf-cache', location: '/cache/a/config.json' });
        assert.equal(first.id, 'org/qwen');
        advance(1);
        // The same checkpoint again (a later field of the derivation aside): the stored spec comes back.
        const again = store.adoptModelSpec({ spec: { ...base, layers: base.layers + 1 }, config_hash: hashA, origin: 'hf-cache', location: '/elsewhere' });
        assert.deepEqual(again, first);
        const second = store.adoptModelSpec({ spec: { ...base, layers: 48 }, config_hash: hashB, origin: 'path', location: '/cache/b/config.json' });
        assert.equal(second.id, 'org/qwen@1234abcd');
        assert.equal(second.layers, 48);
        assert.equal(store.adoptModelSpec({ spec: { ...base, layers: 48 }, config_hash: hashB, origin: 'path', location: '/x' }).id, 'org/qwen@1234abcd');
        const listed = store.listModelSpecs();
        assert.deepEqual(listed.map((m) => [m.id, m.config_hash, m.origin, m.location]), [
          ['org/qwen', hashA, 'hf-cache', '/cache/a/config.json'],
          ['org/qwen@1234abcd', hashB, 'path', '/cache/b/config.json'],
        ]);
        assert.equal(listed[0]?.spec.layers, base.layers);
        assert.equal((listed[1]?.created_at_ms ?? 0) - (listed[0]?.created_at_ms ?? 0), 1);
        // Returned specs are copies.
        (listed[0]?.spec.aliases ?? []).push('mutated');
        assert.deepEqual(store.listModelSpecs()[0]?.spec.aliases, base.aliases);
      }),
    );

    it(
      'appends events and lists them by study, kind and position',
      withStore(({ store, advance }) => {
        const s = store.createStudy(sampleSpec());
        const e1 = store.appendEvent({ studyId: s.id, kind: 'trial.started', payload: { trial: 1 } });
        advance(1);
        const e2 = store.appendEvent({ studyId: null, kind: 'ingest', payload: { accepted: 3, rate: Infinity } });
        const e3 = store.appendEvent({ studyId: s.id, kind: 'trial.done', payload: null });
        assert.ok(e1.id < e2.id && e2.id < e3.id);
        assert.equal(e2.at_ms, e1.at_ms + 1);
        assert.deepEqual(store.listEvents().map((e) => e.id), [e1.id, e2.id, e3.id]);
        assert.deepEqual(store.listEvents({ studyId: s.id }).map((e) => e.id), [e1.id, e3.id]);
        assert.deepEqual(store.listEvents({ studyId: null }).map((e) => e.id), [e2.id]);
        assert.deepEqual(store.listEvents({ kind: 'trial.done' }).map((e) => e.id), [e3.id]);
        assert.deepEqual(store.listEvents({ afterId: e1.id, limit: 1 }).map((e) => e.id), [e2.id]);
        assert.deepEqual(store.listEvents({ kind: 'ingest' })[0]?.payload, { accepted: 3, rate: Infinity });
        assert.throws(() => store.appendEvent({ studyId: 999, kind: 'x', payload: {} }), code('LMB_ERR_STUDY_NOT_FOUND'));
      }),
    );

    it('fails with LMB_ERR_STORE_FAILED after close', () => {
      const { store, dispose } = open();
      store.close();
      store.close();
      assert.throws(() => store.listStudies(), code('LMB_ERR_STORE_FAILED'));
      dispose();
    });
  });
}
