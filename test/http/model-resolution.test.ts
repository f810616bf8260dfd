/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call -- JSON bodies are read loosely; the assertions check their shape */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../src/store/index.js';
import { AUTH, SMALL_WORKLOAD, TEST_CONFIG, tempDb, testApp, waitFor } from './helpers.js';

// The service resolves a request's `model` like the CLI's --model (a path on its disk, its Hugging
// Face cache, never the network here: HF_HUB_OFFLINE=1), through real SQLite files and the real
// recommendation and study worker threads.

const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(new URL(`../fixtures/hf-configs/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;

/** A model directory `<root>/<name>/config.json`. */
function modelDir(root: string, name: string, config: Record<string, unknown>): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

function counts(db: string): Record<string, number> {
  const d = new Database(db, { readonly: true });
  try {
    const n = (table: string): number => (d.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { studies: n('studies'), trials: n('trials'), runs: n('runs'), model_specs: n('model_specs'), events: n('events') };
  } finally {
    d.close();
  }
}

/** Offline, with `root` the one directory a request's model path may name. */
const ENV = (root: string) => ({ env: { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: join(root, 'hub') }, config: { ...TEST_CONFIG, model_dirs: [root] } });

test('POST /v1/recommendations with a model path answers with `vllm serve PATH`; two checkpoints of one name never share an answer', { timeout: 120_000 }, async (t) => {
  const db = tempDb(t);
  const root = dirname(db);
  const app = await testApp(t, db, ENV(root));
  const a = modelDir(join(root, 'a'), 'Qwen2.5-32B-Instruct', fixture('qwen2.5-32b-instruct'));
  const b = modelDir(join(root, 'b'), 'Qwen2.5-32B-Instruct', { ...fixture('qwen2.5-32b-instruct'), num_hidden_layers: 48 });
  const ask = (model: string) => app.inject({ method: 'POST', url: '/v1/recommendations', payload: { gpu: 'NVIDIA H100 80GB HBM3', gpus: 2, model, workload: SMALL_WORKLOAD } });
  const ra = await ask(a);
  assert.equal(ra.statusCode, 200, ra.body);
  assert.equal(ra.json().source.kind, 'simulator');
  assert.ok(String(ra.json().vllm_command).startsWith(`vllm serve ${a} --tensor-parallel-size`), ra.json().vllm_command);
  assert.equal((await ask(a)).body, ra.body, 'the same question is answered from the cache');
  // Same derived id (the directory's name), another config.json: the hash keeps the answers apart.
  const rb = await ask(b);
  assert.equal(rb.statusCode, 200, rb.body);
  assert.ok(String(rb.json().vllm_command).startsWith(`vllm serve ${b} `), rb.json().vllm_command);
  assert.deepEqual(counts(db), { studies: 0, trials: 0, runs: 0, model_specs: 0, events: 0 }, 'a question writes nothing');
});

test('POST /v1/studies with a model path stores the spec and its hash with the study; its runs are found by GET /v1/runs?model=', { timeout: 120_000 }, async (t) => {
  const db = tempDb(t);
  const root = dirname(db);
  const app = await testApp(t, db, ENV(root));
  const dir = modelDir(root, 'Phi-4', fixture('phi-4'));
  const payload = { name: 'phi', target: 'sim', gpu: 'H100-SXM', gpus: 1, model: dir, workload: SMALL_WORKLOAD, budget_trials: 2, sampler: 'random', seed: 2 };
  const created = await app.inject({ method: 'POST', url: '/v1/studies', payload, headers: AUTH });
  assert.equal(created.statusCode, 202, created.body);
  const done = await waitFor(app, '/v1/studies/phi', (d) => d.active === false && d.counts?.complete + d.counts?.failed >= 2);
  assert.ok(done.counts.complete >= 1, JSON.stringify(done.counts));
  assert.equal(done.study.spec.model, 'phi-4');
  assert.equal(done.study.spec.model_spec.hf_name, dir);
  assert.match(done.study.spec.model_config_hash, /^[0-9a-f]{64}$/);
  const store = openStore(db, { readonly: true });
  try {
    assert.deepEqual(store.listModelSpecs().map((m) => [m.id, m.config_hash, m.origin, m.location]), [['phi-4', done.study.spec.model_config_hash, 'path', join(dir, 'config.json')]]);
  } finally {
    store.close();
  }
  const runs = await app.inject({ method: 'GET', url: `/v1/runs?model=${encodeURIComponent(dir)}` });
  assert.equal(runs.statusCode, 200, runs.body);
  assert.equal(runs.json().total, done.counts.complete);
  assert.ok(runs.json().runs.every((r: { model: string }) => r.model === 'phi-4'));
});

test('a model the service cannot resolve is a 400 with the catalog error, and nothing is stored', async (t) => {
  const db = tempDb(t);
  const root = dirname(db);
  const app = await testApp(t, db, ENV(root));
  const strange = modelDir(root, 'Strange', { architectures: ['AcmeForCausalLM'], model_type: 'acme' });
  const before = counts(db);
  const study = { name: 's', target: 'sim', gpu: 'H100-SXM', gpus: 1, workload: SMALL_WORKLOAD, budget_trials: 2, sampler: 'random' };
  const ingest = { files: [{ name: 'r.json', content: readFileSync(new URL('../fixtures/ingest/vllm-serve-2025.json', import.meta.url), 'utf8') }], server_config: { max_num_seqs: 64 }, gpu: 'H100-SXM', gpus: 1 };
  const cases: [string, string, Record<string, unknown> | undefined, string][] = [
    ['POST', '/v1/studies', { ...study, model: 'Nobody/Nothing-7B' }, 'LMB_ERR_UNKNOWN_MODEL'],
    ['POST', '/v1/studies', { ...study, model: strange }, 'LMB_ERR_UNSUPPORTED_ARCHITECTURE'],
    ['POST', '/v1/recommendations', { gpu: 'H100-SXM', gpus: 1, model: 'Nobody/Nothing-7B', workload: 'chat' }, 'LMB_ERR_UNKNOWN_MODEL'],
    ['POST', '/v1/runs', { ...ingest, model: 'Nobody/Nothing-7B' }, 'LMB_ERR_UNKNOWN_MODEL'],
    ['GET', '/v1/runs?model=Nobody/Nothing-7B', undefined, 'LMB_ERR_UNKNOWN_MODEL'],
  ];
  for (const [method, url, payload, code] of cases) {
    const r = await app.inject({ method: method as 'GET' | 'POST', url, headers: AUTH, ...(payload === undefined ? {} : { payload }) });
    assert.equal(r.statusCode, 400, `${method} ${url}: ${r.body}`);
    assert.equal(r.json().error.code, code);
    if (code === 'LMB_ERR_UNKNOWN_MODEL') assert.equal(r.json().error.details.field, 'model');
  }
  assert.deepEqual(counts(db), before);
});
