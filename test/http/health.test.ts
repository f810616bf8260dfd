/* eslint-disable @typescript-eslint/no-unsafe-member-access -- JSON bodies are read loosely; the assertions check their shape */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempDb, testApp } from './helpers.js';

// GET /health is what a liveness probe asks: it must not wait for the recommendation threads to finish
// the questions they are answering.

test('GET /health answers while the recommendation thread is busy, not after its question', { timeout: 120_000 }, async (t) => {
  const app = await testApp(t, tempDb(t));
  const order: string[] = [];
  const question = { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat', candidates: 5_000, seed: 11 };
  const rec = app.inject({ method: 'POST', url: '/v1/recommendations', payload: question }).then((r) => {
    order.push('recommendation');
    return r;
  });
  // Let the question reach the (one) recommendation thread first.
  await sleep(300);
  const health = await app.inject({ method: 'GET', url: '/health' });
  order.push('health');
  assert.equal(health.statusCode, 200, health.body);
  assert.equal(health.json().workers.recommend, 'ok');
  const answer = await rec;
  assert.equal(answer.statusCode, 200, answer.body.slice(0, 300));
  assert.deepEqual(order, ['health', 'recommendation']);
});

test('GET /health and GET /metrics answer when a client is over the rate limit; the API answers 429', async (t) => {
  const app = await testApp(t, tempDb(t), { config: { rate_limit: { max: 2, window_ms: 60_000 } } });
  const codes: number[] = [];
  for (let i = 0; i < 3; i++) codes.push((await app.inject({ method: 'GET', url: '/v1/studies' })).statusCode);
  assert.deepEqual(codes, [200, 200, 429]);
  assert.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  assert.equal((await app.inject({ method: 'GET', url: '/metrics' })).statusCode, 200);
  assert.equal((await app.inject({ method: 'GET', url: '/v1/runs' })).statusCode, 429);
});
