import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimServer } from '../../src/sim/index.js';
import { createTarget } from '../../src/targets/factory.js';
import { TargetSpec } from '../../src/targets/spec.js';
import type { TrialInput } from '../../src/targets/types.js';

const input: TrialInput = {
  trial_id: 3,
  study: 'endpoint-test',
  seed: 2,
  config: { max_num_seqs: 128 },
  workload: {
    name: 'tiny-chat',
    api: 'chat',
    input_len: { dist: 'fixed', value: 48 },
    output_len: { dist: 'fixed', value: 12 },
    arrival: { kind: 'closed', concurrency: 4 },
    num_prompts: 10,
    ignore_eos: true,
  },
  hardware: { gpu: 'H100-SXM', count: 1 },
  model: 'llama-3.1-8b',
  slo: {},
};

test('the endpoint target loads a server someone already started, on the workload\'s API route', async () => {
  const server = await startSimServer({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', host: '127.0.0.1', port: 0, speed: 50 });
  try {
    const out = await createTarget(TargetSpec.parse({ kind: 'endpoint', url: server.url }), 0).runTrial(input);
    assert.equal(out.status, 'ok', out.status === 'failed' ? out.reason : '');
    if (out.status !== 'ok') return;
    assert.equal(out.result.completed, 10);
    assert.equal(out.result.total_output_tokens, 10 * 12);
    // The server's knobs are whatever it was started with: the trial's config is recorded, not applied.
    assert.deepEqual(out.result.server_config, input.config);
  } finally {
    await server.close();
  }
});

test('an endpoint that is not there fails the trial with the reason, not the study', async () => {
  const out = await createTarget(TargetSpec.parse({ kind: 'endpoint', url: 'http://127.0.0.1:1/v1' }), 0).runTrial(input);
  assert.equal(out.status, 'failed');
  if (out.status === 'failed') {
    assert.equal(out.code, 'LMB_ERR_ENDPOINT_UNREACHABLE');
    assert.ok(out.reason.length > 0);
  }
});
