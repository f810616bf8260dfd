import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { StudySpec, type Workload } from '../../src/domain/index.js';
import { DEFAULT_OBJECTIVES } from '../../src/optimize/objectives.js';
import { resolveConfig } from '../../src/physics/index.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { TargetSpec } from '../../src/targets/spec.js';
import { studyRules, trialFailure } from '../../src/tune/failure-book.js';
import { runStudy } from '../../src/tune/study-runner.js';
import { formatSummary, summarizeStudy } from '../../src/tune/summary.js';

/**
 * lm-bench against another engine through the command target, as in issue 29: a harness that maps the
 * trial's knobs to llama-server's flags (test/fixtures/targets/llama-harness.mjs, a real child process
 * per trial). llama-server refuses more than 64 slots and KV caches past its memory in its own words,
 * and a run can lose requests. What failed must teach, and lost requests must never pass as clean.
 */
const catalog = defaultCatalog();
const hw = catalog.gpu('H100-SXM');
const model = catalog.model('llama-3.1-8b');
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
const harness = fileURLToPath(new URL('../fixtures/targets/llama-harness.mjs', import.meta.url));
const workload: Workload = {
  name: 'llama-chat',
  api: 'chat',
  input_len: { dist: 'fixed', value: 256 },
  output_len: { dist: 'fixed', value: 64 },
  arrival: { kind: 'closed', concurrency: 8 },
  num_prompts: 48,
  ignore_eos: true,
  slo: { ttft_p99_ms: 3000, itl_p99_ms: 100 },
};

function spec(name: string, budget: number): StudySpec {
  return StudySpec.parse({
    name,
    space: join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'),
    hardware: { gpu: 'H100-SXM', count: 1 },
    model: 'llama-3.1-8b',
    workload,
    slo: workload.slo,
    objectives: [...DEFAULT_OBJECTIVES],
    target: 'command',
    seed: 3,
    budget_trials: budget,
    budget_hours: null,
    parallel: 1,
  });
}

const target = (lose: number): TargetSpec => TargetSpec.parse({ kind: 'command', command: `${process.execPath} ${harness}`, timeout_ms: 30_000, env: { LMB_TEST_LOSE: String(lose) } });

test("llama-server's slot limit and KV-cache failures teach rules that no later trial breaks", { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-llama-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'h.db'));
  t.after(() => store.close());
  // A long context at the slot limit: more KV cache than the server can allocate.
  const { study } = await runStudy({ store, catalog, space, spec: spec('slots', 6), target: target(0), now: Date.now, keepSurrogate: false, candidates: 3000, enqueue: [{ max_num_seqs: 64, max_model_len: 131072 }] });
  const trials = study.trials();
  const byNumber = new Map(trials.map((x) => [x.number, x]));
  // vLLM's defaults, sent explicitly, ask llama-server for more slots than it has: a stated bound, not "unknown".
  assert.equal(byNumber.get(0)?.origin, 'default');
  assert.equal(trialFailure(byNumber.get(0) ?? { attrs: {} })?.class, 'knob_limit', byNumber.get(0)?.failure_reason ?? '');
  assert.equal(trialFailure(byNumber.get(1) ?? { attrs: {} })?.class, 'kv_cache_too_small', byNumber.get(1)?.failure_reason ?? '');
  const rules = studyRules(store, catalog, study.id);
  assert.ok(rules.some((r) => r.class === 'knob_limit' && r.text.startsWith('max_num_seqs <= 64: trial 0')), JSON.stringify(rules.map((r) => r.text)));
  assert.ok(rules.some((r) => r.class === 'kv_cache_too_small' && r.trials.some((x) => x.number === 1)), JSON.stringify(rules.map((r) => r.text)));
  // Nothing the tuner proposed after the defaults asked for more than 64 slots: the failure is not repeated.
  for (const x of trials.filter((y) => y.origin !== 'default' && y.origin !== 'enqueued')) {
    assert.ok(resolveConfig(x.config, hw, model).max_num_seqs <= 64, `trial ${x.number} (${x.origin}): ${JSON.stringify(x.config)} ${x.failure_reason ?? ''}`);
  }
  assert.ok(trials.some((x) => x.state === 'complete'), 'the rest measured');
});

test('a trial that lost more than 5% of its requests fails with the counts and the errors; fewer lost still miss the SLOs', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-llama-lost-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'h.db'));
  t.after(() => store.close());
  const small = [{ max_num_seqs: 32, max_model_len: 8192 }, { max_num_seqs: 48, max_model_len: 8192 }];

  // The run: 19 of 48 requests lost in every trial.
  const lossy = await runStudy({ store, catalog, space, spec: spec('lossy', 3), target: target(19), now: Date.now, keepSurrogate: false, candidates: 3000, enqueue: small });
  const lt = lossy.study.trials().filter((x) => x.origin === 'enqueued');
  assert.equal(lt.length, 2);
  for (const x of lt) {
    assert.equal(x.state, 'failed');
    assert.equal(x.started, true);
    assert.match(x.failure_reason ?? '', /^19 of 48 requests lost \(40%; a trial may lose at most 5%\): 13× HTTP 503: \{"error":\{"code":503,"message":"Loading model"/);
    assert.match(x.failure_reason ?? '', /6× HTTP 500: .*slot unavailable/);
  }
  const ls = summarizeStudy({ study: lossy.study.study, trials: lossy.study.trials(), front: lossy.study.bestTrials(), model, stopReason: 'budget' });
  assert.equal(ls.recommendation, null, 'no recommendation rests on trials that lost 40% of their requests');
  assert.deepEqual(ls.trials.filter((x) => x.origin === 'enqueued').map((x) => x.requests), [{ lost: 19, total: 48 }, { lost: 19, total: 48 }]);
  assert.match(formatSummary(ls), /Requests lost \(a trial losing more than 5% failed; fewer count as SLO misses\):\n {2}trial \d+: lost 19 of 48 requests \(failed\)/);

  // 2 of 48 (4%): measured, but a p99 SLO cannot hold with 4% of the requests missing, so goodput is 0.
  const few = await runStudy({ store, catalog, space, spec: spec('few-lost', 3), target: target(2), now: Date.now, keepSurrogate: false, candidates: 3000, enqueue: small });
  const ft = few.study.trials().filter((x) => x.origin === 'enqueued');
  assert.ok(ft.length >= 1);
  const fs = summarizeStudy({ study: few.study.study, trials: few.study.trials(), front: few.study.bestTrials(), model, stopReason: 'budget' });
  for (const x of ft) {
    assert.equal(x.state, 'complete');
    const row = fs.trials.find((y) => y.number === x.number);
    assert.equal(row?.meets_slo, false, 'its surviving requests alone meet the SLO; the lost ones do not');
    assert.deepEqual(row?.requests, { lost: 2, total: 48 });
  }
  assert.equal(fs.recommendation, null);
  assert.deepEqual(few.study.bestTrials(), []);
});
