import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BenchmarkResult, type Workload } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { classifyError } from '../../src/loadgen/client.js';
import { runBenchmark } from '../../src/loadgen/index.js';
import { startStubServer, type Behavior } from '../fixtures/loadgen/stub-server.js';

// Every error kind provoked on a real loopback server and counted, never fatal to the run.
const workload = (n: number, concurrency = 1): Workload => ({
  name: 'errors',
  api: 'completions',
  input_len: { dist: 'fixed', value: 8 },
  output_len: { dist: 'fixed', value: 5 },
  arrival: { kind: 'closed', concurrency },
  num_prompts: n,
  ignore_eos: true,
});

test('each misbehaviour is sorted into its error kind and counted', async () => {
  const plan: Behavior[] = ['ok', 'http_500', 'reset', 'truncate', 'stream_error', 'garbage', 'no_tokens', 'no_usage', 'hang', 'ok'];
  const stub = await startStubServer({ ttftMs: 2, itlMs: 1, behave: (i) => plan[i] ?? 'ok' });
  try {
    const { result, records } = await runBenchmark({ endpoint: stub.url, seed: 1, workload: workload(plan.length), timeoutMs: 400, scrapeMetrics: false });
    BenchmarkResult.parse(result);
    assert.equal(result.completed, 3);
    assert.equal(result.failed, 7);
    assert.deepEqual(result.lmb.errors_by_kind, {
      http_status: 1,
      connection_reset: 1,
      truncated_stream: 1,
      stream_error: 1,
      bad_response: 2,
      timeout: 1,
    });
    const kinds = records.map((r) => r.error_kind);
    assert.deepEqual(kinds, [null, 'http_status', 'connection_reset', 'truncated_stream', 'stream_error', 'bad_response', 'bad_response', null, 'timeout', null]);
    assert.equal(records[1]?.http_status, 500);
    assert.match(records[4]?.error ?? '', /engine died/);
    const noUsage = records[7];
    // It finished for length: counted as its max_tokens, and marked so.
    assert.equal(noUsage?.token_source, 'max_tokens');
    assert.equal(noUsage?.output_tokens, 5);
    assert.equal(records[0]?.token_source, 'usage');
    assert.equal(result.total_output_tokens, 15);
  } finally {
    await stub.close();
  }
});

test('a server that goes away mid-run gives connection_refused for the rest', async () => {
  const stub = await startStubServer({ ttftMs: 1, itlMs: 1, closeAfter: 2 });
  const { result } = await runBenchmark({ endpoint: stub.url, seed: 1, workload: workload(5), scrapeMetrics: false, timeoutMs: 2000 });
  assert.equal(result.completed, 2);
  assert.equal(result.failed, 3);
  const kinds = result.lmb.errors_by_kind;
  assert.equal((kinds['connection_refused'] ?? 0) + (kinds['connection_reset'] ?? 0), 3);
  assert.ok((kinds['connection_refused'] ?? 0) >= 2, JSON.stringify(kinds));
});

test('a server answering nothing but garbage gives a report, not a crash', async () => {
  const stub = await startStubServer({ behave: () => 'garbage' });
  try {
    const { result } = await runBenchmark({ endpoint: stub.url, seed: 1, workload: workload(6, 3), scrapeMetrics: false });
    assert.equal(result.completed, 0);
    assert.equal(result.failed, 6);
    assert.deepEqual(result.lmb.errors_by_kind, { bad_response: 6 });
    assert.equal(result.mean_ttft_ms, 0);
    assert.equal(result.steady_state, null);
  } finally {
    await stub.close();
  }
});

test('aborting the run stops it with LMB_ERR_INTERRUPTED', async () => {
  const stub = await startStubServer({ behave: () => 'hang' });
  try {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 150);
    await assert.rejects(
      runBenchmark({ endpoint: stub.url, seed: 1, workload: workload(4, 2), signal: ac.signal, scrapeMetrics: false }),
      (err) => isLmBenchError(err, 'LMB_ERR_INTERRUPTED'),
    );
  } finally {
    await stub.close();
  }
});

test('socket, HTTP-framing and undici error codes map to kinds', () => {
  assert.equal(classifyError({ code: 'ECONNREFUSED' }), 'connection_refused');
  assert.equal(classifyError({ code: 'ECONNRESET' }), 'connection_reset');
  assert.equal(classifyError({ code: 'UND_ERR_SOCKET' }), 'connection_reset');
  assert.equal(classifyError({ code: 'UND_ERR_HEADERS_TIMEOUT' }), 'timeout');
  assert.equal(classifyError({ code: 'UND_ERR_BODY_TIMEOUT' }), 'timeout');
  assert.equal(classifyError({ code: 'HPE_INVALID_CONSTANT' }), 'bad_response');
  assert.equal(classifyError({ code: 'LMB_HTTP_PARSE' }), 'bad_response');
  assert.equal(classifyError({ code: 'LMB_HTTP_CLOSED' }), 'connection_reset');
  assert.equal(classifyError({ name: 'AbortError' }), 'aborted');
  assert.equal(classifyError({ code: 'X', cause: { code: 'ECONNREFUSED' } }), 'connection_refused');
});
