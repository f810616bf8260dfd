/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- JSON bodies are read loosely; the assertions check their shape */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { AUTH, TEST_CONFIG, tempDb, testApp } from './helpers.js';

// Requests fastify itself refuses (the body's size, type or syntax) answer like every other 4xx: a
// catalog code and the part of the request at fault in details.field; and nothing is stored.

const vllmRun = readFileSync(join(PROJECT_ROOT, 'test', 'fixtures', 'ingest', 'vllm-serve-2025.json'), 'utf8');

test('a body refused for its size, media type or syntax names what is wrong in details.field', async (t) => {
  const app = await testApp(t, tempDb(t), { config: { body_limit_bytes: 1024 } });
  const cases = [
    { name: 'too large', payload: JSON.stringify({ files: [{ name: 'x', content: 'x'.repeat(4096) }] }), type: 'application/json', want: [413, 'LMB_ERR_BODY_TOO_LARGE', 'body'] },
    { name: 'XML', payload: '<files/>', type: 'application/xml', want: [400, 'LMB_ERR_INVALID_ARGUMENT', 'content-type'] },
    { name: 'form', payload: 'files=1', type: 'application/x-www-form-urlencoded', want: [400, 'LMB_ERR_INVALID_ARGUMENT', 'content-type'] },
    { name: 'bad JSON', payload: '{"files": [', type: 'application/json', want: [400, 'LMB_ERR_INVALID_ARGUMENT', 'body'] },
    { name: 'prototype poisoning', payload: '{"files": [], "__proto__": {"x": 1}}', type: 'application/json', want: [400, 'LMB_ERR_INVALID_ARGUMENT', 'body'] },
  ] as const;
  for (const c of cases) {
    const r = await app.inject({ method: 'POST', url: '/v1/runs', payload: c.payload, headers: { ...AUTH, 'content-type': c.type } });
    const e = r.json().error;
    assert.deepEqual([r.statusCode, e.code, e.details.field], c.want, `${c.name}: ${r.body}`);
  }
  const xml = await app.inject({ method: 'POST', url: '/v1/recommendations', payload: '<q/>', headers: { 'content-type': 'application/xml' } });
  assert.match(String(xml.json().error.message), /application\/json/, 'says which content-type to send');
  assert.equal((await app.inject({ method: 'GET', url: '/v1/runs' })).json().total, 0);
});

test('an empty body sent as application/json is no body: routes without one answer, the others name the missing field', async (t) => {
  const app = await testApp(t, tempDb(t));
  const json = { ...AUTH, 'content-type': 'application/json' };
  // No such study: the route ran (a 404 naming it), rather than a 400 about the empty body.
  for (const [method, url] of [['POST', '/v1/studies/nope/stop'], ['POST', '/v1/studies/nope/resume'], ['DELETE', '/v1/studies/nope']] as const) {
    const r = await app.inject({ method, url, payload: '', headers: json });
    assert.deepEqual([r.statusCode, r.json().error.code], [404, 'LMB_ERR_STUDY_NOT_FOUND'], `${method} ${url}: ${r.body}`);
  }
  const train = await app.inject({ method: 'POST', url: '/v1/surrogates/train', payload: '', headers: json });
  assert.notEqual(train.statusCode, 400, train.body);
  const runs = await app.inject({ method: 'POST', url: '/v1/runs', payload: '', headers: json });
  assert.deepEqual([runs.statusCode, runs.json().error.code, runs.json().error.details.field], [400, 'LMB_ERR_INVALID_ARGUMENT', 'files']);
});

test('POST /v1/runs: gpus is bounded as `lm-bench ingest --gpus` is, and a refused count stores nothing', async (t) => {
  const app = await testApp(t, tempDb(t));
  const body = (gpus: number) => ({ files: [{ name: 'a.json', content: vllmRun }], server_config: { max_num_seqs: 128 }, gpu: 'H100-SXM', gpus, model: 'qwen2.5-7b' });
  const r = await app.inject({ method: 'POST', url: '/v1/runs', payload: body(100_000), headers: AUTH });
  assert.deepEqual([r.statusCode, r.json().error.code, r.json().error.details.field], [400, 'LMB_ERR_INVALID_ARGUMENT', 'gpus'], r.body);
  assert.equal((await app.inject({ method: 'GET', url: '/v1/runs' })).json().total, 0);
  const ok = await app.inject({ method: 'POST', url: '/v1/runs', payload: body(8), headers: AUTH });
  assert.equal(ok.statusCode, 201, ok.body);
});

test('a datasheet whose memory size is absurd is a 400 naming gpu.memory_gb, not a 500; no study is created', async (t) => {
  const app = await testApp(t, tempDb(t));
  const sheet = (id: string, figures: Record<string, number>) => ({ id, hbm_bandwidth_gbs: 3000, bf16_tflops: 900, fp8_tflops: null, interconnect: { kind: 'pcie', bandwidth_gbs: 64 }, tdp_w: 300, ...figures });
  const question = { gpus: 1, model: 'llama-3.1-8b', workload: 'chat', candidates: 100 };
  for (const figures of [{ memory_gb: 1e308 }, { memory_gb: 1e-300 }, { memory_gb: 1e300, memory_visible_gib: 1e300 }]) {
    const r = await app.inject({ method: 'POST', url: '/v1/recommendations', payload: { ...question, gpu: sheet('acme-x', figures) } });
    assert.deepEqual([r.statusCode, r.json().error.code, r.json().error.details.field], [400, 'LMB_ERR_INVALID_ARGUMENT', 'gpu.memory_gb'], `${JSON.stringify(figures)}: ${r.body}`);
    const s = await app.inject({ method: 'POST', url: '/v1/studies', headers: AUTH, payload: { gpus: 1, model: 'llama-3.1-8b', workload: 'chat', name: 'absurd', target: 'sim', budget_trials: 2, gpu: sheet('acme-y', figures) } });
    assert.deepEqual([s.statusCode, s.json().error.details.field], [400, 'gpu.memory_gb'], s.body);
  }
  assert.equal((await app.inject({ method: 'GET', url: '/v1/studies' })).json().studies.length, 0);
});

test('POST /v1/plans: an unknown GPU in gpus names its entry', async (t) => {
  const app = await testApp(t, tempDb(t));
  const r = await app.inject({ method: 'POST', url: '/v1/plans', payload: { model: 'llama-3.1-8b', workload: 'chat', users: 5, gpus: ['H100-SXM', 'B999'] } });
  assert.deepEqual([r.statusCode, r.json().error.code, r.json().error.details.field], [400, 'LMB_ERR_UNKNOWN_GPU', 'gpus[1]'], r.body);
  const sheet = await app.inject({ method: 'POST', url: '/v1/plans', payload: { model: 'llama-3.1-8b', workload: 'chat', users: 5, gpus: ['H100-SXM', { id: 'H100-SXM', memory_gb: 80, hbm_bandwidth_gbs: 3000, bf16_tflops: 900, fp8_tflops: null, interconnect: { kind: 'pcie', bandwidth_gbs: 64 }, tdp_w: 300 }] } });
  assert.deepEqual([sheet.statusCode, sheet.json().error.details.field], [400, 'gpus[1].id'], sheet.body);
});

test('POST /v1/studies refuses a name of digits only, which /v1/studies/:id would read as another study’s id', async (t) => {
  const app = await testApp(t, tempDb(t));
  const r = await app.inject({ method: 'POST', url: '/v1/studies', headers: AUTH, payload: { name: '1', target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat', budget_trials: 2 } });
  assert.deepEqual([r.statusCode, r.json().error.code, r.json().error.details.field], [400, 'LMB_ERR_INVALID_ARGUMENT', 'name'], r.body);
  assert.equal((await app.inject({ method: 'GET', url: '/v1/studies' })).json().studies.length, 0);
});

test('a model path to a file that is not JSON is a 400 that never quotes the file', async (t) => {
  const db = tempDb(t);
  const app = await testApp(t, db, { config: { ...TEST_CONFIG, model_dirs: [dirname(db)] } });
  const secret = join(dirname(db), 'config.json');
  writeFileSync(secret, 'db_password=hunter2-SECRET\n');
  const cases = [
    ['POST', '/v1/recommendations', { gpu: 'H100-SXM', gpus: 1, model: secret, workload: 'chat' }],
    ['POST', '/v1/studies', { name: 'leak', target: 'sim', gpu: 'H100-SXM', gpus: 1, model: secret, workload: 'chat', budget_trials: 2 }],
    ['GET', `/v1/runs?model=${encodeURIComponent(secret)}`, undefined],
  ] as const;
  for (const [method, url, payload] of cases) {
    const r = await app.inject({ method, url, headers: AUTH, ...(payload === undefined ? {} : { payload }) });
    assert.deepEqual([r.statusCode, r.json().error.code, r.json().error.details.field], [400, 'LMB_ERR_MODEL_CONFIG_INVALID', 'model'], r.body);
    assert.match(r.body, /not JSON/);
    assert.doesNotMatch(r.body, /hunter2|SECRET|db_pass/, `${method} ${url} quotes the file`);
  }
});

test('a study with a long name (up to the 200 characters a name may have) is reached by it; an undecodable URL is a catalog 400', async (t) => {
  const app = await testApp(t, tempDb(t));
  const name = `long-${'n'.repeat(190)}`;
  const created = await app.inject({ method: 'POST', url: '/v1/studies', headers: AUTH, payload: { name, target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat', budget_trials: 2 } });
  assert.equal(created.statusCode, 202, created.body);
  const cancelled = await app.inject({ method: 'DELETE', url: `/v1/studies/${name}`, headers: AUTH });
  assert.deepEqual([cancelled.statusCode, cancelled.json().name], [202, name], cancelled.body);
  const got = await app.inject({ method: 'GET', url: `/v1/studies/${name}` });
  assert.deepEqual([got.statusCode, got.json().study.name], [200, name], got.body.slice(0, 300));
  for (const url of ['/v1/studies/%zz', `/v1/studies/${'x'.repeat(300)}`]) {
    const r = await app.inject({ method: 'GET', url });
    assert.deepEqual([r.statusCode, r.json().error?.code, r.json().error?.details.field], [400, 'LMB_ERR_INVALID_ARGUMENT', 'url'], r.body.slice(0, 300));
  }
});

test('a write without the token is a 401 whatever its body: the token is checked before the body is read', async (t) => {
  const app = await testApp(t, tempDb(t), { config: { body_limit_bytes: 1024 } });
  const bodies = [
    { payload: '{"files": [', type: 'application/json' },
    { payload: JSON.stringify({ files: [{ name: 'x', content: 'x'.repeat(4096) }] }), type: 'application/json' },
    { payload: '<files/>', type: 'application/xml' },
  ];
  const routes = [['POST', '/v1/runs'], ['POST', '/v1/studies'], ['POST', '/v1/studies/1/stop'], ['POST', '/v1/studies/1/resume'], ['DELETE', '/v1/studies/1'], ['POST', '/v1/surrogates/train'], ['POST', '/v1/models/train']] as const;
  for (const [method, url] of routes) {
    for (const b of bodies) {
      const r = await app.inject({ method, url, payload: b.payload, headers: { 'content-type': b.type, authorization: 'Bearer wrong-token-wrong-token' } });
      assert.deepEqual([r.statusCode, r.json().error.code], [401, 'LMB_ERR_UNAUTHORIZED'], `${method} ${url} ${b.type} ${b.payload.length}: ${r.body}`);
    }
  }
});
