import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult } from '../../src/domain/index.js';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { startSimServer, type SimServer } from '../../src/sim/server.js';
import { createTarget } from '../../src/targets/factory.js';
import { TargetSpec } from '../../src/targets/spec.js';
import { captureIo } from '../helpers/cli.js';

/**
 * The runner against servers that are not a plain http loopback stub: https with a self-signed
 * certificate, an API key, a host that refuses or never answers, and a remote host (banner and plan
 * only: tests send traffic to loopback alone).
 */
const TLS_DIR = join(PROJECT_ROOT, 'test', 'fixtures', 'tls');
const cert = readFileSync(join(TLS_DIR, 'cert.pem'), 'utf8');
const key = readFileSync(join(TLS_DIR, 'key.pem'), 'utf8');
const API_KEY = 'sk-lmb-test-7d1f0a2c9e';
const env = { LMB_LOOPBACK_ONLY: '1' };

let tlsServer: SimServer;
let keyServer: SimServer;
let dir: string;
before(async () => {
  const common = { config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', speed: 50, seed: 3, port: 0 } as const;
  tlsServer = await startSimServer({ ...common, tls: { cert, key } });
  keyServer = await startSimServer({ ...common, apiKey: API_KEY });
  dir = mkdtempSync(join(tmpdir(), 'lmb-remote-'));
});
after(async () => {
  await tlsServer.close();
  await keyServer.close();
  rmSync(dir, { recursive: true, force: true });
});

const load = ['--input-len', '16', '--output-len', '4', '--concurrency', '2', '--num-prompts', '4'];

test('https: a self-signed server is refused until its certificate is trusted (--ca-cert) or checks are off (--insecure)', async () => {
  assert.match(tlsServer.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const refused = captureIo(dir, env);
  assert.equal(await main(['run', '--endpoint', `${tlsServer.url}/v1/completions`, ...load], refused), 1);
  assert.match(refused.err(), /LMB_ERR_ENDPOINT_UNREACHABLE: 127\.0\.0\.1 \(https:\/\/127\.0\.0\.1:\d+\) does not answer: TLS handshake failed/);
  assert.match(refused.err(), /--ca-cert/);

  const trusted = captureIo(dir, env);
  assert.equal(await main(['run', '--endpoint', `${tlsServer.url}/v1/completions`, '--ca-cert', join(TLS_DIR, 'cert.pem'), ...load, '--json'], trusted), 0, trusted.err());
  assert.equal(BenchmarkResult.parse(JSON.parse(trusted.out())).completed, 4);
  assert.match(trusted.err(), /load target: https:\/\/127\.0\.0\.1:\d+\/v1\/completions on this machine \(loopback\), TLS with the given CA; at most 4 requests/);

  const insecure = captureIo(dir, env);
  assert.equal(await main(['run', '--endpoint', `${tlsServer.url}/v1/completions`, '--insecure', ...load, '--json'], insecure), 0, insecure.err());
  assert.match(insecure.err(), /TLS without certificate verification/);
});

test('an API key is sent as a bearer token and never appears in output, results or records', async () => {
  const none = captureIo(dir, env);
  assert.equal(await main(['run', '--endpoint', `${keyServer.url}/v1/completions`, ...load], none), 1);
  assert.match(none.err(), /LMB_ERR_ENDPOINT_BAD_RESPONSE: 127\.0\.0\.1 answered HTTP 401: no API key was sent/);

  const wrong = captureIo(dir, env);
  assert.equal(await main(['run', '--endpoint', `${keyServer.url}/v1/completions`, '--api-key', 'sk-not-it', ...load], wrong), 1);
  assert.match(wrong.err(), /HTTP 401: the API key was refused/);
  assert.ok(!wrong.err().includes('sk-not-it'));

  // From OPENAI_API_KEY, as the openai clients and vllm bench serve read it.
  const ok = captureIo(dir, { ...env, OPENAI_API_KEY: API_KEY });
  const out = join(dir, 'keyed.json');
  const records = join(dir, 'keyed.jsonl');
  assert.equal(await main(['run', '--endpoint', `${keyServer.url}/v1/completions`, ...load, '--output', out, '--records', records, '--json'], ok), 0, ok.err());
  assert.equal(BenchmarkResult.parse(JSON.parse(ok.out())).completed, 4);
  assert.match(ok.err(), /API key set/);
  for (const text of [ok.out(), ok.err(), readFileSync(out, 'utf8'), readFileSync(records, 'utf8')]) assert.ok(!text.includes(API_KEY));
});

test('a host that refuses fails, and one that accepts but never answers fails after the time-out; both name the host and the cause', async () => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const closedPort = (closed.address() as { port: number }).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const refused = captureIo(dir, env);
  assert.equal(await main(['run', '--endpoint', `http://127.0.0.1:${closedPort}/v1/completions`, '--model', 'm', ...load], refused), 1);
  assert.match(refused.err(), /LMB_ERR_ENDPOINT_UNREACHABLE: 127\.0\.0\.1 .* connection refused/);

  const sockets: Socket[] = [];
  const silent = createServer((s) => sockets.push(s)); // accepts and says nothing
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as { port: number }).port;
  try {
    const hung = captureIo(dir, env);
    const t0 = performance.now();
    assert.equal(await main(['run', '--endpoint', `http://127.0.0.1:${port}/v1/completions`, '--model', 'm', '--timeout-s', '1', ...load], hung), 1);
    // A time-out never fires early; how soon after it the run gives up is the timing lane's (remote.timing.test.ts).
    const tookMs = performance.now() - t0;
    assert.ok(tookMs >= 900, `${tookMs} ms`);
    assert.match(hung.err(), /LMB_ERR_ENDPOINT_UNREACHABLE: 127\.0\.0\.1 .* no answer within the time-out/);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  }
});

test('a remote endpoint is accepted: --dry-run prints where the load would go and how it is bounded, and sends nothing', async () => {
  const c = captureIo(dir, { ...env, OPENAI_API_KEY: API_KEY });
  const code = await main(['run', '--endpoint', 'https://gpu-box.example.com:8443/v1/chat/completions', '--num-prompts', '300', '--duration-s', '120', '--timeout-s', '30', '--dry-run'], c);
  assert.equal(code, 0, c.err());
  assert.equal(
    c.out().trim(),
    'would load target: https://gpu-box.example.com:8443/v1/chat/completions on remote host gpu-box.example.com, TLS, API key set; at most 300 requests, for at most 120 s, each cut off after 30 s',
  );
  assert.ok(!c.out().includes(API_KEY));

  // The endpoint may come from the config file instead of the command line.
  writeFileSync(join(dir, 'remote.yaml'), 'endpoint: http://10.1.2.3:8000/v1/completions\ndataset: { kind: synthetic, input_len: 64, output_len: 8 }\ntraffic: { concurrency: 4 }\nnum_prompts: 20\n');
  const f = captureIo(dir, env);
  assert.equal(await main(['run', '--config', 'remote.yaml', '--dry-run', '--json'], f), 0, f.err());
  const plan = JSON.parse(f.out()) as { points: { target: string }[] };
  assert.match(plan.points[0]?.target ?? '', /^load target: http:\/\/10\.1\.2\.3:8000\/v1\/completions on remote host 10\.1\.2\.3; at most 20 requests/);

  // Without --dry-run the test guard stops it before any connection.
  const g = captureIo(dir, env);
  assert.equal(await main(['run', '--config', 'remote.yaml'], g), 2);
  assert.match(g.err(), /LMB_ERR_ENDPOINT_NOT_LOOPBACK: 10\.1\.2\.3 is not a loopback address and LMB_LOOPBACK_ONLY=1 is set/);
});

test('the endpoint target reaches an https server with an API key from the environment variable the profile names', async () => {
  const server = await startSimServer({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', speed: 50, seed: 4, port: 0, tls: { cert, key }, apiKey: API_KEY });
  process.env['LMB_TEST_ENDPOINT_KEY'] = API_KEY;
  try {
    const spec = TargetSpec.parse({ kind: 'endpoint', url: server.url, api_key_env: 'LMB_TEST_ENDPOINT_KEY', ca_cert: join(TLS_DIR, 'cert.pem') });
    assert.ok(!JSON.stringify(spec).includes(API_KEY), 'the stored spec names the variable, not the key');
    const input = {
      trial_id: 1, study: 'tls', seed: 1, config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', slo: {},
      workload: { name: 'w', api: 'completions', input_len: { dist: 'fixed', value: 16 }, output_len: { dist: 'fixed', value: 4 }, arrival: { kind: 'closed', concurrency: 2 }, num_prompts: 4, ignore_eos: true },
    } as const;
    const out = await createTarget(spec, 0).runTrial(input);
    assert.equal(out.status, 'ok', out.status === 'failed' ? out.reason : '');
    delete process.env['LMB_TEST_ENDPOINT_KEY'];
    const denied = await createTarget(spec, 0).runTrial(input);
    assert.equal(denied.status, 'failed');
    if (denied.status === 'failed') assert.match(denied.reason, /HTTP 401: no API key was sent/);
  } finally {
    delete process.env['LMB_TEST_ENDPOINT_KEY'];
    await server.close();
  }
});
