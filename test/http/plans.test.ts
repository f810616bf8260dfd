import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { ServiceConfig } from '../../src/http/config.js';
import { startServer } from '../../src/http/server.js';
import { PlanAnswer } from '../../src/plan/types.js';
import { SMALL_WORKLOAD, tempDb, TOKEN } from './helpers.js';

// POST /v1/plans through the real server on 127.0.0.1, its plan worker thread and a real SQLite file.

const rows = (db: string): number => {
  const d = new Database(db, { readonly: true });
  try {
    return ['studies', 'runs', 'model_specs', 'events'].reduce((a, t) => a + (d.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n, 0);
  } finally {
    d.close();
  }
};

test('POST /v1/plans answers the planner’s JSON (or its HTML page) without a token, stores nothing, and refuses bad questions with a 400 naming the field', { timeout: 120_000 }, async (t) => {
  const dbPath = tempDb(t);
  const server = await startServer({ config: ServiceConfig.parse({ host: '127.0.0.1', port: 0 }), dbPath, env: { LMB_API_TOKEN: TOKEN, HF_HUB_OFFLINE: '1' }, logger: false, signals: false });
  t.after(() => server.close());
  const post = async (body: unknown): Promise<{ status: number; type: string; text: string }> => {
    const res = await request(`${server.url}/v1/plans`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
  };
  const before = rows(dbPath);
  const datasheet = { id: 'acme-48', memory_gb: 48, hbm_bandwidth_gbs: 900, bf16_tflops: 350, fp8_tflops: 700, interconnect: { kind: 'pcie', bandwidth_gbs: 64 }, tdp_w: 350, usd_per_gpu_hour: 0.5 };
  const question = { model: 'llama-3.1-8b', workload: SMALL_WORKLOAD, rate_rps: 4, slo: { ttft_p99_ms: 2000, itl_p99_ms: 100 }, gpus: ['H100-SXM', datasheet], max_gpus: 4 };
  const ok = await post(question);
  assert.equal(ok.status, 200, ok.text);
  const a = PlanAnswer.parse(JSON.parse(ok.text));
  assert.deepEqual(a.deployments.map((d) => d.gpu).sort(), ['H100-SXM', 'acme-48']);
  const acme = a.deployments.find((d) => d.gpu === 'acme-48');
  assert.ok(acme?.feasible, acme?.reason ?? '');
  assert.equal(acme.usd_per_hour, 0.5 * (acme.gpus ?? 0), "the datasheet's own price");
  const page = await post({ ...question, gpus: ['H100-SXM'], format: 'html' });
  assert.equal(page.status, 200);
  assert.match(page.type, /text\/html/);
  assert.match(page.text, /<h1>Plan: meta-llama\/Llama-3\.1-8B-Instruct<\/h1>/);
  const old = await post({ ...question, gpus: ['H100-SXM'], vllm_version: '0.12.0' });
  assert.equal(old.status, 200, old.text);
  assert.equal(PlanAnswer.parse(JSON.parse(old.text)).vllm_version, '0.12.0', 'the release imitated is stated');
  assert.equal(a.vllm_version, null, 'none asked: a current one');
  for (const [body, field] of [
    [{ ...question, rate_rps: 0 }, 'rate_rps'],
    [{ ...question, users: 10 }, 'rate_rps'],
    [{ ...question, gpus: ['TPU-v9'] }, 'TPU-v9'],
    [{ ...question, objective: 'cheap' }, 'objective'],
    [{ ...question, vllm_version: 'soon' }, 'vllm_version'],
    [{ ...question, gpus: [{ ...datasheet, memory_gb: -1 }] }, 'gpus[0].memory_gb'],
  ] as const) {
    const bad = await post(body);
    assert.ok(bad.status === 400 || bad.status === 404, `${field}: ${bad.status} ${bad.text}`);
    assert.ok(bad.text.includes(field), `${field} named in ${bad.text}`);
  }
  assert.equal(rows(dbPath), before, 'a plan stores nothing');
});
