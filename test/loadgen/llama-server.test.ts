// lmb-test: alone
// Its open loop judges whether requests waited for a server thread by their TTFT (real time): beside
// another test file on 2 cores it measured the neighbour and failed now and then.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Workload } from '../../src/domain/index.js';
import { runBenchmark } from '../../src/loadgen/index.js';
import { PROBE_PROMPT } from '../../src/loadgen/connect.js';
import { syntheticRequests } from '../../src/loadgen/prompts.js';
import { scheduleTimes } from '../../src/loadgen/arrivals.js';
import { trafficStreams } from '../../src/workload/sample.js';
import { startLlamaStandin, type LlamaStandin } from '../helpers/llama-standin.js';

// The load runner against a stand-in that behaves as llama.cpp's llama-server does (issue 29): it closes
// the connection after every streamed reply although its headers say Keep-Alive, it serves each
// connection on one of a fixed pool of threads, and its /metrics speaks llama.cpp's names.

const closed = (concurrency: number, n: number): Workload => ({
  name: 'llama', api: 'completions', input_len: { dist: 'fixed', value: 16 }, output_len: { dist: 'fixed', value: 4 },
  arrival: { kind: 'closed', concurrency }, num_prompts: n, ignore_eos: true,
});

let standin: LlamaStandin;
before(async () => {
  standin = await startLlamaStandin({ threads: 6, parallel: 4, decodeMs: 2, prefillMsPerToken: 0.1 });
});
after(() => standin.close());

test('a server that closes after each streamed reply loses no request: the crossing request goes again on a fresh connection', { timeout: 30_000 }, async () => {
  for (const c of [1, 4, 8]) {
    const before0 = standin.stats().completions;
    const { result } = await runBenchmark({ endpoint: `${standin.url}/v1/completions`, model: 'standin', seed: c, workload: closed(c, 40), scrapeMetrics: false });
    assert.equal(result.failed, 0, `c=${c}: ${JSON.stringify(result.lmb.error_samples)}`);
    assert.equal(result.completed, 40, `c=${c}`);
    // Each request was processed once: 40 completions and the probe, none twice.
    assert.equal(standin.stats().completions - before0, 41, `c=${c}`);
  }
});

test('the probe sends a prompt the run never sends, so request 0 is not served from a warm cache', { timeout: 30_000 }, async () => {
  const w = closed(2, 6);
  const seen0 = standin.stats().requestsSeen.length;
  await runBenchmark({ endpoint: `${standin.url}/v1/completions`, model: 'standin', seed: 5, workload: w, scrapeMetrics: false });
  const seen = standin.stats().requestsSeen.slice(seen0);
  const prompts = syntheticRequests(w, 5).map((r) => r.prompt);
  assert.equal(seen.length, 7);
  assert.equal(seen.filter((p) => p === PROBE_PROMPT).length, 1, 'one probe');
  for (const p of prompts) {
    assert.equal(seen.filter((s) => s === p).length, 1, 'each workload prompt is sent exactly once');
    // No shared prefix a cache could serve: the probe differs from every prompt at its first word.
    assert.notEqual(p.split(' ')[0], PROBE_PROMPT.split(' ')[0]);
  }
});

test('an open loop opens connections as requests need them: none waits for a thread-per-connection server', { timeout: 30_000 }, async () => {
  // Three HTTP threads and a server that keeps connections alive: each idle connection the client
  // opened ahead of the load holds a thread for 5 s, and a request sent on one waiting for a thread
  // waits that long.
  // A request takes about 10 ms. The seed's arrivals put no three requests within 120 ms, so a client that
  // reuses its idle connections never has more than two in flight and never needs a third thread; a
  // Poisson burst of four within one request's time (some seeds draw one: four arrivals in 14 ms) would make
  // the server's capacity, not the client, the cause of a wait.
  const w: Workload = { ...closed(1, 24), arrival: { kind: 'poisson', rate_rps: 8 } };
  const seed = 290;
  const arrivalsS = Array.from(scheduleTimes(w.arrival, w.num_prompts, trafficStreams(seed).arrivals) ?? []);
  assert.equal(arrivalsS.length, 24);
  assert.ok(Math.min(...arrivalsS.slice(2).map((t, i) => t - (arrivalsS[i] as number))) > 0.1, 'no three arrivals within 100 ms');
  const s = await startLlamaStandin({ threads: 3, parallel: 1, decodeMs: 2, prefillMsPerToken: 0.1, closeAfterStream: false });
  try {
    const { result } = await runBenchmark({ endpoint: `${s.url}/v1/completions`, model: 'standin', seed, workload: w, scrapeMetrics: false });
    assert.equal(result.failed, 0);
    assert.equal(s.stats().maxWaitingForThread, 0, 'no connection sat unserved behind idle ones');
    assert.ok(result.p99_ttft_ms < 1000, `p99 TTFT ${result.p99_ttft_ms.toFixed(0)} ms: requests waited for a thread`);
  } finally {
    await s.close();
  }
});

test('llama.cpp’s /metrics is read in its own names; an overloaded open loop is saturated and advised in llama-server’s flags', { timeout: 30_000 }, async () => {
  // Two slots of ~400 ms: about 5 req/s; offered 40.
  const s = await startLlamaStandin({ threads: 8, parallel: 2, decodeMs: 50, prefillMsPerToken: 0.5 });
  try {
    const w: Workload = { ...closed(1, 80), output_len: { dist: 'fixed', value: 8 }, arrival: { kind: 'poisson', rate_rps: 40 } };
    const { result } = await runBenchmark({ endpoint: `${s.url}/v1/completions`, model: 'standin', seed: 3, workload: w, slo: { ttft_p99_ms: 200 }, scrapeIntervalMs: 200 });
    assert.equal(result.failed, 0);
    assert.equal(result.evidence?.metrics, 'llamacpp');
    assert.equal(result.evidence?.server?.engine, 'llamacpp');
    assert.ok((result.evidence?.server?.waiting_peak ?? 0) > 0, 'requests_deferred seen');
    assert.equal(result.server_metrics?.num_requests_running_peak, 2, 'the two busy slots');
    const d = result.diagnosis;
    assert.ok(d !== undefined && d !== null);
    assert.equal(d.saturated, true);
    assert.equal(d.bottleneck, 'admission');
    assert.deepEqual(d.knobs, [], 'no vLLM knob for llama-server');
    assert.ok(d.hints.some((h) => h.includes('--parallel')), JSON.stringify(d.hints));
  } finally {
    await s.close();
  }
});

test('a server whose /metrics is absent or unreadable leaves no evidence of nulls, and the diagnosis says it is blind', { timeout: 30_000 }, async () => {
  const s = await startLlamaStandin({ threads: 8, parallel: 1, decodeMs: 20, metrics: false });
  try {
    const w: Workload = { ...closed(8, 24), output_len: { dist: 'fixed', value: 8 } };
    const { result } = await runBenchmark({ endpoint: `${s.url}/v1/completions`, model: 'standin', seed: 4, workload: w, slo: { ttft_p99_ms: 50 } });
    assert.equal(result.server_metrics, null);
    assert.equal(result.evidence?.server, null);
    assert.equal(result.evidence?.metrics, 'absent');
    assert.match(result.diagnosis?.summary ?? '', /no server metrics/);
  } finally {
    await s.close();
  }
});
