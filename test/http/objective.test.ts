/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument -- JSON bodies are read loosely; the assertions check their shape */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AUTH, SMALL_WORKLOAD, seedTrainedDb, tempDb, testApp, waitFor } from './helpers.js';

/**
 * The `objective` field of POST /v1/recommendations and POST /v1/studies (issue 25 §4): validated, it
 * picks the rule the answer states (joules per token, dollars per million tokens) and a study stores it
 * with the Pareto axes it stands for, and picks its configuration by it.
 */
test('POST /v1/recommendations: objective picks the rule; an unknown or contradicted one is 400', { timeout: 120_000 }, async (t) => {
  const db = tempDb(t);
  await seedTrainedDb(db);
  const app = await testApp(t, db);
  const q = { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat' };

  const energy = await app.inject({ method: 'POST', url: '/v1/recommendations', payload: { ...q, objective: 'tokens_per_joule' } });
  assert.equal(energy.statusCode, 200, energy.body);
  const a = energy.json();
  assert.equal(a.source.kind, 'surrogate');
  assert.match(a.rule, /lowest upper bound \(mean \+ 2σ\) of predicted joules per output token/);
  assert.ok(a.best === null || a.best.predicted.energy_per_output_token_j.mean > 0);

  const usd = (await app.inject({ method: 'POST', url: '/v1/recommendations', payload: { ...q, objective: 'usd_per_mtok' } })).json();
  assert.match(usd.rule, /^the fewest dollars per million output tokens, which at one GPU type's price per GPU-hour is the highest lower bound/);
  const goodput = (await app.inject({ method: 'POST', url: '/v1/recommendations', payload: { ...q, objective: 'goodput' } })).json();
  assert.match(goodput.rule, /^the highest lower bound \(mean − 2σ\) of predicted output throughput per GPU/);
  // Within one GPU type dollars per million tokens rank as goodput per GPU: the same pick.
  assert.deepEqual(usd.best?.config, goodput.best?.config);

  const bad = await app.inject({ method: 'POST', url: '/v1/recommendations', payload: { ...q, objective: 'joules' } });
  assert.equal(bad.statusCode, 400);
  assert.deepEqual([bad.json().error.code, bad.json().error.details.field], ['LMB_ERR_INVALID_ARGUMENT', 'objective']);
  const both = await app.inject({
    method: 'POST',
    url: '/v1/recommendations',
    payload: { ...q, objective: 'tokens_per_joule', objectives: [{ name: 'output_throughput_per_gpu', direction: 'maximize' }] },
  });
  assert.equal(both.statusCode, 400);
  assert.deepEqual([both.json().error.code, both.json().error.details.field], ['LMB_ERR_INVALID_ARGUMENT', 'objective']);
  // Objectives that stand for the same objective are accepted.
  const agree = await app.inject({
    method: 'POST',
    url: '/v1/recommendations',
    payload: { ...q, objective: 'tokens_per_joule', objectives: [{ name: 'energy_per_output_token_j', direction: 'minimize' }] },
  });
  assert.equal(agree.statusCode, 200, agree.body);
});

test('POST /v1/studies: objective is stored with its axes, and the study picks by it', { timeout: 120_000 }, async (t) => {
  const db = tempDb(t);
  const app = await testApp(t, db);
  const base = { target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: SMALL_WORKLOAD, budget_trials: 3, sampler: 'random' };
  const bad = await app.inject({ method: 'POST', url: '/v1/studies', headers: AUTH, payload: { ...base, name: 'bad', objective: 'watts' } });
  assert.equal(bad.statusCode, 400);
  assert.deepEqual([bad.json().error.code, bad.json().error.details.field], ['LMB_ERR_INVALID_ARGUMENT', 'objective']);

  const created = await app.inject({ method: 'POST', url: '/v1/studies', headers: AUTH, payload: { ...base, name: 'joules', objective: 'tokens_per_joule' } });
  assert.equal(created.statusCode, 202, created.body);
  const done = await waitFor(app, '/v1/studies/joules', (d) => d.study?.state === 'done');
  assert.equal(done.study.spec.objective, 'tokens_per_joule');
  assert.deepEqual(
    done.study.spec.objectives.map((o: { name: string }) => o.name),
    ['energy_per_output_token_j', 'ttft_p99_ms'],
  );
  const rec = done.recommendation;
  assert.ok(rec !== null, 'a trial met the SLOs');
  assert.equal(rec.objective, 'tokens_per_joule');
  // The pick (the mean of its measurements) spends no more joules per token than any other configuration
  // that met the SLOs, unless that one is named as tied with it within the noise.
  const tied = new Set(rec.tied_with.map((x: { trial: number }) => x.trial));
  const others = done.trials.filter((x: { number: number; meets_slo: boolean | null }) => x.meets_slo === true && !rec.measurements.includes(x.number));
  for (const o of others) assert.ok(o.metrics.energy_per_output_token_j >= rec.measured.energy_per_output_token_j || tied.has(o.number), JSON.stringify(o.metrics));
});
