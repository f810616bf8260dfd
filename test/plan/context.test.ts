import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { Workload } from '../../src/domain/index.js';
import { contextFor } from '../../src/plan/plan.js';
import { simRun } from '../../src/plan/run-plan.js';

// The context a planned replica starts with holds the workload's longest request.

const catalog = defaultCatalog();
const model = catalog.model('llama-3.1-8b');
const chat: Workload = {
  name: 'multi',
  api: 'chat',
  input_len: { dist: 'lognormal', mean: 300, std: 200, min: 16, max: 1500 },
  output_len: { dist: 'lognormal', mean: 250, std: 150, min: 16, max: 1000 },
  arrival: { kind: 'poisson', rate_rps: 2 },
  num_prompts: 300,
  ignore_eos: true,
};

test('contextFor: one request of a single-turn workload, the last turn of a conversation (every earlier message and answer)', () => {
  // 1,500 + 1,000 tokens at most: 2,500, rounded up and at least 4,096.
  assert.equal(contextFor(chat, model), 4096);
  // Six turns of up to 1,500 + 1,000 tokens: the sixth carries 15,000; before, 4,096 (one turn's).
  const multi: Workload = { ...chat, sessions: { turns: 6, concurrent: 64 } };
  assert.equal(contextFor(multi, model), 15360);
  assert.equal(contextFor({ ...multi, sessions: { turns: 1000, concurrent: 64 } }, model), model.native_context);
});

test('a multi-turn workload at the planned context loses no request (before, vLLM refused the later turns)', () => {
  const multi: Workload = { ...chat, sessions: { turns: 6, concurrent: 64 } };
  const p = simRun(catalog)({ config: { tensor_parallel_size: 1, max_model_len: contextFor(multi, model) }, gpu: 'H100-SXM', gpus: 1, model, workload: multi, seed: 1 });
  assert.ok(p.result !== null, p.failure ?? '');
  assert.equal(p.result.failed, 0);
  assert.equal(p.result.completed, 300);
});
