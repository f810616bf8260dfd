// lmb-test: alone
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Diagnosis, RunEvidence, type Arrival, type BenchmarkResult, type ServerConfig, type Slo, type Workload } from '../../src/domain/index.js';
import { runBenchmark } from '../../src/loadgen/index.js';
import { startSimServe } from '../helpers/sim-serve.js';

// Each regime provoked for real: `lm-bench sim serve` (the simulated vLLM behind real HTTP on
// loopback, 10× real time) started in its own process with a configuration built to hit one limit,
// loaded by the runner, and the diagnosis read from what the run scraped of /metrics and saw of its
// own health. The server is a child process so that its work is not the client's: in the same thread
// a busy simulator shows as event-loop lag and the run reads as client-bound. SLO limits are in real
// milliseconds, so a limit of 10 here is 100 ms of the simulated server's time.
const SPEED = 10;

const workload = (name: string, inputTokens: number, outputTokens: number, arrival: Arrival, n: number): Workload => ({
  name, api: 'completions', input_len: { dist: 'fixed', value: inputTokens }, output_len: { dist: 'fixed', value: outputTokens }, arrival, num_prompts: n, ignore_eos: true,
});

async function diagnosed(config: ServerConfig, w: Workload, slo: Slo, opts: { readonly during?: () => () => void; readonly speed?: number } = {}): Promise<{ d: Diagnosis; result: BenchmarkResult }> {
  const knobs = Object.entries(config).flatMap(([k, v]) => ['--set', `${k}=${String(v)}`]);
  const sim = await startSimServe(['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--speed', String(opts.speed ?? SPEED), '--seed', '1', '--startup-scale', '0', ...knobs]);
  const stop = opts.during?.();
  try {
    const { result } = await runBenchmark({ endpoint: `${sim.url}/v1/completions`, workload: w, seed: 1, slo, knownConfig: config, scrapeIntervalMs: 100, workers: 1, env: { LMB_LOOPBACK_ONLY: '1' } });
    RunEvidence.parse(result.evidence);
    return { d: Diagnosis.parse(result.diagnosis), result };
  } finally {
    stop?.();
    await sim.close();
  }
}

const evidence = (d: Diagnosis, name: string): number => {
  const e = d.evidence.find((x) => x.name === name);
  assert.ok(e !== undefined, `evidence "${name}" in ${JSON.stringify(d.evidence)}`);
  return e.value;
};
const knobs = (d: Diagnosis): string[] => d.knobs.map((k) => `${k.knob}:${k.change}`);

test('admission-bound: 32 streams against max_num_seqs 4 wait with the batch full and the cache empty', async () => {
  const { d, result } = await diagnosed({ max_num_seqs: 4 }, workload('admission', 256, 64, { kind: 'closed', concurrency: 32 }, 96), { ttft_p99_ms: 10 });
  assert.equal(d.bottleneck, 'admission', d.summary);
  assert.deepEqual(d.missed, ['ttft_p99_ms']);
  assert.equal(d.source, 'measured');
  assert.equal(evidence(d, 'running (max_num_seqs × replicas)'), 4);
  assert.ok((result.evidence?.server?.kv_usage_peak ?? 1) < 0.1, 'the KV cache had room');
  assert.ok((result.evidence?.server?.queue_ms_mean ?? 0) > (result.evidence?.server?.prefill_ms_mean ?? Infinity), 'TTFT went to the queue');
  assert.equal(d.knobs[0]?.knob, 'max_num_seqs');
  assert.equal(d.knobs[0]?.change, 'raise');
  assert.equal(d.knobs[0]?.to, 8, 'twice the limit, the cache having room');
});

test('KV-cache-bound: long contexts in a cache of a few thousand blocks are preempted', async () => {
  const { d, result } = await diagnosed(
    { gpu_memory_utilization: 0.26, max_num_seqs: 256, max_model_len: 4096 },
    workload('kv', 1500, 200, { kind: 'closed', concurrency: 64 }, 96),
    { ttft_p99_ms: 100, itl_p99_ms: 5 },
  );
  assert.equal(d.bottleneck, 'kv_cache', d.summary);
  assert.ok(evidence(d, 'preemptions') > 0);
  assert.ok((result.evidence?.server?.kv_usage_peak ?? 0) > 0.9);
  assert.ok(knobs(d).includes('gpu_memory_utilization:raise') && knobs(d).includes('kv_cache_dtype:set'), knobs(d).join(', '));
});

test('prefill-bound: 6,000-token prompts through a 512-token budget take a dozen steps each', async () => {
  // max_num_seqs is not given: the diagnosis must tell the budget's plateau from max_num_seqs's.
  const { d } = await diagnosed({ max_num_batched_tokens: 512 }, workload('prefill', 6000, 8, { kind: 'poisson', rate_rps: 4 * SPEED }, 48), { ttft_p99_ms: 30 });
  assert.equal(d.bottleneck, 'prefill', d.summary);
  assert.ok(evidence(d, 'engine steps per prefill') >= 4);
  assert.equal(evidence(d, 'max_num_batched_tokens'), 512);
  const budget = d.knobs.find((k) => k.knob === 'max_num_batched_tokens');
  assert.equal(budget?.change, 'raise');
  assert.equal(budget?.to, 16_384, 'at least twice the prompt, as a power of two');
});

test('decode-bound: a batch of 256 short prompts decoding long answers misses a tight ITL', async () => {
  // In real time: 256 streams at 10× would send the client ~100k tokens a second, and then its own
  // lag, not the server's step time, would set the ITL it measures. A batch of 256 steps in ~15 ms
  // on the simulated H100, a lone request in ~7 ms, so 10 ms is an ITL only a smaller batch meets.
  const { d, result } = await diagnosed({ max_num_seqs: 256 }, workload('decode', 128, 128, { kind: 'closed', concurrency: 256 }, 256), { itl_p99_ms: 10 }, { speed: 1 });
  assert.equal(d.bottleneck, 'decode', d.summary);
  assert.deepEqual(d.missed, ['itl_p99_ms']);
  assert.ok((result.evidence?.server?.running_mean ?? 0) > 50, 'a large batch ran');
  assert.equal(d.knobs[0]?.knob, 'max_num_seqs');
  assert.equal(d.knobs[0]?.change, 'lower');
});

test('client-bound: a load generator whose event loop stalls is named, whatever the server did', async () => {
  // 80 ms of busy work every 100 ms on the load's own thread.
  const hog = (): (() => void) => {
    const timer = setInterval(() => {
      const end = performance.now() + 80;
      while (performance.now() < end);
    }, 100);
    return () => clearInterval(timer);
  };
  const { d, result } = await diagnosed({}, workload('client', 64, 32, { kind: 'poisson', rate_rps: 20 }, 40), { ttft_p99_ms: 1000 }, { during: hog });
  assert.equal(d.bottleneck, 'client', d.summary);
  assert.ok((result.evidence?.client?.loop_lag_p99_ms ?? 0) > 50);
  assert.deepEqual(d.knobs, [], 'no server knob fixes the client');
});

test('none: a light load within generous SLOs has no bottleneck', async () => {
  const { d } = await diagnosed({}, workload('light', 128, 32, { kind: 'poisson', rate_rps: 2 * SPEED }, 40), { ttft_p99_ms: 100, itl_p99_ms: 20 });
  assert.equal(d.bottleneck, 'none', d.summary);
  assert.deepEqual(d.missed, []);
  assert.equal(d.saturated, false);
  assert.deepEqual(d.knobs, []);
});
