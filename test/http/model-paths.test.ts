/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call -- JSON bodies are read loosely; the assertions check their shape */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { TEST_CONFIG, tempDb, testApp } from './helpers.js';

// Recommendations need no token, and the service reads files on its own disk for a model path: what
// it answers must not tell a client what is there, unless the operator named the directories.

const config = readFileSync(new URL('../fixtures/hf-configs/phi-4.json', import.meta.url), 'utf8');
const ask = (model: string) => ({ method: 'POST' as const, url: '/v1/recommendations', payload: { gpu: 'H100-SXM', gpus: 1, model, workload: 'chat' } });

test('without model_dirs no path is read: an existing model, a missing one and a directory without config.json get the same 400', { timeout: 60_000 }, async (t) => {
  const db = tempDb(t);
  const root = dirname(db);
  mkdirSync(join(root, 'Phi-4'));
  writeFileSync(join(root, 'Phi-4', 'config.json'), config);
  mkdirSync(join(root, 'empty'));
  const app = await testApp(t, db, { env: { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: join(root, 'hub') } });
  const answers = new Set<string>();
  for (const model of [join(root, 'Phi-4'), join(root, 'Phi-4', 'config.json'), join(root, 'nothing-here'), join(root, 'empty'), '/etc/passwd', './Phi-4', '../x', '~/models/x']) {
    const r = await app.inject(ask(model));
    assert.deepEqual([r.statusCode, r.json().error.code, r.json().error.details.field], [400, 'LMB_ERR_INVALID_ARGUMENT', 'model'], `${model}: ${r.body}`);
    answers.add(r.json().error.message.replace(`"${model}"`, '"M"'));
  }
  assert.equal(answers.size, 1, [...answers].join('\n'));
  assert.match([...answers][0] ?? '', /model_dirs \(none are configured\)/);
  // A name that is no path goes to the cache and the hub, worded for a request, not the CLI.
  const unknown = await app.inject(ask('Nobody/Nothing-7B'));
  assert.equal(unknown.json().error.code, 'LMB_ERR_UNKNOWN_MODEL');
  assert.match(unknown.json().error.message, /Point model at/);
  assert.doesNotMatch(unknown.json().error.message, /--model|a path \(/);
});

test('with model_dirs a path inside is read; one outside, or a link inside leading out, is refused alike', { timeout: 60_000 }, async (t) => {
  const db = tempDb(t);
  const root = dirname(db);
  const models = join(root, 'models');
  mkdirSync(join(models, 'Phi-4'), { recursive: true });
  writeFileSync(join(models, 'Phi-4', 'config.json'), config);
  mkdirSync(join(root, 'outside'));
  writeFileSync(join(root, 'outside', 'config.json'), config);
  symlinkSync(join(root, 'outside'), join(models, 'escape'));
  const app = await testApp(t, db, { env: { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: join(root, 'hub') }, config: { ...TEST_CONFIG, model_dirs: [models] } });
  const inside = await app.inject(ask(join(models, 'Phi-4')));
  assert.equal(inside.statusCode, 200, inside.body);
  for (const model of [join(root, 'outside'), join(models, 'escape'), join(models, '..', 'outside'), `${models}-evil/Phi-4`]) {
    const r = await app.inject(ask(model));
    assert.deepEqual([r.statusCode, r.json().error.code], [400, 'LMB_ERR_INVALID_ARGUMENT'], `${model}: ${r.body}`);
    assert.match(r.json().error.message, /inside its model_dirs \(configured: /);
  }
});
