import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createExecutor } from '../../src/targets/executor.js';
import type { TrialInput } from '../../src/targets/types.js';

const base: TrialInput = {
  trial_id: 1,
  study: 'exec-test',
  seed: 3,
  config: { max_num_seqs: 64 },
  workload: {
    name: 'tiny',
    api: 'completions',
    input_len: { dist: 'fixed', value: 128 },
    output_len: { dist: 'fixed', value: 32 },
    arrival: { kind: 'closed', concurrency: 8 },
    num_prompts: 40,
    ignore_eos: true,
  },
  hardware: { gpu: 'H100-SXM', count: 1 },
  model: 'llama-3.1-8b',
  slo: {},
};

test('the sim target runs in worker threads: measured trials and launch failures both come back as data', async () => {
  const ex = createExecutor({ kind: 'sim' }, 2);
  try {
    const [ok, bad] = await Promise.all([
      ex.run(base),
      ex.run({ ...base, trial_id: 2, config: { max_num_seqs: 512, max_num_batched_tokens: 256 } }),
    ]);
    assert.equal(ok.status, 'ok');
    if (ok.status === 'ok') {
      assert.equal(ok.result.completed, 40);
      assert.ok(ok.result.output_throughput > 0);
    }
    assert.equal(bad.status, 'failed');
    if (bad.status === 'failed') {
      assert.equal(bad.code, 'LMB_ERR_STARTUP_FAILED');
      assert.equal(bad.started, false);
      assert.match(bad.reason, /max_num_batched_tokens/);
    }
    // Same seed and config in another worker: the simulator is deterministic.
    const again = await ex.run(base);
    assert.ok(again.status === 'ok' && ok.status === 'ok' && again.result.output_throughput === ok.result.output_throughput);
  } finally {
    await ex.close();
  }
});
