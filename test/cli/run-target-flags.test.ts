import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult } from '../../src/domain/index.js';
import { endpointOfFlags } from '../../src/loadgen/endpoint.js';
import { isLmBenchError } from '../../src/errors.js';
import { captureIo } from '../helpers/cli.js';

// `lm-bench run` names its target as `vllm bench serve` users type it: --base-url, or --host and
// --port, with --endpoint the path (default /v1/completions). A loopback stand-in records the paths
// it is asked for, so each test checks where the load actually went.

let server: Server;
let port = 0;
/** Every request path the stand-in saw, in order. */
const seen: string[] = [];

before(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '';
    seen.push(url);
    if (url.endsWith('/v1/models')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'stand-in' }] }));
      return;
    }
    if (!url.endsWith('/v1/completions') && !url.endsWith('/v1/chat/completions')) {
      res.writeHead(404).end('no route');
      return;
    }
    const chat = url.endsWith('/chat/completions');
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const max = (JSON.parse(body) as { max_tokens: number }).max_tokens;
      let out = '';
      for (let i = 0; i < max; i++) {
        const choice = chat ? { index: 0, delta: { content: ' tok' }, finish_reason: i === max - 1 ? 'length' : null } : { index: 0, text: ' tok', finish_reason: i === max - 1 ? 'length' : null };
        out += `data: ${JSON.stringify({ choices: [choice] })}\n\n`;
      }
      out += `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 8, completion_tokens: max } })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${out}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((r) => server.close(() => r())));

const load = ['--input-len', '8', '--output-len', '3', '--num-prompts', '3', '--concurrency', '1', '--timeout-s', '20', '--json'];

/** Runs `lm-bench run ARGS` against the stand-in; returns the exit status, output and the paths it saw. */
async function run(args: readonly string[]): Promise<{ code: number; out: string; err: string; paths: string[] }> {
  const from = seen.length;
  const io = captureIo(process.cwd(), { LMB_LOOPBACK_ONLY: '1' });
  const code = await main(['run', ...args], io);
  return { code, out: io.out(), err: io.err(), paths: seen.slice(from) };
}

test('--host and --port name the server as vllm bench serve does; the path is /v1/completions', { timeout: 60_000 }, async () => {
  const r = await run(['--host', '127.0.0.1', '--port', String(port), ...load]);
  assert.equal(r.code, 0, r.err);
  assert.equal(BenchmarkResult.parse(JSON.parse(r.out)).completed, 3);
  assert.deepEqual([...new Set(r.paths.filter((p) => p !== '/metrics'))], ['/v1/models', '/v1/completions']);
  // --port alone: vLLM's default host, 127.0.0.1.
  const alone = await run(['--port', String(port), ...load]);
  assert.equal(alone.code, 0, alone.err);
  assert.ok(alone.paths.includes('/v1/completions'), alone.paths.join(' '));
});

test('--base-url keeps a gateway prefix and --endpoint is the path under it; --api chat finds the chat route', { timeout: 60_000 }, async () => {
  const r = await run(['--base-url', `http://127.0.0.1:${port}/gw/`, '--endpoint', '/v1/chat/completions', ...load]);
  assert.equal(r.code, 0, r.err);
  const result = BenchmarkResult.parse(JSON.parse(r.out));
  assert.equal(result.completed, 3);
  assert.equal(result.endpoint_type, 'openai-chat');
  assert.ok(r.paths.includes('/gw/v1/models'), r.paths.join(' '));
  assert.equal(r.paths.filter((p) => p === '/gw/v1/chat/completions').length, 4, 'the probe and the three requests');
  const chat = await run(['--base-url', `http://127.0.0.1:${port}`, '--api', 'chat', ...load]);
  assert.equal(chat.code, 0, chat.err);
  assert.equal(chat.paths.filter((p) => p === '/v1/chat/completions').length, 4);
});

test('flags that name the server twice are a usage error, and nothing is sent', { timeout: 60_000 }, async () => {
  const cases: [string[], RegExp][] = [
    [['--base-url', `http://127.0.0.1:${port}`, '--host', '127.0.0.1'], /--base-url names the server; --host cannot go with it/],
    [['--base-url', `http://127.0.0.1:${port}`, '--port', String(port)], /--base-url names the server; --port cannot go with it/],
    [['--endpoint', `http://127.0.0.1:${port}/v1/completions`, '--port', String(port)], /--endpoint http:\/\/127\.0\.0\.1:\d+\/v1\/completions is a whole URL and --port names the server too/],
    [['--endpoint', 'v1/completions', '--port', String(port)], /--endpoint "v1\/completions" is neither a URL .* nor a path starting with \//],
    [['--host', `127.0.0.1:${port}`], /--host "127\.0\.0\.1:\d+" is not a host name or address \(the port goes in --port\)/],
    [['--port', '70000'], /--port must be an integer ≥ 1 and ≤ 65535/],
    [['--base-url', `http://127.0.0.1:${port}/?x=1`], /--base-url .*without \?query/],
    // The OpenAI SDK's habit: its base_url ends in /v1, which vLLM's path repeats.
    [['--base-url', `http://127.0.0.1:${port}/v1`], /--base-url http:\/\/127\.0\.0\.1:\d+\/v1 ends in \/v1 .*give the server's root, --base-url http:\/\/127\.0\.0\.1:\d+ \(as vllm bench serve\)/],
  ];
  for (const [args, message] of cases) {
    const r = await run([...args, ...load.filter((a) => a !== '--json')]);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.err, /LMB_ERR_INVALID_ARGUMENT/, args.join(' '));
    assert.match(r.err, message, args.join(' '));
    assert.deepEqual(r.paths, [], `${args.join(' ')}: nothing sent`);
  }
});

test('a dry run prints the URL the flags make, with vLLM defaults, and the chat route --api chat sends to', { timeout: 60_000 }, async () => {
  const dry = async (args: string[]): Promise<string> => {
    const r = await run([...args, '--dry-run']);
    assert.equal(r.code, 0, r.err);
    return r.out;
  };
  assert.match(await dry(['--endpoint', '/v1/chat/completions']), /load target: http:\/\/127\.0\.0\.1:8000\/v1\/chat\/completions on this machine/);
  assert.match(await dry(['--host', '::1', '--port', '9']), /load target: http:\/\/\[::1\]:9\/v1\/completions on this machine/);
  // The route the run would use, not the one typed: --api chat against …/v1/completions goes to the chat route.
  assert.match(await dry(['--endpoint', 'http://127.0.0.1:9/v1/completions', '--api', 'chat']), /load target: http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions /);
  assert.match(await dry(['--port', '9', '--api', 'chat', '--mode', 'max-rate', '--slo', 'ttft_p99_ms=100']), /load target: http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions /);
  const none = await run(['--dry-run']);
  assert.equal(none.code, 2);
  assert.match(none.err, /missing required flag --endpoint URL \(or --base-url URL, --host H --port P/);
});

test('endpointOfFlags: a whole --endpoint URL passes as it is; nothing given leaves the config file to name it', { timeout: 60_000 }, () => {
  assert.equal(endpointOfFlags({ endpoint: 'https://gpu-box:8443/v1/completions' }), 'https://gpu-box:8443/v1/completions');
  assert.equal(endpointOfFlags({}), undefined);
  assert.equal(endpointOfFlags({ baseUrl: 'https://gw.example/llama' }), 'https://gw.example/llama/v1/completions');
  assert.equal(endpointOfFlags({ host: 'gpu-box' }), 'http://gpu-box:8000/v1/completions');
  assert.equal(endpointOfFlags({ host: '[2001:db8::7]', port: 8001, endpoint: '/v1/chat/completions' }), 'http://[2001:db8::7]:8001/v1/chat/completions');
  assert.throws(() => endpointOfFlags({ baseUrl: 'https://u:sk-1@gw' }), (e) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT') && !(e as Error).message.includes('sk-1'));
  assert.throws(() => endpointOfFlags({ baseUrl: 'ftp://gw' }), (e) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT'));
  assert.throws(() => endpointOfFlags({ host: 'user@gpu-box' }), (e) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT'));
});
