/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument -- JSON bodies are read loosely; the assertions check their shape */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { saveProfile } from '../../src/calibration/profiles.js';
import { priorSimulator } from '../../src/calibration/prior-simulator.js';
import { Workload } from '../../src/domain/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { openStore } from '../../src/store/index.js';
import { AUTH, seedTrainedDb, SMALL_WORKLOAD, tempDb, testApp, waitFor } from './helpers.js';

const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'ingest');
const fixtureText = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const ingestBody = (files: { name: string; content: string }[]) => ({ files, server_config: { max_num_seqs: 128 }, gpu: 'H100-SXM', model: 'qwen2.5-7b' });

test('health, metrics, the OpenAPI document and the offline docs page', async (t) => {
  const app = await testApp(t, tempDb(t));
  const health = await app.inject({ method: 'GET', url: '/health' });
  assert.equal(health.statusCode, 200);
  const h = health.json();
  assert.deepEqual([h.status, h.store, h.workers.recommend, h.studies_running, h.surrogate_id], ['ok', 'ok', 'ok', 0, null]);

  const metrics = await app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(metrics.statusCode, 200);
  assert.match(metrics.body, /lmb_http_request_duration_seconds_count\{method="GET",route="\/health",status_code="200"\} 1/);
  assert.match(metrics.body, /lmb_trials\{state="complete"\} 0/);
  assert.match(metrics.body, /lmb_studies_running 0/);

  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  assert.equal(doc.openapi, '3.1.0');
  for (const p of ['/v1/recommendations', '/v1/runs', '/v1/studies', '/v1/studies/{id}', '/v1/studies/{id}/stop', '/v1/studies/{id}/resume', '/v1/surrogates', '/v1/surrogates/train', '/v1/models', '/v1/models/train', '/health', '/metrics']) {
    assert.ok(doc.paths[p] !== undefined, `${p} documented`);
  }
  // Generated from the zod schema: the request body names its required fields.
  assert.deepEqual(doc.paths['/v1/recommendations'].post.requestBody.content['application/json'].schema.required.sort(), ['gpu', 'gpus', 'model', 'workload']);
  assert.deepEqual(doc.paths['/v1/studies'].post.security, [{ bearer: [] }]);

  const docs = await app.inject({ method: 'GET', url: '/docs' });
  assert.equal(docs.statusCode, 200);
  assert.match(String(docs.headers['content-type']), /text\/html/);
  assert.doesNotMatch(docs.body, /<script[^>]+src=|<link[^>]+href=["']?https?:/, 'no external scripts or styles');
  assert.match(docs.body, /"\/v1\/recommendations"/);
});

test('writes without the bearer token get 401 and change nothing', async (t) => {
  const db = tempDb(t);
  const app = await testApp(t, db);
  const body = ingestBody([{ name: 'a.json', content: fixtureText('vllm-serve-2025.json') }]);
  for (const headers of [{}, { authorization: 'Bearer wrong-token-wrong-token' }, { authorization: 'Basic abc' }]) {
    const r = await app.inject({ method: 'POST', url: '/v1/runs', payload: body, headers });
    assert.equal(r.statusCode, 401);
    assert.equal(r.json().error.code, 'LMB_ERR_UNAUTHORIZED');
    assert.equal(r.headers['www-authenticate'], 'Bearer');
  }
  for (const url of ['/v1/studies', '/v1/surrogates/train', '/v1/models/train', '/v1/studies/1/stop', '/v1/studies/1/resume']) {
    assert.equal((await app.inject({ method: 'POST', url, payload: {} })).statusCode, 401, url);
  }
  assert.equal((await app.inject({ method: 'GET', url: '/v1/runs' })).json().total, 0);
  assert.equal((await app.inject({ method: 'GET', url: '/v1/studies' })).json().studies.length, 0);
});

test('a service without a token refuses every write', async (t) => {
  const app = await testApp(t, tempDb(t), { token: null });
  const r = await app.inject({ method: 'POST', url: '/v1/runs', payload: {}, headers: AUTH });
  assert.equal(r.statusCode, 401);
  assert.match(r.json().error.message, /no API token configured/);
});

test('POST /v1/runs ingests all files or none; GET /v1/runs filters and pages', async (t) => {
  const app = await testApp(t, tempDb(t));
  const bad = ingestBody([
    { name: 'good.json', content: fixtureText('vllm-serve-2025.json') },
    { name: 'broken.json', content: fixtureText('broken/truncated.json') },
  ]);
  const rejected = await app.inject({ method: 'POST', url: '/v1/runs', payload: bad, headers: AUTH });
  assert.equal(rejected.statusCode, 400);
  assert.equal(rejected.json().error.code, 'LMB_ERR_INGEST_REJECTED');
  assert.deepEqual(rejected.json().error.details.rejected.map((r: { name: string }) => r.name), ['broken.json']);
  assert.equal((await app.inject({ method: 'GET', url: '/v1/runs' })).json().total, 0, 'the good file was not stored either');

  const ok = await app.inject({
    method: 'POST',
    url: '/v1/runs',
    payload: ingestBody([
      { name: 'a.json', content: fixtureText('vllm-serve-2025.json') },
      { name: 'b.jsonl', content: fixtureText('vllm-serve-append.jsonl') },
    ]),
    headers: AUTH,
  });
  assert.equal(ok.statusCode, 201, ok.body);
  const summary = ok.json();
  assert.ok(summary.accepted >= 2);
  assert.equal(summary.files.length, 2);
  const again = await app.inject({ method: 'POST', url: '/v1/runs', payload: ingestBody([{ name: 'a.json', content: fixtureText('vllm-serve-2025.json') }]), headers: AUTH });
  assert.equal(again.json().accepted, 0);
  assert.equal(again.json().skipped, 1, 'a run already stored is skipped');

  const page = (await app.inject({ method: 'GET', url: '/v1/runs?model=qwen2.5-7b&gpu=H100-SXM&config.max_num_seqs=128&limit=1' })).json();
  assert.equal(page.total, summary.accepted);
  assert.equal(page.runs.length, 1);
  assert.equal(page.runs[0].server_config.max_num_seqs, 128);
  assert.equal((await app.inject({ method: 'GET', url: '/v1/runs?config.max_num_seqs=64' })).json().total, 0);

  const unknownKnob = await app.inject({ method: 'GET', url: '/v1/runs?config.max_num_seq=128' });
  assert.equal(unknownKnob.statusCode, 400);
  assert.deepEqual([unknownKnob.json().error.code, unknownKnob.json().error.details.field], ['LMB_ERR_UNKNOWN_KNOB', 'config.max_num_seq']);
  const badValue = await app.inject({ method: 'GET', url: '/v1/runs?config.max_num_seqs=-4' });
  assert.equal(badValue.json().error.code, 'LMB_ERR_KNOB_OUT_OF_DOMAIN');
  const badGpu = await app.inject({ method: 'GET', url: '/v1/runs?gpu=B999' });
  assert.deepEqual([badGpu.statusCode, badGpu.json().error.code, badGpu.json().error.details.field], [400, 'LMB_ERR_UNKNOWN_GPU', 'gpu']);

  const unknownKnobBody = await app.inject({ method: 'POST', url: '/v1/runs', payload: { ...ingestBody([{ name: 'a.json', content: '{}' }]), server_config: { max_num_seq: 1 } }, headers: AUTH });
  assert.deepEqual([unknownKnobBody.statusCode, unknownKnobBody.json().error.code, unknownKnobBody.json().error.details.field], [400, 'LMB_ERR_UNKNOWN_KNOB', 'server_config.max_num_seq']);
  const notJson = await app.inject({ method: 'POST', url: '/v1/runs', payload: '{"files": [', headers: { ...AUTH, 'content-type': 'application/json' } });
  assert.deepEqual([notJson.statusCode, notJson.json().error.code], [400, 'LMB_ERR_INVALID_ARGUMENT']);
});

test('body size limit and rate limit answer with catalog codes', async (t) => {
  const app = await testApp(t, tempDb(t), { config: { body_limit_bytes: 1024, rate_limit: { max: 3, window_ms: 60_000 } } });
  const big = await app.inject({ method: 'POST', url: '/v1/runs', payload: { files: [{ name: 'x', content: 'x'.repeat(4096) }] }, headers: AUTH });
  assert.deepEqual([big.statusCode, big.json().error.code], [413, 'LMB_ERR_BODY_TOO_LARGE']);
  let last = 0;
  let code = '';
  for (let i = 0; i < 4; i++) {
    const r = await app.inject({ method: 'GET', url: '/v1/studies' });
    last = r.statusCode;
    if (r.statusCode === 429) code = r.json().error.code;
  }
  assert.equal(last, 429);
  assert.equal(code, 'LMB_ERR_RATE_LIMITED');
});

test('recommendations come from the trained model; unknown names are 400 with the field', async (t) => {
  const db = tempDb(t);
  const emptyDb = tempDb(t);
  const empty = await testApp(t, emptyDb);
  // An empty database: the simulator answers, labelled as simulated, with the runs that would change it.
  const none = await empty.inject({ method: 'POST', url: '/v1/recommendations', payload: { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat' } });
  assert.equal(none.statusCode, 200, none.body);
  const sim = none.json();
  assert.equal(sim.surrogate_id, null);
  assert.equal(sim.source.kind, 'simulator');
  assert.ok(sim.source.simulator.simulated >= 8);
  assert.match(sim.rule, /^simulated, not measured/);
  assert.equal(sim.trust.level, 'thin');
  assert.ok(sim.best !== null && sim.best.p_meets_slo >= 0.5, JSON.stringify(sim.best));
  assert.ok(sim.best.predicted.output_throughput_per_gpu.low < sim.best.predicted.output_throughput_per_gpu.mean);
  assert.ok(sim.measure_next.length >= 2 && sim.measure_next.length <= 3, JSON.stringify(sim.measure_next));
  for (const m of sim.measure_next) assert.match(m.vllm_serve, /^vllm serve meta-llama\/Llama-3\.1-8B-Instruct /);
  assert.deepEqual(sim.measure_next[0].config, sim.best.config, 'the pick is the first run to make');
  // What limits each configuration, from its simulated run.
  assert.equal(sim.best.diagnosis.source, 'simulated');
  assert.ok(sim.pareto.every((m: { diagnosis: { bottleneck: string } | null }) => m.diagnosis !== null && typeof m.diagnosis.bottleneck === 'string'));
  assert.equal((await empty.inject({ method: 'GET', url: '/v1/models' })).json().models.length, 0, 'answering saved nothing');
  assert.match(sim.source.simulator.profile, /^default/);
  // The release served is imitated, and the answer says so; a malformed one is a 400 naming the field.
  const old = (await empty.inject({ method: 'POST', url: '/v1/recommendations', payload: { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat', vllm_version: '0.12.0' } })).json();
  assert.match(old.source.simulator.profile, /^default \(data\/sim-profile\.yaml, vLLM 0\.12\.0\)/);
  const badRelease = await empty.inject({ method: 'POST', url: '/v1/recommendations', payload: { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat', vllm_version: 'soon' } });
  assert.equal(badRelease.statusCode, 400);
  assert.match(badRelease.body, /vllm_version/);
  // A calibrated profile stored meanwhile (`lm-bench sim calibrate`) prices the next simulated answer.
  const writer = openStore(emptyDb);
  const base = defaultCatalog().profileFor(defaultCatalog().gpu('H100-SXM'));
  saveProfile(writer, { gpu: 'H100-SXM', model: 'llama-3.1-8b', runs: 9, profile: { ...base, eta_weights: base.eta_weights * 0.7 }, metrics: {} });
  writer.close();
  const recalibrated = (await empty.inject({ method: 'POST', url: '/v1/recommendations', payload: { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat' } })).json();
  assert.doesNotMatch(recalibrated.source.simulator.profile, /^default/, JSON.stringify(recalibrated.source));
  await empty.close();

  await seedTrainedDb(db);
  const app = await testApp(t, db);
  const q = { gpu: 'h100-sxm', gpus: 1, model: 'llama-3.1-8b', workload: 'chat' };
  const r = await app.inject({ method: 'POST', url: '/v1/recommendations', payload: q });
  assert.equal(r.statusCode, 200, r.body);
  const a = r.json();
  assert.equal(a.surrogate_id, 1);
  assert.deepEqual(a.slo, { ttft_p99_ms: 350, itl_p99_ms: 50 }, "the workload's own SLOs");
  assert.ok(a.pareto.length >= 1);
  if (a.best !== null) {
    assert.match(a.vllm_command, /^vllm serve /);
    assert.ok(a.best.predicted.output_throughput_per_gpu.low <= a.best.predicted.output_throughput_per_gpu.high);
    // A model's pick is simulated for what limits it; a pick whose simulated run dies (a run-time OOM at a
    // high gpu_memory_utilization) has no diagnosis, and the rest of the answer still does.
    if (a.best.diagnosis !== null) assert.equal(a.best.diagnosis.source, 'simulated');
    else {
      const chat = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload);
      const sim = priorSimulator(null, defaultCatalog(), { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: chat, slo: a.slo });
      assert.equal(sim.simulate(a.best.config), null, 'a pick with no diagnosis is one whose simulated run fails');
      assert.equal(a.trust.level, 'thin', 'and the answer does not trust it as it stands');
      assert.ok(a.trust.reasons.some((r: string) => /^the pick: (the simulated run on this workload died|the simulated server does not start|gpu_memory_utilization=)/.test(r)), a.trust.reasons.join('\n'));
    }
  }
  const diagnosed = [a.best, ...a.pareto].filter((c: { diagnosis: { source: string } | null } | null) => c !== null && c.diagnosis !== null);
  assert.ok(diagnosed.length >= 1, 'some configuration of the answer is diagnosed');
  for (const c of diagnosed) assert.equal(c.diagnosis.source, 'simulated');
  assert.equal(a.history_runs, 25);
  assert.equal(a.trust.level === 'ok', a.trust.reasons.length === 0);
  const again = await app.inject({ method: 'POST', url: '/v1/recommendations', payload: { ...q, gpu: 'H100-SXM' } });
  assert.deepEqual(again.json(), a, 'the same question gets the same answer');

  // Training through the service (fits in the worker pool) saves a newer model, which answers next.
  const noAuth = await app.inject({ method: 'POST', url: '/v1/models/train', payload: { folds: 0 } });
  assert.equal(noAuth.statusCode, 401);
  const trained = await app.inject({ method: 'POST', url: '/v1/models/train', payload: { folds: 0, members: 1, rounds: 10, seed: 2 }, headers: AUTH });
  assert.equal(trained.statusCode, 201, trained.body);
  assert.equal(trained.json().model.id, 2);
  assert.equal(trained.json().rows, 25);
  const models = (await app.inject({ method: 'GET', url: '/v1/models' })).json().models;
  assert.deepEqual(models.map((m: { id: number }) => m.id), [2, 1]);
  const fresh = await app.inject({ method: 'POST', url: '/v1/recommendations', payload: q });
  assert.equal(fresh.json().surrogate_id, 2, 'the newer model answers');

  const cases: [Record<string, unknown>, string, string][] = [
    [{ ...q, gpu: 'B999' }, 'LMB_ERR_UNKNOWN_GPU', 'gpu'],
    [{ ...q, model: 'gpt-9' }, 'LMB_ERR_UNKNOWN_MODEL', 'model'],
    [{ ...q, workload: 'nope' }, 'LMB_ERR_WORKLOAD_INVALID', 'workload'],
    [{ ...q, gpus: 0 }, 'LMB_ERR_INVALID_ARGUMENT', 'gpus'],
    [{ ...q, color: 'red' }, 'LMB_ERR_INVALID_ARGUMENT', 'color'],
  ];
  for (const [payload, code, field] of cases) {
    const bad = await app.inject({ method: 'POST', url: '/v1/recommendations', payload });
    assert.equal(bad.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual([bad.json().error.code, bad.json().error.details.field], [code, field]);
  }
});

test('POST /v1/studies: unknown profile, GPU or knob is 400 naming the field, and nothing is created', async (t) => {
  const db = tempDb(t);
  const app = await testApp(t, db);
  const base = { name: 's1', target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: SMALL_WORKLOAD, budget_trials: 2, sampler: 'random' };
  const cases: [Record<string, unknown>, string, string][] = [
    [{ ...base, target: 'gpu-box' }, 'LMB_ERR_TARGET_PROFILE_UNKNOWN', 'target'],
    [{ ...base, gpu: 'B999' }, 'LMB_ERR_UNKNOWN_GPU', 'gpu'],
    [{ ...base, enqueue: [{ max_num_seqz: 64 }] }, 'LMB_ERR_UNKNOWN_KNOB', 'enqueue[0].max_num_seqz'],
    [{ ...base, enqueue: [{ max_num_seqs: 0 }] }, 'LMB_ERR_KNOB_OUT_OF_DOMAIN', 'enqueue[0].max_num_seqs'],
    [{ ...base, enqueue: [{ block_size: 24 }] }, 'LMB_ERR_KNOB_OUT_OF_DOMAIN', 'enqueue[0]'],
    [{ ...base, command: 'rm -rf /' }, 'LMB_ERR_INVALID_ARGUMENT', 'command'],
    [{ ...base, budget_trials: 100_000 }, 'LMB_ERR_INVALID_ARGUMENT', 'budget_trials'],
    // Two trials hold vLLM's defaults and one more: a second queued configuration would wait for ever.
    [{ ...base, enqueue: [{ max_num_seqs: 64 }, { max_num_seqs: 128 }] }, 'LMB_ERR_INVALID_ARGUMENT', 'enqueue'],
  ];
  for (const [payload, code, field] of cases) {
    const r = await app.inject({ method: 'POST', url: '/v1/studies', payload, headers: AUTH });
    assert.equal(r.statusCode, 400, `${JSON.stringify(payload)} → ${r.body}`);
    assert.deepEqual([r.json().error.code, r.json().error.details.field], [code, field]);
  }
  assert.equal((await app.inject({ method: 'GET', url: '/v1/studies' })).json().studies.length, 0);
  const missing = await app.inject({ method: 'GET', url: '/v1/studies/42' });
  assert.deepEqual([missing.statusCode, missing.json().error.code], [404, 'LMB_ERR_STUDY_NOT_FOUND']);
  const store = openStore(db, { readonly: true });
  t.after(() => store.close());
  assert.equal(store.listStudies().length, 0);
});

test('a study runs in the background to its budget; stop and resume by name', async (t) => {
  const app = await testApp(t, tempDb(t));
  const payload = { name: 'bg', target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: SMALL_WORKLOAD, budget_trials: 3, sampler: 'random', seed: 3, enqueue: [{ max_num_seqs: 64 }] };
  const created = await app.inject({ method: 'POST', url: '/v1/studies', payload, headers: AUTH });
  assert.equal(created.statusCode, 202, created.body);
  const { id } = created.json();
  assert.equal(created.headers.location, `/v1/studies/${id}`);
  const dup = await app.inject({ method: 'POST', url: '/v1/studies', payload, headers: AUTH });
  assert.deepEqual([dup.statusCode, dup.json().error.code], [409, 'LMB_ERR_STUDY_EXISTS']);

  const detail = await waitFor(app, `/v1/studies/${id}`, (d) => d.study.state === 'done' && d.active === false);
  assert.equal(detail.stop_reason, 'budget');
  assert.equal(detail.progress.counted, 3);
  assert.equal(detail.trials[0].origin, 'default');
  assert.ok(detail.trials.some((tr: { origin: string; config: { max_num_seqs?: number } }) => tr.origin === 'enqueued' && tr.config.max_num_seqs === 64), 'the enqueued configuration ran');
  assert.ok(Array.isArray(detail.front));
  // What failed and what was learned from it.
  // What failed and what was learned from it (test/tune/failure-learning.test.ts drives a study into rules).
  const failedNumbers = detail.trials.filter((tr: { state: string }) => tr.state === 'failed').map((tr: { number: number }) => tr.number);
  assert.deepEqual(Object.values(detail.failures.by_class).flat().sort(), failedNumbers.sort());
  assert.ok(Array.isArray(detail.failures.rules));
  assert.ok(detail.trials.every((tr: { state: string; failure_class: string | null }) => (tr.state === 'failed') === (tr.failure_class !== null)));
  // Every measured trial says what limited it; the others carry no diagnosis.
  assert.ok(detail.trials.every((tr: { state: string; diagnosis: { bottleneck: string } | null }) => (tr.state === 'complete') === (tr.diagnosis !== null)));

  const list = (await app.inject({ method: 'GET', url: '/v1/studies' })).json().studies;
  assert.deepEqual(list.map((s: { name: string; complete: number; active: boolean }) => [s.name, s.active]), [['bg', false]]);

  // Stop is accepted for a finished study; resume runs the loop, which finds the budget spent.
  assert.equal((await app.inject({ method: 'POST', url: '/v1/studies/bg/stop', headers: AUTH })).statusCode, 202);
  const resumed = await app.inject({ method: 'POST', url: '/v1/studies/bg/resume', headers: AUTH });
  assert.equal(resumed.statusCode, 202);
  const after = await waitFor(app, '/v1/studies/bg', (d) => d.active === false && d.study.state === 'done');
  assert.equal(after.progress.counted, 3);
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.match(metrics, /lmb_trials\{state="complete"\} [1-9]/);

  // The report (issue 8's renderer, in the report worker) and one plot.
  const svg = await app.inject({ method: 'GET', url: '/v1/studies/bg/plots/history.svg' });
  assert.equal(svg.statusCode, 200, svg.body.slice(0, 300));
  assert.equal(svg.headers['content-type'], 'image/svg+xml');
  assert.match(svg.body, /<svg[\s>]/);
  const noKind = await app.inject({ method: 'GET', url: '/v1/studies/bg/plots/pie.svg' });
  assert.deepEqual([noKind.statusCode, noKind.json().error.code], [404, 'LMB_ERR_NOT_FOUND']);
  const report = await app.inject({ method: 'GET', url: `/v1/studies/${id}/report` });
  assert.equal(report.statusCode, 200, report.body.slice(0, 300));
  assert.match(String(report.headers['content-type']), /text\/html/);
  assert.match(report.body, /study bg/);
  assert.match(report.body, /What failed and what we learned from it/);
  assert.equal((await app.inject({ method: 'GET', url: '/v1/studies/nope/report' })).statusCode, 404);
});

test('an MoE study over HTTP: gpt-oss-120b on 8 GPUs runs to its budget and its trials carry the layout knobs', async (t) => {
  const app = await testApp(t, tempDb(t));
  const payload = { name: 'moe', target: 'sim', gpu: 'H100-SXM', gpus: 8, model: 'gpt-oss-120b', workload: SMALL_WORKLOAD, budget_trials: 4, sampler: 'random', seed: 5, enqueue: [{ tensor_parallel_size: 2, data_parallel_size: 4, enable_expert_parallel: true }] };
  const created = await app.inject({ method: 'POST', url: '/v1/studies', payload, headers: AUTH });
  assert.equal(created.statusCode, 202, created.body);
  const detail = await waitFor(app, '/v1/studies/moe', (d) => d.study.state === 'done' && d.active === false);
  assert.equal(detail.progress.counted, 4);
  // vLLM's defaults put the 120B model on one H100, which has no room for its KV cache: the space's
  // memory rule (C12) forbids them, so the study does not spend a trial on them.
  assert.ok(detail.trials.every((tr: { origin: string }) => tr.origin !== 'default'), JSON.stringify(detail.trials.map((tr: { origin: string }) => tr.origin)));
  const ep = detail.trials.find((tr: { origin: string }) => tr.origin === 'enqueued');
  assert.equal(ep?.state, 'complete', JSON.stringify(ep));
  assert.equal(ep?.config.enable_expert_parallel, true);
});
