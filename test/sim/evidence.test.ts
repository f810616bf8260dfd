import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerEvidence, type Arrival, type ServerConfig, type Slo, type Workload } from '../../src/domain/index.js';
import { simulate } from '../../src/sim/index.js';
import { frontendDelayS } from '../../src/sim/engine.js';
import { defaultCatalog } from '../../src/catalog/index.js';

// A simulated run carries the same evidence a measured one scrapes, from the engine's own state, and
// its diagnosis: each regime of test/diagnose/regimes.test.ts again, in virtual time.
const workload = (inputTokens: number, outputTokens: number, arrival: Arrival, n: number): Workload => ({
  name: 'sim-evidence', api: 'completions', input_len: { dist: 'fixed', value: inputTokens }, output_len: { dist: 'fixed', value: outputTokens }, arrival, num_prompts: n, ignore_eos: true,
});

function sim(config: ServerConfig, w: Workload, slo: Slo) {
  const out = simulate({ config, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: w, seed: 3, slo, runtimeFailures: false });
  assert.ok(out.ok);
  const server = ServerEvidence.parse(out.result.evidence?.server);
  assert.equal(out.result.evidence?.client, null, 'no client in virtual time');
  return { result: out.result, server, d: out.result.diagnosis };
}

test('the phases add up: mean TTFT = front end + queue + prefill, and E2EL − TTFT = decode', () => {
  const { result, server } = sim({ max_num_seqs: 8 }, workload(512, 64, { kind: 'closed', concurrency: 32 }, 128), {});
  const profile = defaultCatalog().profileFor(defaultCatalog().gpu('H100-SXM'));
  const frontMs = frontendDelayS(profile, 512) * 1000;
  const parts = frontMs + (server.queue_ms_mean ?? 0) + (server.prefill_ms_mean ?? 0);
  assert.ok(Math.abs(result.mean_ttft_ms - parts) < 1e-6 * result.mean_ttft_ms + 1e-6, `${result.mean_ttft_ms} vs ${parts}`);
  assert.ok(Math.abs(result.mean_e2el_ms - result.mean_ttft_ms - (server.decode_ms_mean ?? 0)) < 1e-6);
  assert.equal(server.source, 'simulator');
  assert.equal(server.running_limit, 8);
  assert.ok((server.running_mean ?? 0) <= 8 && (server.running_mean ?? 0) > 6, `running mean ${server.running_mean}`);
  assert.ok((server.waiting_share ?? 0) > 0.9 && (server.capped_share ?? 0) > 0.8, JSON.stringify(server));
});

test('each regime of the simulator is diagnosed as its measured twin is', () => {
  const admission = sim({ max_num_seqs: 4 }, workload(256, 64, { kind: 'closed', concurrency: 32 }, 96), { ttft_p99_ms: 100 });
  assert.equal(admission.d?.bottleneck, 'admission', admission.d?.summary);
  assert.equal(admission.d?.source, 'simulated');

  const kv = sim({ gpu_memory_utilization: 0.26, max_num_seqs: 256, max_model_len: 4096 }, workload(1500, 200, { kind: 'closed', concurrency: 64 }, 96), { ttft_p99_ms: 1000, itl_p99_ms: 50 });
  assert.equal(kv.d?.bottleneck, 'kv_cache', kv.d?.summary);
  assert.ok((kv.server.preemptions ?? 0) > 0 && (kv.server.kv_usage_peak ?? 0) > 0.9);
  assert.equal(kv.result.server_metrics?.num_preemptions, kv.server.preemptions);

  const prefill = sim({ max_num_batched_tokens: 512 }, workload(6000, 8, { kind: 'poisson', rate_rps: 4 }, 48), { ttft_p99_ms: 300 });
  assert.equal(prefill.d?.bottleneck, 'prefill', prefill.d?.summary);
  assert.ok((prefill.server.step_tokens_mean ?? 0) > 400, 'steps full of prompt tokens');

  const decode = sim({ max_num_seqs: 256 }, workload(128, 256, { kind: 'closed', concurrency: 256 }, 256), { itl_p99_ms: 15 });
  assert.equal(decode.d?.bottleneck, 'decode', decode.d?.summary);

  const none = sim({}, workload(128, 32, { kind: 'poisson', rate_rps: 2 }, 40), { ttft_p99_ms: 1000, itl_p99_ms: 200 });
  assert.equal(none.d?.bottleneck, 'none', none.d?.summary);
});
