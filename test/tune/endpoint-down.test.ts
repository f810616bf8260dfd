import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { StudySpec } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { startSimServer } from '../../src/sim/index.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { freeLoopbackPort } from '../../src/targets/slurm/trial-run.js';
import { TargetSpec } from '../../src/targets/spec.js';
import { countsAgainstBudget, type TuneEvent } from '../../src/tune/loop.js';
import { runStudy } from '../../src/tune/study-runner.js';
import { specOf } from '../report/study/fixture.js';

/**
 * An endpoint study whose server is down: no configuration was measured, so none is blamed. The study
 * stops at the first trial with the endpoint's error, that trial left for the resume to run again, and
 * the budget untouched; resumed once the server answers, it runs its budget.
 */
const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));

test('an endpoint that does not answer stops the study with its error, failing no trial; the resume measures them', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-endpoint-down-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'h.db'));
  t.after(() => store.close());
  const base = specOf('down');
  const spec = StudySpec.parse({ ...base, workload: { ...base.workload, num_prompts: 16, arrival: { kind: 'closed', concurrency: 4 } }, budget_trials: 3 });
  // A loopback port nothing listens on.
  const port = await freeLoopbackPort();
  const target = (url: string): TargetSpec => TargetSpec.parse({ kind: 'endpoint', url });
  const events: TuneEvent[] = [];
  const run = (url: string) => runStudy({ store, catalog, space, spec, target: target(url), now: Date.now, keepSurrogate: false, candidates: 300, onEvent: (e) => events.push(e) });

  await assert.rejects(run(`http://127.0.0.1:${port}`), (e: unknown) => isLmBenchError(e, 'LMB_ERR_ENDPOINT_UNREACHABLE') && /^trial 0: .*does not answer.*the study stopped/s.test(e.message));
  const id = store.getStudy('down').id;
  assert.equal(store.getStudy(id).state, 'stopped');
  const left = store.listTrials(id);
  assert.deepEqual(left.map((tr) => [tr.number, tr.state]), [[0, 'running']], 'the first trial was left to run again, no other started');
  assert.equal(left.filter(countsAgainstBudget).length, 0, 'no budget spent');
  assert.ok(events.some((e) => e.kind === 'trial_left'));
  assert.ok(!events.some((e) => e.kind === 'trial_finished'));

  const server = await startSimServer({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', host: '127.0.0.1', port: 0, speed: 50 });
  t.after(() => server.close());
  const { summary } = await run(server.url);
  assert.equal(summary.reason, 'budget');
  const trials = store.listTrials(id);
  assert.equal(trials.filter((tr) => tr.state === 'complete').length, 3, JSON.stringify(trials.map((tr) => [tr.number, tr.state, tr.failure_reason])));
  // The defaults trial the outage interrupted ran again (as a re-queued copy), and was measured.
  assert.ok(trials.some((tr) => tr.state === 'complete' && Object.keys(tr.config).length === 0));
});
