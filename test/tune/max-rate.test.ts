import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSlo } from '../../src/domain/index.js';
import { createExecutor } from '../../src/targets/executor.js';
import type { TrialInput } from '../../src/targets/types.js';
import { maxRateMeasure, searchMaxRate, withRate } from '../../src/tune/max-rate.js';

const input: TrialInput = {
  trial_id: 1,
  study: 'rate',
  seed: 9,
  config: { max_num_seqs: 64, max_num_batched_tokens: 2048, max_model_len: 4096 },
  workload: {
    name: 'rate-chat',
    api: 'completions',
    input_len: { dist: 'lognormal', mean: 512, std: 256, min: 16, max: 2048 },
    output_len: { dist: 'lognormal', mean: 128, std: 64, min: 8, max: 512 },
    arrival: { kind: 'closed', concurrency: 16 },
    num_prompts: 300,
    ignore_eos: true,
  },
  hardware: { gpu: 'L4', count: 1 },
  model: 'llama-3.2-3b',
  slo: { ttft_p99_ms: 600, itl_p99_ms: 80 },
};

test('the max rate under the SLO is found by bisection in at most 5 load runs, and its run meets the SLO', async () => {
  const ex = createExecutor({ kind: 'sim' }, 1);
  try {
    const out = await maxRateMeasure(5)(input, ex);
    assert.equal(out.status, 'ok');
    if (out.status !== 'ok') return;
    const runs = out.attrs?.['rate_runs'] as { rateRps: number | 'inf'; meetsSlo: boolean }[];
    const rate = out.attrs?.['max_rate_rps'] as number;
    assert.ok(runs.length >= 1 && runs.length <= 5, `${runs.length} runs`);
    assert.equal(runs[0]?.rateRps, 'inf');
    assert.ok(rate > 0, `found a feasible rate (${rate})`);
    assert.ok(checkSlo(input.slo, out.result).every((c) => c.ok), 'the reported run meets the SLOs');
    // The bracket: every rate above the answer that was tried missed the SLOs.
    for (const r of runs) if (typeof r.rateRps === 'number' && r.rateRps > rate) assert.equal(r.meetsSlo, false);
    assert.equal(out.result.request_rate, rate);
  } finally {
    await ex.close();
  }
});

test('a configuration that meets the SLO even when saturated needs one run', async () => {
  const ex = createExecutor({ kind: 'sim' }, 1);
  try {
    const loose = { ...input, slo: { ttft_p99_ms: 1e9, itl_p99_ms: 1e9 } };
    const out = await searchMaxRate((w) => ex.run({ ...loose, workload: w }), loose.workload, loose.slo);
    assert.equal(out.status, 'ok');
    assert.equal(out.maxRate?.runs.length, 1);
    assert.deepEqual(withRate(input.workload, 3).arrival, { kind: 'poisson', rate_rps: 3 });
  } finally {
    await ex.close();
  }
});
