import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import { meetsSlo, type Slo } from '../../src/domain/index.js';
import { MEASURED_PREFIX, runsMeetingSlo, type MeasuredRun } from '../../src/advise/measured.js';
import type { Answer } from '../../src/advise/answer.js';
import { captureIo } from '../helpers/cli.js';
import { vllmServeCommand } from '../../src/advise/commands.js';
import { catalog, chat, dir, store } from './trained-fixture.js';

/**
 * When the trained model's intervals are too wide to pick anything, the answer still names the runs of
 * the history that met the SLOs, as measured, not predicted: the user's own evidence against a verdict
 * of "nothing qualifies".
 */

const runs: MeasuredRun[] = store.listRuns({ model: 'llama-3.1-8b', gpu: 'H100-SXM', gpuCount: 1 }).map((r) => ({ id: r.id, config: r.server_config, result: r.result, workload: r.workload, unavailable: r.meta.unavailable }));

// The SLO the fastest-to-first-token run just meets (its own p99s, rounded up): tight enough that the
// 16-run model's intervals qualify nothing, met by at least that run.
const fastest = [...runs].sort((a, b) => a.result.p99_ttft_ms - b.result.p99_ttft_ms)[0] as MeasuredRun;
const slo: Slo = { ttft_p99_ms: Math.ceil(fastest.result.p99_ttft_ms) + 1, itl_p99_ms: Math.ceil(fastest.result.p99_itl_ms) + 1 };
const sloFlag = `ttft_p99_ms=${slo.ttft_p99_ms},itl_p99_ms=${slo.itl_p99_ms}`;

async function recommend(json: boolean): Promise<string> {
  const io = captureIo();
  const args = ['recommend', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), '--db', join(dir, 'h.db'), '--slo', sloFlag, '--candidates', '2000'];
  assert.equal(await main(json ? [...args, '--json'] : args, io), 0, io.err());
  return io.out();
}

test('with no pick, `recommend` names each run of the history that met the SLOs, marked measured, in JSON and text', async () => {
  const met = runs.filter((r) => meetsSlo(slo, r.result));
  assert.ok(met.some((r) => r.id === fastest.id), 'the run the SLO was cut to meets it');
  const a = JSON.parse(await recommend(true)) as Answer;
  assert.equal(a.best, null, 'the trained model qualifies nothing at this SLO (the case this answers)');
  const measured = a.trust.reasons.filter((r) => r.startsWith(MEASURED_PREFIX));
  assert.equal(measured.length, Math.min(3, met.length) + (met.length > 3 ? 1 : 0));
  const line = measured.find((r) => r.includes(`run ${fastest.id} `));
  assert.ok(line !== undefined, JSON.stringify(measured));
  // Its own flags, as vLLM takes them, and its measured figures against the limits.
  assert.ok(line.endsWith(`: ${vllmServeCommand(catalog.model('llama-3.1-8b'), fastest.config)}`), line);
  assert.ok(Object.keys(fastest.config).length > 0, 'the run set flags, which the command must carry');
  assert.ok(line.includes(`ttft_p99_ms ${fastest.result.p99_ttft_ms.toFixed(0)} ≤ ${slo.ttft_p99_ms} ms`), line);
  assert.equal(a.trust.level, 'thin');

  const text = await recommend(false);
  const verdict = text.indexOf('No configuration is predicted to start and meet the SLOs');
  const block = text.indexOf('But your history holds measured runs that met these SLOs (MEASURED, not predicted):');
  assert.ok(verdict >= 0 && block > verdict, text);
  assert.ok(text.includes(`  - run ${fastest.id} in the history met your SLOs`), text);
  // Printed once, with the verdict, not again among the reasons not to trust the answer.
  assert.equal(text.split(`run ${fastest.id} in the history`).length, 2);
});

test('a run is evidence only on the same load, with the limit’s figure measured, and only against an SLO', () => {
  const q = { gpus: 1, workload: chat, slo };
  const met = runsMeetingSlo(runs, q);
  assert.ok(met.length > 0);
  // A differently labelled copy of the workload is the same load.
  assert.deepEqual(runsMeetingSlo(runs, { ...q, workload: { ...chat, name: 'renamed', num_prompts: 50 } }).map((r) => r.id), met.map((r) => r.id));
  // Another load (twice the users) is not.
  assert.deepEqual(runsMeetingSlo(runs, { ...q, workload: { ...chat, arrival: { kind: 'closed', concurrency: 128 } } }), []);
  // A run whose source lacked the limit's figure (stored as 0) meets nothing by it.
  assert.deepEqual(runsMeetingSlo(met.map((r) => ({ ...r, unavailable: ['p99_ttft_ms'] })), q), []);
  // A run with no workload recorded says nothing about this one.
  assert.deepEqual(runsMeetingSlo(met.map((r) => ({ ...r, workload: null })), q), []);
  // No limits: every run would "meet" them.
  assert.deepEqual(runsMeetingSlo(runs, { ...q, slo: {} }), []);
});
