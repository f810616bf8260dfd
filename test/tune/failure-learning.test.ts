import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { StudySpec, type Workload } from '../../src/domain/index.js';
import { DEFAULT_OBJECTIVES } from '../../src/optimize/objectives.js';
import { resolveConfig } from '../../src/physics/index.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { trialFailure } from '../../src/tune/failure-book.js';
import type { TuneEvent } from '../../src/tune/loop.js';
import { runStudy } from '../../src/tune/study-runner.js';
import { summarizeStudy, formatSummary } from '../../src/tune/summary.js';
import { studyRules } from '../../src/tune/failure-book.js';

/**
 * Failures as knowledge, end to end on a real SQLite file: the study believes its workload's prompts
 * are at most 1,024 tokens, but the target (the simulator fed longer prompts, as a server behind a
 * different client would see them) refuses prompts past max_model_len the way vLLM's OpenAI server
 * does. The first refusal becomes a rule on max_model_len that no later trial breaks, and a second
 * study of the same deployment starts with it.
 */
const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
const believed: Workload = {
  name: 'short-chat',
  api: 'completions',
  input_len: { dist: 'lognormal', mean: 400, std: 200, min: 16, max: 1024 },
  output_len: { dist: 'fixed', value: 64 },
  arrival: { kind: 'closed', concurrency: 16 },
  num_prompts: 48,
  ignore_eos: true,
  slo: { ttft_p99_ms: 3000, itl_p99_ms: 100 },
};
// What the server really gets: a long tail of prompts up to 3,000 tokens.
const real: Workload = { ...believed, input_len: { dist: 'lognormal', mean: 1200, std: 900, min: 16, max: 3000 } };

function spec(name: string, budget: number): StudySpec {
  return StudySpec.parse({
    name,
    space: join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'),
    hardware: { gpu: 'H100-SXM', count: 1 },
    model: 'llama-3.1-8b',
    workload: believed,
    slo: believed.slo,
    objectives: [...DEFAULT_OBJECTIVES],
    target: '{"kind":"sim"}',
    seed: 5,
    budget_trials: budget,
    budget_hours: null,
    parallel: 1,
  });
}

test('a refused prompt becomes a rule on max_model_len that the rest of the study and the next study obey', { timeout: 180_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-failures-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'h.db'));
  t.after(() => store.close());
  const hw = catalog.gpu('H100-SXM');
  const model = catalog.model('llama-3.1-8b');
  const events: TuneEvent[] = [];
  const measure = (input: Parameters<NonNullable<Parameters<typeof runStudy>[0]['measure']>>[0], ex: Parameters<NonNullable<Parameters<typeof runStudy>[0]['measure']>>[1]) => ex.run({ ...input, workload: real });
  const first = spec('first', 8);
  // The user queues a short context first (as a copied command line might): it is refused.
  const { study } = await runStudy({ store, catalog, space, spec: first, target: { kind: 'sim' }, now: Date.now, keepSurrogate: false, candidates: 5000, measure, enqueue: [{ max_model_len: 2048, max_num_batched_tokens: 2048 }], onEvent: (e) => events.push(e) });
  const trials = study.trials();
  const refused = trials.filter((x) => trialFailure(x)?.class === 'prompt_too_long');
  assert.ok(refused.length >= 1 && refused.length < 3, `refused ${refused.length}: ${JSON.stringify(trials.map((x) => [x.number, x.origin, x.config.max_model_len, x.state, x.failure_reason?.slice(0, 100), x.result?.failed]))}`);
  const firstRefusal = Math.min(...refused.map((x) => x.number));
  assert.equal(trials.find((x) => x.number === firstRefusal)?.failure_reason?.includes('requests refused'), true);
  const rules = studyRules(store, catalog, study.id);
  const rule = rules.find((r) => r.class === 'prompt_too_long');
  assert.ok(rule !== undefined, JSON.stringify(rules));
  const needed = rule.avoid[0]?.value as number;
  assert.ok(needed > 2048 && needed <= 3064, `needs ${needed}`);
  assert.match(rule.text, /^max_model_len >= [\d,]+: trials? \d+(, \d+)* failed with prompts of [\d,]+ tokens$/);
  // After the first refusal, no trial the model proposed has a context shorter than the rule's.
  for (const x of trials.filter((y) => y.number > firstRefusal && y.origin !== 'enqueued')) {
    assert.ok(resolveConfig(x.config, hw, model).max_model_len >= needed, `trial ${x.number}: ${JSON.stringify(x.config)}`);
  }
  // The rule is in the event stream, the study's history and the summary.
  assert.ok(events.some((e) => e.kind === 'rule_learned' && !e.carried && e.rule.class === 'prompt_too_long'));
  assert.equal(store.listEvents({ studyId: study.id, kind: 'failure_rule' }).length, rules.length);
  const summary = summarizeStudy({ study: study.study, trials, front: study.bestTrials(), model, stopReason: 'budget', rules });
  assert.deepEqual(summary.failures.by_class.prompt_too_long, refused.map((x) => x.number));
  assert.match(formatSummary(summary), /What failed and what we learned from it:\n {2}prompt longer than max_model_len: trials? [\d, ]+\n {2}rule: max_model_len >= /);

  // A later study of the same deployment and workload starts from the rule and loses no trial to it.
  const later: TuneEvent[] = [];
  const second = await runStudy({ store, catalog, space, spec: spec('second', 6), target: { kind: 'sim' }, now: Date.now, keepSurrogate: false, candidates: 5000, measure, enqueue: [{ max_model_len: 2048, max_num_batched_tokens: 2048 }], onEvent: (e) => later.push(e) });
  assert.ok(later.some((e) => e.kind === 'rule_learned' && e.carried && e.rule.class === 'prompt_too_long'));
  const secondTrials = second.study.trials();
  assert.ok(secondTrials.filter((x) => x.origin !== 'enqueued').every((x) => trialFailure(x)?.class !== 'prompt_too_long'), JSON.stringify(secondTrials.map((x) => [x.origin, x.config.max_model_len, trialFailure(x)?.class])));
});
