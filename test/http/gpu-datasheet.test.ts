/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call -- JSON bodies are read loosely; the assertions check their shape */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { ServiceConfig } from '../../src/http/config.js';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { AUTH, SMALL_WORKLOAD, tempDb, TOKEN } from './helpers.js';

// `gpu` as a datasheet sent inline (a client cannot name a file on the service's disk), through the
// real server on 127.0.0.1, a real SQLite file and the real recommendation, study and trial worker
// threads, none of whose catalogs list the GPU.

const BIN = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));

const DATASHEET = {
  id: 'acme-96',
  name: 'Acme Tensor 96',
  memory_gb: 96,
  hbm_bandwidth_gbs: 2000,
  bf16_tflops: 600,
  fp8_tflops: 1200,
  interconnect: { kind: 'pcie', bandwidth_gbs: 128 },
  tdp_w: 600,
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function start(t: TestContext, dbPath: string): Promise<RunningServer> {
  const server = await startServer({
    config: ServiceConfig.parse({ host: '127.0.0.1', port: 0, recommend_candidates: 500, shutdown_grace_ms: 20_000 }),
    dbPath,
    env: { LMB_API_TOKEN: TOKEN },
    logger: false,
    signals: false,
  });
  t.after(() => server.close());
  return server;
}

/** `lm-bench serve` in a process of its own (nothing registered in this one carries over), on a free loopback port. */
async function serveProcess(t: TestContext, dbPath: string): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--db', dbPath, '--quiet'], { cwd: PROJECT_ROOT, env: { ...process.env, LMB_API_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  return new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m?.[1] !== undefined) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${String(code)}: ${stderr}`)));
  });
}

async function call(server: RunningServer | string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await request(`${typeof server === 'string' ? server : server.url}${path}`, {
    method,
    headers: { ...AUTH, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.statusCode, json: await res.body.json() };
}

function counts(db: string): Record<string, number> {
  const d = new Database(db, { readonly: true });
  try {
    const n = (table: string): number => (d.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { studies: n('studies'), trials: n('trials'), runs: n('runs'), model_specs: n('model_specs'), models: n('models'), events: n('events') };
  } finally {
    d.close();
  }
}

const question = (gpu: unknown) => ({ gpu, gpus: 1, model: 'llama-3.1-8b', workload: SMALL_WORKLOAD });

test('POST /v1/recommendations takes a datasheet inline and answers on its figures; a bad field is a 400 naming it; nothing is stored', { timeout: 180_000 }, async (t) => {
  const db = tempDb(t);
  const server = await start(t, db);
  const before = counts(db);

  const big = await call(server, 'POST', '/v1/recommendations', question(DATASHEET));
  assert.equal(big.status, 200, JSON.stringify(big.json));
  assert.equal(big.json.source.kind, 'simulator');
  assert.ok(String(big.json.vllm_command).startsWith('vllm serve '), big.json.vllm_command);
  assert.match(String(big.json.enqueue_command), /--gpu acme-96 /);
  // Another card under the same id: its own answer, never the cached one of the first.
  const small = await call(server, 'POST', '/v1/recommendations', question({ ...DATASHEET, memory_gb: 24, hbm_bandwidth_gbs: 600 }));
  assert.equal(small.status, 200, JSON.stringify(small.json));
  assert.notDeepEqual(small.json.best?.predicted, big.json.best?.predicted, 'priced on the figures sent');

  const bad: [unknown, string][] = [
    [{ ...DATASHEET, memory_gb: -1 }, 'gpu.memory_gb'],
    [{ ...DATASHEET, interconnect: { kind: 'carrier-pigeon', bandwidth_gbs: 1 } }, 'gpu.interconnect.kind'],
    [{ ...DATASHEET, colour: 'red' }, 'gpu.colour'],
    [{ ...DATASHEET, id: undefined }, 'gpu.id'],
    [{ ...DATASHEET, id: 'H100-SXM' }, 'gpu.id'],
  ];
  for (const [gpu, field] of bad) {
    const r = await call(server, 'POST', '/v1/recommendations', question(gpu));
    assert.equal(r.status, 400, `${field}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json.error.code, 'LMB_ERR_INVALID_ARGUMENT');
    assert.equal(r.json.error.details.field, field);
    assert.match(r.json.error.message, /^body\.gpu/);
  }
  const study = { name: 'rejected', target: 'sim', ...question({ ...DATASHEET, memory_gb: -1 }), budget_trials: 2, sampler: 'random' };
  const refused = await call(server, 'POST', '/v1/studies', study);
  assert.equal(refused.status, 400, JSON.stringify(refused.json));
  assert.equal(refused.json.error.details.field, 'gpu.memory_gb');
  assert.deepEqual(counts(db), before, 'questions and refused requests write nothing');

  // The document is generated from the same schema: `gpu` is a name or the datasheet's fields.
  const doc = await call(server, 'GET', '/openapi.json');
  const gpu = doc.json.paths['/v1/recommendations'].post.requestBody.content['application/json'].schema.properties.gpu;
  assert.equal(gpu.anyOf.length, 2);
  assert.ok(gpu.anyOf.some((s: { properties?: Record<string, unknown>; required?: string[] }) => s.properties?.['memory_gb'] !== undefined && s.required?.includes('id') === true), JSON.stringify(gpu));
  // The bounds it states are the ones checked: a size in MiB (nvidia-smi's 81559) is past them.
  const sheet = gpu.anyOf.find((s: { properties?: Record<string, { maximum?: number }> }) => s.properties?.['memory_gb'] !== undefined);
  assert.equal(sheet.properties.memory_gb.maximum, 2048);
  const mib = await call(server, 'POST', '/v1/recommendations', question({ ...DATASHEET, memory_gb: 81559 }));
  assert.deepEqual([mib.status, mib.json.error.details.field], [400, 'gpu.memory_gb'], JSON.stringify(mib.json));
  assert.match(mib.json.error.message, /MiB/);
});

test('POST /v1/studies with a datasheet runs its trials in worker threads and keeps it; after a restart the study and the GPU id still answer; other figures under its id are refused', { timeout: 240_000 }, async (t) => {
  const db = tempDb(t);
  const server = await start(t, db);
  const payload = { name: 'acme', target: 'sim', ...question(DATASHEET), budget_trials: 2, sampler: 'random', seed: 2 };
  const created = await call(server, 'POST', '/v1/studies', payload);
  assert.equal(created.status, 202, JSON.stringify(created.json));
  const deadline = Date.now() + 120_000;
  let done: Json;
  for (;;) {
    done = (await call(server, 'GET', '/v1/studies/acme')).json;
    if (done.active === false && (done.counts?.complete ?? 0) + (done.counts?.failed ?? 0) >= 2) break;
    if (Date.now() > deadline) throw new Error(`study never finished: ${JSON.stringify(done).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(done.counts.complete, 2, `every trial was measured on the carried datasheet: ${JSON.stringify(done.trials.map((x: { failure_reason: unknown }) => x.failure_reason))}`);
  assert.equal(done.study.spec.hardware.gpu, 'acme-96');
  assert.deepEqual({ ...done.study.spec.hardware_spec, source: undefined }, { ...DATASHEET, aliases: [], vendor: 'nvidia', arch: 'custom', compute_capability: null, platform: 'cuda', memory_visible_gib: 95.04, source: undefined });
  assert.equal(done.study.spec.hardware_spec.source, 'datasheet figures sent to the service');

  const runs = await call(server, 'GET', '/v1/runs?gpu=acme-96');
  assert.equal(runs.status, 200, JSON.stringify(runs.json));
  assert.equal(runs.json.total, 2);
  const other = await call(server, 'POST', '/v1/studies', { ...payload, name: 'acme-small', gpu: { ...DATASHEET, memory_gb: 24 } });
  assert.equal(other.status, 400, JSON.stringify(other.json));
  assert.equal(other.json.error.details.field, 'gpu');
  assert.match(other.json.error.message, /other datasheet figures \(study "acme"\)/);
  const before = counts(db);
  await server.close();

  // A new process: the datasheet comes back from the study's spec.
  const again = await serveProcess(t, db);
  // By its id first (before anything reads the study): the store registered the datasheet as it opened.
  const byName = await call(again, 'POST', '/v1/recommendations', question('acme-96'));
  assert.equal(byName.status, 200, JSON.stringify(byName.json));
  assert.ok(String(byName.json.vllm_command).startsWith('vllm serve '), byName.json.vllm_command);
  const detail = await call(again, 'GET', '/v1/studies/acme');
  assert.equal(detail.status, 200, JSON.stringify(detail.json));
  assert.equal(detail.json.counts.complete, 2);
  const report = await request(`${again}/v1/studies/acme/report`);
  assert.equal(report.statusCode, 200, await report.body.text());
  await report.body.dump();
  assert.deepEqual(counts(db), before, 'the restart and the reads stored nothing');
});
