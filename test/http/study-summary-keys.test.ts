import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { ServerConfig, StudySpec, Trial } from '../../src/domain/index.js';
import { ServiceConfig } from '../../src/http/config.js';
import { startServer } from '../../src/http/server.js';
import { valuesFromResult } from '../../src/optimize/study.js';
import { resolveConfig } from '../../src/physics/resolve.js';
import { simulate } from '../../src/sim/index.js';
import { openStore } from '../../src/store/index.js';
import type { StudySummary } from '../../src/tune/summary.js';
import { trialInputOf } from '../../src/tune/study-runner.js';
import { specOf } from '../report/study/fixture.js';
import { tempDb, TOKEN } from './helpers.js';

/**
 * `GET /v1/studies/:id` compares configurations as the tuner does, as vLLM resolves them on the study's
 * GPU and model: `{}` and vLLM's defaults spelled out are one configuration, measured twice.
 */
test('the service\'s study summary takes vLLM\'s defaults spelled out for a second measurement of {}', { timeout: 120_000 }, async (t) => {
  const catalog = defaultCatalog();
  const db = tempDb(t);
  const base = specOf('spelled-defaults');
  const spec: StudySpec = { ...base, workload: { ...base.workload, num_prompts: 40 }, slo: { ttft_p99_ms: 600_000 } };
  const spelled: ServerConfig = resolveConfig({}, catalog.gpu(spec.hardware.gpu), catalog.model(spec.model));
  const store = openStore(db);
  try {
    const study = store.createStudy(spec);
    const runs: [ServerConfig, Trial['origin'], number][] = [
      [{}, 'default', 1000],
      [spelled, 'enqueued', 1010],
      [{ ...spelled, max_num_seqs: 64 }, 'space_filling', 3000],
    ];
    for (const [config, origin, tokS] of runs) {
      const trial = store.createTrial(study.id, { config, origin, state: 'running' });
      const input = trialInputOf(spec, trial);
      const out = simulate({ config, hardware: input.hardware, model: input.model, workload: input.workload, seed: input.seed, catalog });
      assert.ok(out.ok);
      const result = { ...out.result, output_throughput: tokS };
      store.completeTrial(trial.id, { values: valuesFromResult(result, spec.objectives, spec.slo, spec.hardware.count), result });
    }
    store.setStudyState(study.id, 'done');
  } finally {
    store.close();
  }

  const server = await startServer({ config: ServiceConfig.parse({ host: '127.0.0.1', port: 0 }), dbPath: db, env: { LMB_API_TOKEN: TOKEN }, logger: false, signals: false });
  t.after(() => server.close());
  const res = await request(`${server.url}/v1/studies/spelled-defaults`);
  const text = await res.body.text();
  assert.equal(res.statusCode, 200, text);
  const s = JSON.parse(text) as StudySummary;
  // Two measurements of one configuration: the study's one repeat, and the defaults' figure is their mean.
  assert.deepEqual([s.noise.source, s.noise.dof], ['repeats', 1]);
  assert.equal(s.recommendation?.trial, 2);
  assert.equal(s.recommendation?.vs_default.default_trial, 0);
  assert.ok(Math.abs((s.recommendation?.vs_default.throughput_gain_pct ?? 0) - (3000 / 1005 - 1) * 100) < 1e-6, JSON.stringify(s.recommendation?.vs_default));
  // The Pareto front names a configuration by its first trial: the spelled-out defaults are trial 0's.
  assert.ok(!s.front.includes(1), JSON.stringify(s.front));
});
