import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { priorSimulator } from '../../src/calibration/prior-simulator.js';
import type { Workload } from '../../src/domain/index.js';
import { simulatorDoubts, withDoubts } from '../../src/optimize/doubts.js';

const catalog = defaultCatalog();

/** 1,000-token prompts, 1,500-token answers on an 8B with room for 1,024 in its batch: nothing waits. */
const longAnswers = (rateRps: number, arrival: Workload['arrival'] = { kind: 'poisson', rate_rps: rateRps }): Workload => ({
  name: 'long-answers',
  api: 'completions',
  input_len: { dist: 'fixed', value: 1000 },
  output_len: { dist: 'fixed', value: 1500 },
  arrival,
  num_prompts: 300,
  ignore_eos: true,
});

const simAt = (w: Workload): ReturnType<typeof priorSimulator> => priorSimulator(null, catalog, { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: w, slo: {} });
const config = { max_num_seqs: 1024 };

test('a pick whose simulated run was too short to tell whether it keeps up is doubted, with its pace; one that kept up is not', () => {
  const doubtsAt = (w: Workload): string[] => {
    const sim = simAt(w);
    const run = sim.run(config);
    assert.ok(run.ok);
    return simulatorDoubts(config, run, sim);
  };
  // One 15-second stage of 20 req/s of 1,500-token answers: the batch grows past what the server
  // finishes, but the 300 requests arrive before any finishes, so the run cannot show whether the batch
  // would level off, and a stage cannot be run longer.
  const over = doubtsAt(longAnswers(20, { kind: 'poisson', rate_rps: 20, stages: [{ rate_rps: 20, duration_s: 15 }] }));
  assert.equal(over.length, 1, over.join('\n'));
  assert.match(over[0] ?? '', /^its simulated run of 300 requests was too short to tell whether it keeps up with the load: it worked through \d+\.\d req\/s of 1\d\.\d offered/);
  // 3 req/s: the batch turns over within the run and levels off.
  assert.deepEqual(doubtsAt(longAnswers(3)), []);
});

test('a steady open-loop load a short simulated run cannot decide is run longer, until it tells: 20 req/s of long answers is saturated', () => {
  const run = simAt(longAnswers(20)).run(config);
  assert.ok(run.ok);
  // The 300-request run was undecided (above); twice as many requests turn the batch over.
  assert.equal(run.result.completed + run.result.failed, 600);
  assert.equal(run.result.saturation?.saturated, true);
  assert.equal(run.result.saturation?.undecided, undefined);
  assert.ok((run.result.saturation?.sustained_rps ?? 0) < 0.5 * (run.result.saturation?.offered_rps ?? 0));
  assert.deepEqual(simulatorDoubts(config, run, simAt(longAnswers(20))), []);
});

test('a doubted pick is measured first and once: the same server already in run_next, its flags in another order, is not listed again', () => {
  const trust = { level: 'ok' as const, reasons: [], run_next: [{ max_num_batched_tokens: 512, max_num_seqs: 256 }, { max_num_seqs: 64 }] };
  const t = withDoubts(trust, { config: { max_num_seqs: 256, max_num_batched_tokens: 512 }, doubts: ['undecided'] });
  assert.equal(t.level, 'thin');
  assert.deepEqual(t.run_next, [{ max_num_seqs: 256, max_num_batched_tokens: 512 }, { max_num_seqs: 64 }]);
});
