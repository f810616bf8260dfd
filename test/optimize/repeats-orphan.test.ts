import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { ServerConfig, StudySpec } from '../../src/domain/index.js';
import { configGroups, remeasureCandidate } from '../../src/optimize/repeats.js';
import { randomSampler } from '../../src/optimize/samplers.js';
import { createOptimizationStudy } from '../../src/optimize/study.js';
import { simulate } from '../../src/sim/index.js';
import { openStore } from '../../src/store/index.js';
import { formatSummary, summarizeStudy } from '../../src/tune/summary.js';
import { createRng } from '../../src/util/rng.js';
import { context, source } from '../surrogate/fixtures.js';

/**
 * A trial a killed controller left running is failed as stale on resume and run again under a new
 * number (store `requeueStaleTrials`). The crash says nothing of the configuration: its re-run is the
 * configuration's one measurement, and the summary counts no failure.
 */
const catalog = defaultCatalog();
const model = catalog.model('llama-3.1-8b');
const workload = { ...context.workload, num_prompts: 40 };
const spec: StudySpec = {
  name: 'orphans',
  space: 'toy',
  hardware: { gpu: 'H100-SXM', count: 1 },
  model: 'llama-3.1-8b',
  workload,
  slo: { ttft_p99_ms: 60_000 },
  objectives: [{ name: 'output_throughput_per_gpu', direction: 'maximize' }],
  target: 'sim',
  seed: 1,
  budget_trials: 8,
  budget_hours: null,
  parallel: 1,
};

test('an orphan of a crash does not make its configuration "failed once": its re-run is recommended, and the summary counts no failure', async () => {
  let now = 0;
  const store = openStore(':memory:', { now: () => ++now });
  const study = createOptimizationStudy(store, spec, randomSampler(source), createRng(3));
  const best: ServerConfig = { max_num_seqs: 64 };
  const other: ServerConfig = { max_num_seqs: 128 };
  study.enqueue(best);
  study.enqueue(other);
  const measure = (id: number, config: ServerConfig, tokS: number): void => {
    const out = simulate({ config, hardware: spec.hardware, model: spec.model, workload, seed: id, catalog });
    assert.ok(out.ok);
    study.tell(id, { state: 'complete', result: { ...out.result, output_throughput: tokS } });
  };
  // The best configuration's trial is running when the controller dies; the resume fails it as stale and queues it again.
  const [crashed] = await study.ask(1);
  assert.ok(crashed !== undefined);
  assert.deepEqual(crashed.config, best);
  const requeue = store.requeueStaleTrials(study.id, now + 1_000);
  assert.equal(requeue.requeued.length, 1);
  const asked = await study.ask(2);
  const b = asked.find((t) => t.config.max_num_seqs === 64);
  const o = asked.find((t) => t.config.max_num_seqs === 128);
  assert.ok(b !== undefined && o !== undefined && b.attrs['retry_of'] === crashed.id);
  measure(o.id, o.config, 200);
  measure(b.id, b.config, 300);

  const trials = study.trials();
  assert.equal(trials.find((t) => t.id === crashed.id)?.state, 'failed', 'the orphan failed as stale');
  const groups = configGroups(trials, spec.slo);
  const ofBest = groups.find((g) => g.config.max_num_seqs === 64);
  assert.ok(ofBest !== undefined);
  assert.equal(ofBest.feasible, true, 'measured once, meeting the SLOs');
  assert.deepEqual(ofBest.trials.map((t) => t.number), [b.number]);
  // Not taken for a tie to measure again either (300 against 200 is clear).
  assert.equal(remeasureCandidate(trials, spec.slo, spec.budget_trials), null);

  const s = summarizeStudy({ study: study.study, trials, front: study.bestTrials(), model, stopReason: 'budget' });
  assert.equal(s.recommendation?.trial, b.number, 'the best measured configuration is the pick');
  assert.equal(s.counts.failed, 0);
  assert.equal(s.counts.orphaned, 1);
  assert.match(formatSummary(s), /Trials: 3 \(2 measured, 0 failed, 0 of them failed to start; 2 meet the SLOs; 1 cut short by a stopped run and run again\)/);
});
