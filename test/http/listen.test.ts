import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { ServiceConfig } from '../../src/http/config.js';
import { startServer } from '../../src/http/server.js';
import { AUTH, tempDb, TOKEN } from './helpers.js';

test('the server listens on loopback and answers over real HTTP', async (t) => {
  const server = await startServer({
    config: ServiceConfig.parse({ host: '127.0.0.1', port: 0 }),
    dbPath: tempDb(t),
    env: { LMB_API_TOKEN: TOKEN },
    logger: false,
    signals: false,
  });
  t.after(() => server.close());
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);

  const health = await request(`${server.url}/health`);
  assert.equal(health.statusCode, 200);
  assert.equal(((await health.body.json()) as { status: string }).status, 'ok');

  const denied = await request(`${server.url}/v1/models/train`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  assert.equal(denied.statusCode, 401);
  assert.equal(((await denied.body.json()) as { error: { code: string } }).error.code, 'LMB_ERR_UNAUTHORIZED');

  const thin = await request(`${server.url}/v1/models/train`, { method: 'POST', body: '{"folds":0}', headers: { 'content-type': 'application/json', ...AUTH } });
  assert.equal(thin.statusCode, 422, 'an empty store is too thin to train on');
  assert.equal(((await thin.body.json()) as { error: { code: string } }).error.code, 'LMB_ERR_HISTORY_TOO_THIN');

  const runs = await request(`${server.url}/v1/runs?limit=5`);
  assert.deepEqual(await runs.body.json(), { total: 0, limit: 5, offset: 0, runs: [] });
  await server.close();
  // A fresh connection: the global pool may still hold a keep-alive socket the server just closed,
  // which fails differently (UND_ERR_SOCKET) and says nothing about new connections.
  const fresh = new Agent();
  t.after(() => fresh.close());
  const closed = await request(`${server.url}/health`, { dispatcher: fresh }).then(
    (r) => r.body.dump().then(() => r.statusCode),
    (err: unknown) => (err as { code?: string }).code,
  );
  assert.equal(closed, 'ECONNREFUSED', 'closed servers accept no connection');
});
