import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Workload } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { isLoopbackHost, parseEndpoint, runBenchmark } from '../../src/loadgen/index.js';
import { assertAllowedTarget } from '../../src/loadgen/endpoint.js';
import { startStubServer } from '../fixtures/loadgen/stub-server.js';

const workload: Workload = {
  name: 'endpoint',
  api: 'completions',
  input_len: { dist: 'fixed', value: 8 },
  output_len: { dist: 'fixed', value: 4 },
  arrival: { kind: 'closed', concurrency: 1 },
  num_prompts: 3,
  ignore_eos: true,
};

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

test('any http(s) host is a load target; loopback is recognised for the banner and the test guard', () => {
  for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '[::1]', '::1', 'api.localhost']) assert.ok(isLoopbackHost(h), h);
  for (const h of ['10.0.0.1', '192.168.1.1', 'example.com', '0.0.0.0', '[::]', '128.0.0.1', 'localhost.example.com']) assert.ok(!isLoopbackHost(h), h);
  const remote = parseEndpoint('https://gpu-box.example.com:8443/v1/chat/completions');
  assert.deepEqual([remote.host, remote.loopback, remote.tls, remote.path], ['gpu-box.example.com', false, true, '/v1/chat/completions']);
  const v6 = parseEndpoint('http://[2001:db8::7]:8000');
  assert.deepEqual([v6.host, v6.loopback, v6.path], ['2001:db8::7', false, '/v1/completions']);
  assert.equal(parseEndpoint('http://localhost:8000').path, '/v1/completions');
  assert.throws(() => parseEndpoint('not a url'), (e) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT'));
  assert.throws(() => parseEndpoint('ftp://gpu-box/v1'), (e) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT'));
  // Credentials in the URL would end up in logs and results.
  assert.throws(() => parseEndpoint('https://user:sk-123@gpu-box/v1'), (e) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT') && !(e as Error).message.includes('sk-123'));
});

test('LMB_LOOPBACK_ONLY=1 (set by the test runner) refuses a remote endpoint before any connection', async () => {
  const remote = parseEndpoint('http://93.184.216.34/v1/completions');
  assert.doesNotThrow(() => assertAllowedTarget(remote, {}));
  assert.doesNotThrow(() => assertAllowedTarget(parseEndpoint('http://127.0.0.1:9/v1'), { LMB_LOOPBACK_ONLY: '1' }));
  await assert.rejects(runBenchmark({ endpoint: remote.url, model: 'm', seed: 1, workload, env: { LMB_LOOPBACK_ONLY: '1' } }), (e) =>
    isLmBenchError(e, 'LMB_ERR_ENDPOINT_NOT_LOOPBACK'),
  );
  // The runner's default environment is the process's, which the test runner set.
  assert.equal(process.env['LMB_LOOPBACK_ONLY'], '1');
});

test('an unreachable endpoint fails fast with UNREACHABLE', async () => {
  const { server, origin } = await listen(() => undefined);
  await new Promise<void>((r) => server.close(() => r())); // the port is now closed
  const t0 = performance.now();
  await assert.rejects(runBenchmark({ endpoint: `${origin}/v1/completions`, model: 'm', seed: 1, workload }), (e) => {
    assert.ok(isLmBenchError(e, 'LMB_ERR_ENDPOINT_UNREACHABLE'));
    assert.match((e as Error).message, /^127\.0\.0\.1 \(http:\/\/127\.0\.0\.1:\d+\) does not answer: connection refused/);
    return true;
  });
  assert.ok(performance.now() - t0 < 5000);
});

test('a wrong path (404) or an HTML page is BAD_RESPONSE, and no load is sent', async () => {
  const stub = await startStubServer();
  try {
    await assert.rejects(runBenchmark({ endpoint: `${stub.origin}/v1/wrong`, seed: 1, workload }), (e) => isLmBenchError(e, 'LMB_ERR_ENDPOINT_BAD_RESPONSE'));
    assert.equal(stub.requests(), 0);
  } finally {
    await stub.close();
  }
  let posts = 0;
  const html = await listen((req, res) => {
    if (req.method === 'POST') posts++;
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body>hello</body></html>');
  });
  try {
    await assert.rejects(runBenchmark({ endpoint: `${html.origin}/v1/completions`, model: 'm', seed: 1, workload }), (e) => {
      assert.ok(isLmBenchError(e, 'LMB_ERR_ENDPOINT_BAD_RESPONSE'));
      assert.match((e as Error).message, /not an OpenAI-compatible/);
      return true;
    });
    assert.equal(posts, 1); // the probe only
    // Without --model the model list is needed, and an HTML server has none.
    await assert.rejects(runBenchmark({ endpoint: `${html.origin}/v1/completions`, seed: 1, workload }), (e) => isLmBenchError(e, 'LMB_ERR_ENDPOINT_BAD_RESPONSE'));
  } finally {
    html.server.close();
  }
});

test('the model is read from /v1/models when not given', async () => {
  const stub = await startStubServer({ ttftMs: 1, itlMs: 1 });
  try {
    const { result } = await runBenchmark({ endpoint: stub.url, seed: 1, workload, scrapeMetrics: false });
    assert.equal(result.model_id, 'stub-model');
  } finally {
    await stub.close();
  }
});

test('a model list that redirects, or a server shedding load, is told as such before any load', { timeout: 30_000 }, async () => {
  let posts = 0;
  let answer: { status: number; headers: Record<string, string>; body: string } = { status: 301, headers: { location: '/api/v1/models' }, body: '' };
  const s = await listen((req, res) => {
    if (req.method === 'POST') posts++;
    res.writeHead(answer.status, answer.headers).end(answer.body);
  });
  try {
    // "pass --model" would only move the failure: the load follows no redirect either.
    await assert.rejects(runBenchmark({ endpoint: `${s.origin}/v1/completions`, seed: 1, workload }), (e) => {
      assert.ok(isLmBenchError(e, 'LMB_ERR_ENDPOINT_BAD_RESPONSE'));
      assert.match((e as Error).message, /\/v1\/models answered HTTP 301, a redirect to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/models: the load follows no redirect/);
      return true;
    });
    answer = { status: 503, headers: { 'retry-after': '30', 'content-type': 'application/json' }, body: '{"error":{"message":"loading"}}' };
    await assert.rejects(runBenchmark({ endpoint: `${s.origin}/v1/completions`, seed: 1, workload }), (e) => {
      assert.ok(isLmBenchError(e, 'LMB_ERR_ENDPOINT_BAD_RESPONSE'));
      assert.match((e as Error).message, /answered HTTP 503 \(Retry-After: "30"\): the server is shedding load or not ready yet; nothing was sent/);
      return true;
    });
    answer = { status: 429, headers: {}, body: '' };
    await assert.rejects(runBenchmark({ endpoint: `${s.origin}/v1/completions`, seed: 1, workload }), (e) => isLmBenchError(e, 'LMB_ERR_ENDPOINT_BAD_RESPONSE') && /answered HTTP 429: the server is shedding load/.test((e as Error).message));
    // Any other answer without a list still asks for --model.
    answer = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":[]}' };
    await assert.rejects(runBenchmark({ endpoint: `${s.origin}/v1/completions`, seed: 1, workload }), (e) => /answered HTTP 200 without a model list; pass --model/.test((e as Error).message));
    assert.equal(posts, 0);
  } finally {
    s.server.close();
  }
});
