import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { request } from 'undici';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import type { Answer } from '../../src/advise/answer.js';
import { MEASURED_PREFIX } from '../../src/advise/measured.js';
import { meetsSlo, type Slo } from '../../src/domain/index.js';
import { ServiceConfig } from '../../src/http/config.js';
import { startServer } from '../../src/http/server.js';
import { openStore } from '../../src/store/index.js';
import { captureIo } from '../helpers/cli.js';
import { seedTrainedDb, tempDb, TOKEN } from './helpers.js';

/**
 * `POST /v1/recommendations` gives the history's measured evidence as `lm-bench recommend` does: with
 * no pick, the runs of the question's deployment that met its SLOs on its load are named, marked
 * measured; a run stored after the answer was cached is named too.
 */
test('with no pick, the service names the history\'s runs that met the SLOs, as the CLI does, and a run stored since', { timeout: 300_000 }, async (t) => {
  const db = tempDb(t);
  await seedTrainedDb(db, 16);
  const filter = { model: 'llama-3.1-8b', gpu: 'H100-SXM', gpuCount: 1 };
  const seeded = openStore(db);
  t.after(() => seeded.close());
  const runs = seeded.listRuns(filter);
  // The SLO the fastest-to-first-token run just meets: tight enough that the 16-run model picks nothing.
  const fastest = [...runs].sort((a, b) => a.result.p99_ttft_ms - b.result.p99_ttft_ms)[0];
  assert.ok(fastest !== undefined);
  const slo: Slo = { ttft_p99_ms: Math.ceil(fastest.result.p99_ttft_ms) + 1, itl_p99_ms: Math.ceil(fastest.result.p99_itl_ms) + 1 };
  assert.ok(meetsSlo(slo, fastest.result));

  const server = await startServer({ config: ServiceConfig.parse({ host: '127.0.0.1', port: 0 }), dbPath: db, env: { LMB_API_TOKEN: TOKEN }, logger: false, signals: false });
  t.after(() => server.close());
  const ask = async (): Promise<Answer> => {
    const res = await request(`${server.url}/v1/recommendations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat', slo, candidates: 2000 }),
    });
    const text = await res.body.text();
    assert.equal(res.statusCode, 200, text);
    return JSON.parse(text) as Answer;
  };
  const measured = (a: Answer): string[] => a.trust.reasons.filter((r) => r.startsWith(MEASURED_PREFIX));

  const a = await ask();
  assert.equal(a.best, null, 'the trained model qualifies nothing at this SLO (the case this answers)');
  const named = measured(a);
  assert.ok(named.some((r) => r.includes(`run ${fastest.id} in the history met your SLOs`)), JSON.stringify(a.trust.reasons));
  assert.equal(a.trust.level, 'thin');

  // The CLI's answer to the same question, on the same history, names the same runs in the same words.
  const io = captureIo();
  const sloFlag = `ttft_p99_ms=${slo.ttft_p99_ms},itl_p99_ms=${slo.itl_p99_ms}`;
  const args = ['recommend', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), '--db', db, '--slo', sloFlag, '--candidates', '2000', '--json'];
  assert.equal(await main(args, io), 0, io.err());
  const cli = JSON.parse(io.out()) as Answer;
  assert.equal(cli.best, null);
  assert.deepEqual(named, measured(cli));

  // A faster run stored after the answer was cached (the same question again is served from the cache): it is named first.
  const [newer] = seeded.storeRuns([{
    result: { ...fastest.result, output_throughput: fastest.result.output_throughput * 2 },
    serverConfig: { ...fastest.server_config, max_num_seqs: 7 },
    hardware: fastest.hardware,
    model: fastest.model,
    workload: fastest.workload,
    sourceFormat: 'lm_bench',
    sourcePath: null,
    contentHash: createHash('sha256').update('a run stored after the answer').digest('hex'),
  }]);
  assert.equal(newer?.status, 'new');
  const again = measured(await ask());
  assert.ok(again[0]?.includes(`run ${String(newer?.id)} in the history met your SLOs`), JSON.stringify(again));
  assert.ok(again.some((r) => r.includes(`run ${fastest.id} in the history`)), JSON.stringify(again));
});
