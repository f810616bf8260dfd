import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { ServiceConfig } from '../../src/http/config.js';
import { startServer } from '../../src/http/server.js';
import { AUTH, seedTrainedDb, tempDb, TOKEN } from './helpers.js';

// `POST /v1/surrogates/train` and `GET /v1/surrogates` are the names; `/v1/models/train` and
// `/v1/models` their deprecated aliases (same handlers, `Deprecation: true`). Over real HTTP on
// loopback, against a service this test starts and stops.

/** The parts of the answers this test reads; the assertions check them. */
interface Body {
  readonly models: { readonly id: number }[];
  readonly model: { readonly id: number };
  readonly error: { readonly code: string };
  readonly paths: Record<string, Record<string, { readonly deprecated?: boolean; readonly security?: unknown }>>;
}

const TRAIN = { folds: 0, members: 1, rounds: 10, seed: 2 };
const JSON_HEADERS = { 'content-type': 'application/json' };

test('the surrogate routes answer under their new names and their old ones; only the old ones say they are deprecated', { timeout: 120_000 }, async (t) => {
  const db = tempDb(t);
  await seedTrainedDb(db);
  const server = await startServer({ config: ServiceConfig.parse({ host: '127.0.0.1', port: 0 }), dbPath: db, env: { LMB_API_TOKEN: TOKEN }, logger: false, signals: false });
  t.after(() => server.close());
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const get = async (path: string) => {
    const r = await request(`${server.url}${path}`, { headersTimeout: 30_000, bodyTimeout: 30_000 });
    return { status: r.statusCode, headers: r.headers, body: (await r.body.json()) as Body };
  };
  const post = async (path: string, body: unknown, auth = true) => {
    const r = await request(`${server.url}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { ...JSON_HEADERS, ...(auth ? AUTH : {}) }, headersTimeout: 60_000, bodyTimeout: 60_000 });
    return { status: r.statusCode, headers: r.headers, body: (await r.body.json()) as Body };
  };

  const listed = await get('/v1/surrogates');
  assert.equal(listed.status, 200);
  assert.equal(listed.headers['deprecation'], undefined, 'the new name is not deprecated');
  assert.deepEqual(listed.body.models.map((m) => m.id), [1]);
  const old = await get('/v1/models');
  assert.equal(old.status, 200);
  assert.equal(old.headers['deprecation'], 'true');
  assert.equal(old.headers['link'], '</v1/surrogates>; rel="successor-version"');
  assert.deepEqual(old.body, listed.body, 'the old name answers the same');

  const trained = await post('/v1/surrogates/train', TRAIN);
  assert.equal(trained.status, 201, JSON.stringify(trained.body));
  assert.equal(trained.headers['deprecation'], undefined);
  assert.equal(trained.body.model.id, 2);
  const trainedOld = await post('/v1/models/train', TRAIN);
  assert.equal(trainedOld.status, 201, JSON.stringify(trainedOld.body));
  assert.equal(trainedOld.headers['deprecation'], 'true');
  assert.equal(trainedOld.headers['link'], '</v1/surrogates/train>; rel="successor-version"');
  assert.equal(trainedOld.body.model.id, 3);
  assert.deepEqual((await get('/v1/surrogates')).body.models.map((m) => m.id), [3, 2, 1], 'both paths saved a surrogate');

  // The old path still wants the token, and its refusal carries the header too.
  for (const path of ['/v1/surrogates/train', '/v1/models/train']) {
    const denied = await post(path, TRAIN, false);
    assert.equal(denied.status, 401, path);
    assert.equal(denied.body.error.code, 'LMB_ERR_UNAUTHORIZED');
    assert.equal(denied.headers['deprecation'], path === '/v1/models/train' ? 'true' : undefined, path);
  }
  assert.equal((await get('/v1/surrogates')).body.models.length, 3, 'a refused request trained nothing');

  const doc = (await get('/openapi.json')).body;
  assert.ok(doc.paths['/v1/surrogates/train']?.['post'] !== undefined && doc.paths['/v1/surrogates']?.['get'] !== undefined, 'the new names are documented');
  assert.equal(doc.paths['/v1/surrogates/train']?.['post']?.deprecated, undefined);
  assert.equal(doc.paths['/v1/surrogates']?.['get']?.deprecated, undefined);
  assert.equal(doc.paths['/v1/models/train']?.['post']?.deprecated, true);
  assert.equal(doc.paths['/v1/models']?.['get']?.deprecated, true);
  assert.deepEqual(doc.paths['/v1/models/train']?.['post']?.security, [{ bearer: [] }]);
  await server.close();
});
