/* eslint-disable @typescript-eslint/no-unsafe-assignment -- JSON bodies are read loosely; the assertions check their shape */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { Workload } from '../../src/domain/index.js';
import { buildApp, type AppDeps } from '../../src/http/app.js';
import { simulateHistory } from '../../src/surrogate/sim-history.js';
import { DEFAULT_SURROGATE_SPEC } from '../../src/surrogate/surrogate.js';
import { trainFromStore } from '../../src/surrogate/train.js';
import { spaceEncoder, spaceSource } from '../../src/optimize/space-source.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/index.js';
import { createRng } from '../../src/util/rng.js';
import { loadYamlFile } from '../../src/util/yaml.js';

export const TOKEN = 'test-token-0123456789abcdef';
export const AUTH = { authorization: `Bearer ${TOKEN}` };
export const SPACE_PATH = join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml');

export function tempDb(t: TestContext, name = 'service.db'): string {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-http-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, name);
}

/** A small workload so sim trials take a fraction of a second. */
export const SMALL_WORKLOAD: Workload = Workload.parse({
  name: 'small-chat',
  api: 'completions',
  input_len: { dist: 'lognormal', mean: 256, std: 128, min: 16, max: 1024 },
  output_len: { dist: 'lognormal', mean: 64, std: 32, min: 8, max: 256 },
  arrival: { kind: 'closed', concurrency: 16 },
  num_prompts: 60,
  slo: { ttft_p99_ms: 3000, itl_p99_ms: 200 },
});

/** Simulated history (seeded) and a small surrogate trained on it, in the file at `dbPath`. */
export async function seedTrainedDb(dbPath: string, runs = 24): Promise<void> {
  const catalog = defaultCatalog();
  const space = loadSpace(SPACE_PATH);
  const w = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload);
  const ctx = { hardware: catalog.gpu('H100-SXM'), gpuCount: 1, model: catalog.model('llama-3.1-8b'), workload: w };
  const rng = createRng(9);
  const obs = simulateHistory([{ hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: w, configs: [{}, ...spaceSource(space, ctx).sample(runs, rng)] }], catalog, rng);
  const store = openStore(dbPath);
  try {
    for (const o of obs) {
      if (o.result === null) continue;
      store.storeRuns([{ result: o.result, serverConfig: o.config, hardware: o.hardware, model: o.model, workload: o.workload, sourceFormat: 'lm_bench', sourcePath: null, contentHash: createHash('sha256').update(JSON.stringify(o)).digest('hex') }]);
    }
    await trainFromStore(store, catalog, spaceEncoder(space), { spec: { ...DEFAULT_SURROGATE_SPEC, members: 2, xgb: { ...DEFAULT_SURROGATE_SPEC.xgb, rounds: 20 } }, folds: 0, seed: 1 });
  } finally {
    store.close();
  }
}

/** The service config of the tests' apps: small answers, a long grace, no rate limit to speak of. */
export const TEST_CONFIG = { recommend_candidates: 500, shutdown_grace_ms: 20_000, rate_limit: { max: 10_000, window_ms: 60_000 } } as const;

export async function testApp(t: TestContext, dbPath: string, extra: Partial<AppDeps> = {}): Promise<FastifyInstance> {
  const app = await buildApp({
    store: openStore(dbPath),
    dbPath,
    token: TOKEN,
    config: TEST_CONFIG,
    ...extra,
  });
  t.after(() => app.close());
  await app.ready();
  return app;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
export async function waitFor(app: { inject: (o: { method: 'GET'; url: string }) => Promise<{ json: () => Json }> }, url: string, ok: (d: Json) => boolean, timeoutMs = 60_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = (await app.inject({ method: 'GET', url })).json();
    if (ok(d)) return d;
    if (Date.now() > deadline) throw new Error(`timed out waiting on ${url}: ${JSON.stringify(d).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
