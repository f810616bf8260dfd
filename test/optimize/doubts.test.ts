import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { priorSimulator } from '../../src/calibration/prior-simulator.js';
import type { Workload } from '../../src/domain/index.js';
import { simulatorDoubts } from '../../src/optimize/doubts.js';

const catalog = defaultCatalog();

/** 1,000-token prompts, 1,500-token answers on an 8B with room for 1,024 in its batch: nothing waits. */
const longAnswers = (rateRps: number): Workload => ({
  name: 'long-answers',
  api: 'completions',
  input_len: { dist: 'fixed', value: 1000 },
  output_len: { dist: 'fixed', value: 1500 },
  arrival: { kind: 'poisson', rate_rps: rateRps },
  num_prompts: 300,
  ignore_eos: true,
});

test('a pick whose simulated run was too short to tell whether it keeps up is doubted, with its pace; one that kept up is not', () => {
  const config = { max_num_seqs: 1024 };
  const doubtsAt = (rateRps: number): string[] => {
    const sim = priorSimulator(null, catalog, { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: longAnswers(rateRps), slo: {} });
    const run = sim.run(config);
    assert.ok(run.ok);
    return simulatorDoubts(config, run, sim);
  };
  // 20 req/s of 1,500-token answers: the batch grows past what the server finishes, but the 300 requests
  // arrive in 15 s, before any finishes, so the run cannot show whether the batch would level off.
  const over = doubtsAt(20);
  assert.equal(over.length, 1, over.join('\n'));
  assert.match(over[0] ?? '', /^its simulated run of 300 requests was too short to tell whether it keeps up with the load: it worked through \d+\.\d req\/s of 1\d\.\d offered/);
  // 3 req/s: the batch turns over within the run and levels off.
  assert.deepEqual(doubtsAt(3), []);
});
