import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { PlanAnswer } from '../../src/plan/types.js';
import { Health, IngestResponse, RecommendationResponse, RunsPage, StudyAccepted, StudyDetail, StudyList, SurrogateList, TrainResponse } from '../../src/http/schemas.js';
import { AUTH, seedTrainedDb, SMALL_WORKLOAD, tempDb, testApp, waitFor } from './helpers.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';

// Every JSON answer of the service, parsed with the schema its route declares (issue 27 §1): the real
// app on loopback, each route driven once to a success, the body checked to hold exactly the keys the
// schema names (a key the schema lacks fails, as a camelCase one would). The schema is the route's own:
// its JSON Schema is the one /openapi.json states for that route, so the document describes what is sent.

const SCHEMAS: Record<string, z.ZodType> = {
  'GET /health': Health,
  'POST /v1/recommendations': RecommendationResponse,
  'POST /v1/plans': PlanAnswer,
  'POST /v1/runs': IngestResponse,
  'GET /v1/runs': RunsPage,
  'POST /v1/studies': StudyAccepted,
  'GET /v1/studies': StudyList,
  'GET /v1/studies/{id}': StudyDetail,
  'POST /v1/studies/{id}/stop': StudyAccepted,
  'DELETE /v1/studies/{id}': StudyAccepted,
  'POST /v1/studies/{id}/resume': StudyAccepted,
  'POST /v1/surrogates/train': TrainResponse,
  'GET /v1/surrogates': SurrogateList,
  'POST /v1/models/train': TrainResponse,
  'GET /v1/models': SurrogateList,
};

interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
}

const jsonSchemaOf = (s: z.ZodType): unknown => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { io: 'output', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  return rest;
};

test('every route answers what its schema declares, and the OpenAPI document states that schema', { timeout: 300_000 }, async (t) => {
  const db = tempDb(t);
  await seedTrainedDb(db);
  const app = await testApp(t, db);
  // An empty history: the simulator answers, the other shape of `source`.
  const empty = await testApp(t, tempDb(t));
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<Doc>();
  const checked = new Set<string>();
  interface Sent {
    readonly payload?: unknown;
    readonly headers?: Record<string, string>;
    /** The app asked (default: the one with a trained surrogate). */
    readonly on?: typeof app;
  }
  const check = async (method: 'GET' | 'POST' | 'DELETE', route: string, url: string, sent: Sent = {}): Promise<unknown> => {
    const { payload, headers = {}, on = app } = sent;
    const key = `${method} ${route}`;
    const schema = SCHEMAS[key];
    assert.ok(schema !== undefined, `no schema for ${key}`);
    const r = await on.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
    assert.ok(r.statusCode >= 200 && r.statusCode < 300, `${key}: ${r.statusCode} ${r.body.slice(0, 500)}`);
    const body: unknown = r.json();
    assertMatchesSchema(schema, body, key);
    const [status] = Object.keys(doc.paths[route]?.[method.toLowerCase()]?.responses ?? {});
    assert.equal(status, String(r.statusCode), `${key}: the document's status`);
    assert.deepEqual(doc.paths[route]?.[method.toLowerCase()]?.responses[status]?.content?.['application/json']?.schema, jsonSchemaOf(schema), `${key}: the document states the route's schema`);
    checked.add(key);
    return body;
  };

  await check('GET', '/health', '/health');
  const question = { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat', candidates: 500 };
  const answered = (await check('POST', '/v1/recommendations', '/v1/recommendations', { payload: question })) as { surrogate_id: number | null };
  assert.equal(answered.surrogate_id, 1, 'the trained surrogate answered');
  const simulated = (await check('POST', '/v1/recommendations', '/v1/recommendations', { payload: question, on: empty })) as { surrogate_id: number | null; source: { kind: string } };
  assert.deepEqual([simulated.surrogate_id, simulated.source.kind], [null, 'simulator']);
  // Nothing meets these SLOs: `nearest` is filled, from the surrogate and from the simulator.
  for (const on of [app, empty]) {
    const near = (await check('POST', '/v1/recommendations', '/v1/recommendations', { payload: { ...question, slo: { ttft_p99_ms: 5, itl_p99_ms: 1 } }, on })) as { best: unknown; nearest: unknown };
    assert.deepEqual([near.best, near.nearest === null], [null, false]);
  }
  await check('POST', '/v1/plans', '/v1/plans', { payload: { model: 'llama-3.1-8b', workload: 'chat', rate_rps: 2, gpus: ['H100-SXM', 'L40S'], max_gpus: 2 } });

  const fixture = readFileSync(join(PROJECT_ROOT, 'test', 'fixtures', 'ingest', 'vllm-serve-2025.json'), 'utf8');
  await check('POST', '/v1/runs', '/v1/runs', { payload: { files: [{ name: 'a.json', content: fixture }], gpu: 'H100-SXM', model: 'llama-3.1-8b', server_config: { max_num_seqs: 64 } }, headers: AUTH });
  await check('GET', '/v1/runs', '/v1/runs?limit=5');

  const study = { name: 'schemas', target: 'sim', gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: SMALL_WORKLOAD, budget_trials: 2, sampler: 'random', seed: 1 };
  await check('POST', '/v1/studies', '/v1/studies', { payload: study, headers: AUTH });
  await waitFor(app, '/v1/studies/schemas', (d: { active: boolean; study: { state: string } }) => !d.active && d.study.state === 'done', 120_000);
  await check('GET', '/v1/studies', '/v1/studies');
  await check('GET', '/v1/studies/{id}', '/v1/studies/schemas');
  await check('POST', '/v1/studies/{id}/stop', '/v1/studies/schemas/stop', { headers: AUTH });
  await check('POST', '/v1/studies/{id}/resume', '/v1/studies/schemas/resume', { headers: AUTH });
  await waitFor(app, '/v1/studies/schemas', (d: { active: boolean }) => !d.active, 120_000);
  await check('DELETE', '/v1/studies/{id}', '/v1/studies/schemas', { headers: AUTH });

  const train = { folds: 0, members: 1, rounds: 10, seed: 2 };
  await check('POST', '/v1/surrogates/train', '/v1/surrogates/train', { payload: train, headers: AUTH });
  await check('GET', '/v1/surrogates', '/v1/surrogates');
  await check('POST', '/v1/models/train', '/v1/models/train', { payload: train, headers: AUTH });
  await check('GET', '/v1/models', '/v1/models');

  // Coverage: every route the document gives a JSON answer was driven here.
  const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => Object.values(op.responses).some((r, i) => i === 0 && r.content?.['application/json']?.schema !== undefined))
      .map(([m]) => `${m.toUpperCase()} ${path}`),
  );
  assert.deepEqual([...checked].sort(), documented.sort());
});
