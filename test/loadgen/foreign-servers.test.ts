import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { main } from '../../src/cli/main.js';
import type { Workload } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { runBenchmark } from '../../src/loadgen/index.js';
import { modelsPathOf } from '../../src/loadgen/endpoint.js';
import { metricsPathsOf } from '../../src/loadgen/routes.js';
import { runSloHold } from '../../src/loadgen/slo-hold.js';
import { captureIo } from '../helpers/cli.js';

// Servers other than vLLM that users point `run` at, each imitated by a loopback stand-in with one of
// their habits: a gateway's route prefix, a model that stops at its end of sequence (ignore_eos not
// honoured), chunks of several tokens without usage, a proxy that answers with one JSON body.

interface Habit {
  /** Route prefix the server lives under (a gateway's), '' for none. */
  readonly prefix?: string;
  /** Tokens generated per request, whatever max_tokens says (null: max_tokens). */
  readonly stopAfter?: number | null;
  /** Tokens per SSE chunk. */
  readonly tokensPerChunk?: number;
  readonly usage?: boolean;
  /** Answer with one non-streamed JSON body: every request, or (`'measured'`) all but the 1-token probe. */
  readonly json?: 'all' | 'measured';
  /** Every chunk carries `"error": null` (a gateway that writes every field of its schema). */
  readonly errorNull?: boolean;
  /** Refuse every measured request (not the probe) with this status, Retry-After and an OpenAI error body. */
  readonly refuse?: number;
  /** Serve vLLM's Prometheus /metrics beside the API, under the prefix as a gateway mounts it. */
  readonly metrics?: boolean;
}

async function standIn(h: Habit): Promise<{ origin: string; close: () => Promise<void>; auth: Set<string>; ids: string[] }> {
  const prefix = h.prefix ?? '';
  /** Every Authorization header seen ('none' for a request without one). */
  const auth = new Set<string>();
  /** The x-request-id of every completion request, in arrival order. */
  const ids: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    auth.add(req.headers.authorization ?? 'none');
    if (!url.startsWith(prefix)) {
      res.writeHead(404).end('no route');
      return;
    }
    const path = url.slice(prefix.length);
    if (path === '/metrics' && h.metrics === true) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="stand-in"} 2\nvllm:num_requests_waiting{model_name="stand-in"} 0\nvllm:kv_cache_usage_perc{model_name="stand-in"} 0.25\n');
      return;
    }
    if (path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'stand-in' }] }));
      return;
    }
    if (path !== '/v1/completions') {
      res.writeHead(404).end('no route');
      return;
    }
    const id = req.headers['x-request-id'];
    if (typeof id === 'string') ids.push(id);
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const max = (JSON.parse(body) as { max_tokens: number }).max_tokens;
      const n = h.stopAfter == null ? max : Math.min(max, h.stopAfter);
      const finish = n < max ? 'stop' : 'length';
      if (h.refuse !== undefined && max > 1) {
        res.writeHead(h.refuse, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_error', code: h.refuse } }));
        return;
      }
      if (h.json === 'all' || (h.json === 'measured' && max > 1)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'text_completion', choices: [{ index: 0, text: 'x'.repeat(n), finish_reason: finish }], usage: { prompt_tokens: 8, completion_tokens: n } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const per = h.tokensPerChunk ?? 1;
      // One write for the headers and every event: the first token arrives in the read that brings the headers.
      let out = '';
      for (let i = 0; i < n; i += per) {
        const last = i + per >= n;
        out += `data: ${JSON.stringify({ object: 'text_completion', choices: [{ index: 0, text: ' tok'.repeat(Math.min(per, n - i)), finish_reason: last ? finish : null }], ...(h.errorNull === true ? { error: null } : {}) })}\n\n`;
      }
      if (h.usage !== false) out += `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 8, completion_tokens: n } })}\n\n`;
      res.end(`${out}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())), auth, ids };
}

const workload: Workload = {
  name: 'foreign',
  api: 'completions',
  input_len: { dist: 'fixed', value: 8 },
  output_len: { dist: 'fixed', value: 6 },
  arrival: { kind: 'closed', concurrency: 2 },
  num_prompts: 8,
  ignore_eos: true,
};

test("the model list is read beside the endpoint's route, under a gateway's prefix", async (t) => {
  assert.equal(modelsPathOf('/v1/completions'), '/v1/models');
  assert.equal(modelsPathOf('/v1/chat/completions'), '/v1/models');
  assert.equal(modelsPathOf('/serve/llama-8b/v1/chat/completions'), '/serve/llama-8b/v1/models');
  assert.equal(modelsPathOf('/openai/v1/completions?api-version=2024-06-01'), '/openai/v1/models?api-version=2024-06-01');
  assert.equal(modelsPathOf('/generate'), '/v1/models');
  const s = await standIn({ prefix: '/serve/llama-8b' });
  t.after(s.close);
  const { result } = await runBenchmark({ endpoint: `${s.origin}/serve/llama-8b/v1/completions`, workload, seed: 1, scrapeMetrics: false });
  assert.equal(result.model_id, 'stand-in');
  assert.equal(result.completed, 8);
});

test("the server's /metrics is scraped under a gateway's prefix, where vLLM's root /metrics is mounted", async (t) => {
  assert.deepEqual(metricsPathsOf('/v1/completions'), ['/metrics']);
  assert.deepEqual(metricsPathsOf('/serve/llama-8b/v1/chat/completions'), ['/serve/llama-8b/metrics', '/metrics']);
  assert.deepEqual(metricsPathsOf('/generate'), ['/metrics']);
  const s = await standIn({ prefix: '/serve/llama-8b', metrics: true });
  t.after(s.close);
  const { result } = await runBenchmark({ endpoint: `${s.origin}/serve/llama-8b/v1/completions`, workload, seed: 1 });
  assert.equal(result.server_metrics?.num_requests_running_peak, 2);
  assert.equal(result.server_metrics?.kv_cache_usage_peak, 0.25);
});

test('a first byte is timed at the read that brought it, never after the first token that came with it', async (t) => {
  const s = await standIn({});
  t.after(s.close);
  const { records } = await runBenchmark({ endpoint: `${s.origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false });
  assert.equal(records.length, 8);
  for (const r of records) {
    assert.ok(r.first_byte_time_s !== null && r.first_byte_time_s <= (r.chunk_times_s[0] as number), `${r.request_id}: first byte ${r.first_byte_time_s} after first token ${r.chunk_times_s[0]}`);
  }
});

test('answers that stop before max_tokens although ignore_eos was sent are counted, and `run` says so', async (t) => {
  const stops = await standIn({ stopAfter: 2 });
  t.after(stops.close);
  const out = await runBenchmark({ endpoint: `${stops.origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false });
  assert.equal(out.result.total_output_tokens, 16);
  assert.deepEqual(out.outputLengths, { requests: 8, short: 8, long: 0, asked_tokens: 48, output_tokens: 16, finish_reasons: { stop: 8 } });
  // Asked for the model's own lengths: nothing to say.
  assert.equal((await runBenchmark({ endpoint: `${stops.origin}/v1/completions`, workload: { ...workload, ignore_eos: false }, seed: 1, scrapeMetrics: false })).outputLengths, null);

  const io = captureIo(process.cwd(), { LMB_LOOPBACK_ONLY: '1' });
  const code = await main(['run', '--endpoint', `${stops.origin}/v1/completions`, '--input-len', '8', '--output-len', '6', '--concurrency', '2', '--num-prompts', '4', '--json'], io);
  assert.equal(code, 0);
  const json = JSON.parse(io.out()) as { completed: number; output_lengths?: { short: number; asked_tokens: number; output_tokens: number } };
  assert.equal(json.completed, 4);
  assert.deepEqual([json.output_lengths?.short, json.output_lengths?.asked_tokens, json.output_lengths?.output_tokens], [4, 24, 8]);
  assert.match(io.err(), /warning: of 4 completed requests, 4 ended before their max_tokens \(8 tokens generated where 24 were asked; finish_reason stop ×4\) although ignore_eos was sent/);
});

test('chunks of several tokens without usage that end at max_tokens raise no false alarm', async (t) => {
  const s = await standIn({ tokensPerChunk: 3, usage: false });
  t.after(s.close);
  const out = await runBenchmark({ endpoint: `${s.origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false });
  assert.equal(out.result.completed, 8);
  assert.deepEqual(out.result.lmb.token_source_counts, { max_tokens: 8 });
  assert.equal(out.outputLengths, null);
  const honest = await standIn({});
  t.after(honest.close);
  assert.equal((await runBenchmark({ endpoint: `${honest.origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false })).outputLengths, null);
});

test('a server that answers a streamed request with one JSON body is refused at the probe, and such answers are not called truncated streams', async (t) => {
  const never = await standIn({ json: 'all' });
  t.after(never.close);
  await assert.rejects(runBenchmark({ endpoint: `${never.origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false }), (e) => {
    assert.ok(isLmBenchError(e, 'LMB_ERR_ENDPOINT_BAD_RESPONSE'), String(e));
    assert.match((e as Error).message, /with JSON, not server-sent events/);
    return true;
  });
  const later = await standIn({ json: 'measured' });
  t.after(later.close);
  const { result } = await runBenchmark({ endpoint: `${later.origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false });
  assert.equal(result.failed, 8);
  assert.deepEqual(result.lmb.errors_by_kind, { bad_response: 8 });
  // What the server said instead is in the message.
  assert.match(result.lmb.error_samples?.[0]?.message ?? '', /^the answer held no server-sent event \("data:" line\): not streamed: \{"object":"text_completion","choices"/);
});

test('the rate modes call a rate found on answers shorter than asked unreliable, and say why', async (t) => {
  const stops = await standIn({ stopAfter: 2 });
  t.after(stops.close);
  const io = captureIo(process.cwd(), { LMB_LOOPBACK_ONLY: '1' });
  const code = await main(['run', '--endpoint', `${stops.origin}/v1/completions`, '--mode', 'max-rate', '--slo', 'ttft_p95_ms=5000', '--input-len', '8', '--output-len', '6', '--num-prompts', '6', '--json'], io);
  const maxRate = JSON.parse(io.out()) as { reliable: boolean; max_rate_rps: number | null; unreliable_reasons: string[] };
  assert.equal(code, 1);
  assert.equal(maxRate.max_rate_rps, null);
  assert.ok(maxRate.unreliable_reasons.some((r) => /ended before their max_tokens .* although ignore_eos was sent/.test(r)), maxRate.unreliable_reasons.join('; '));

  const held = await runSloHold({
    endpoint: `${stops.origin}/v1/completions`, workload: { ...workload, arrival: { kind: 'poisson', rate_rps: 20 } }, seed: 1,
    control: { key: 'ttft_p95_ms', limitMs: 5000 }, durationS: 1.5, windowS: 1, startRps: 20,
  });
  assert.equal(held.reliable, false);
  assert.ok(held.unreliable_reasons.some((r) => /ended before their max_tokens/.test(r)), held.unreliable_reasons.join('; '));
});

test("a refused request's error is the server's body, the status beside it, so no reader says the status twice", async (t) => {
  const s = await standIn({ refuse: 429 });
  t.after(s.close);
  const { result, records } = await runBenchmark({ endpoint: `${s.origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false });
  assert.deepEqual(result.lmb.errors_by_kind, { http_status: 8 });
  assert.deepEqual(records.map((r) => r.http_status), Array(8).fill(429));
  assert.deepEqual(result.lmb.error_samples, [{ status: 429, message: '{"error":{"message":"Rate limit reached","type":"rate_limit_error","code":429}} (Retry-After: "1")', count: 8 }]);
  assert.match(result.diagnosis?.summary ?? '', /8× HTTP 429: \{"error"/);
  assert.doesNotMatch(result.diagnosis?.summary ?? '', /HTTP 429: HTTP 429/);
});

test('a chunk that says "error": null carries no error', async (t) => {
  const s = await standIn({ errorNull: true });
  t.after(s.close);
  const { result } = await runBenchmark({ endpoint: `${s.origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false });
  assert.deepEqual([result.completed, result.failed, result.total_output_tokens], [8, 0, 48]);
});

test("a route the server redirects (FastAPI's 307 for a trailing slash) is refused at the probe, naming where it points", async (t) => {
  const server = createServer((req, res) => {
    if (req.url === '/v1/completions/') res.writeHead(307, { location: '/v1/completions' }).end();
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await assert.rejects(runBenchmark({ endpoint: `${origin}/v1/completions/`, model: 'm', workload, seed: 1, scrapeMetrics: false }), (e) => {
    assert.ok(isLmBenchError(e, 'LMB_ERR_ENDPOINT_BAD_RESPONSE'), String(e));
    assert.equal((e as Error).message, `${origin}/v1/completions/ answered HTTP 307, a redirect to ${origin}/v1/completions: give that URL as --endpoint`);
    return true;
  });
});

test("an engine's own streaming route (llama.cpp's /completion) is refused at the probe: its events carry no choices", async (t) => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ content: ' the', stop: false })}\n\ndata: ${JSON.stringify({ content: '', stop: true, timings: { predicted_n: 1 } })}\n\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await assert.rejects(runBenchmark({ endpoint: `${origin}/completion`, model: 'm', workload, seed: 1, scrapeMetrics: false }), (e) => {
    assert.ok(isLmBenchError(e, 'LMB_ERR_ENDPOINT_BAD_RESPONSE'), String(e));
    assert.match((e as Error).message, /streams events without OpenAI's `choices`.*not an OpenAI-compatible completions endpoint/);
    return true;
  });
});

test('a model the server does not serve is named as such at the probe, not called a wrong endpoint', async (t) => {
  // vLLM's 404 and Ollama's, for a name other than the one model each serves; a 400 about something else stays the run's to count.
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const model = (JSON.parse(body) as { model: string }).model;
      if (model === 'vllm-name') res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'error', message: 'The model `vllm-name` does not exist.', type: 'NotFoundError', param: null, code: 404 }));
      else if (model === 'ollama-name') res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'model "ollama-name" not found, try pulling it first', type: 'api_error' } }));
      else res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'error', message: "This model's maximum context length is 2048 tokens", code: 400 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const [model, said] of [['vllm-name', 'The model `vllm-name` does not exist.'], ['ollama-name', 'model "ollama-name" not found, try pulling it first']] as const) {
    await assert.rejects(runBenchmark({ endpoint: `${origin}/gw/v1/completions`, model, workload, seed: 1, scrapeMetrics: false }), (e) => {
      assert.ok(isLmBenchError(e, 'LMB_ERR_ENDPOINT_BAD_RESPONSE'), String(e));
      assert.equal((e as Error).message, `127.0.0.1 does not serve model "${model}" (HTTP 404: ${said}); pass --model with one it lists at ${origin}/gw/v1/models, or leave --model out to take the first`);
      return true;
    });
  }
  // "m" is inside "maximum", not named by the message: the run goes ahead and counts the refusals.
  const { result } = await runBenchmark({ endpoint: `${origin}/v1/completions`, model: 'm', workload, seed: 1, scrapeMetrics: false });
  assert.deepEqual(result.lmb.errors_by_kind, { http_status: 8 });
});

test('an empty OPENAI_API_KEY is no key in every mode; an empty --api-key is refused in every mode', async (t) => {
  const s = await standIn({});
  t.after(s.close);
  const load = ['--endpoint', `${s.origin}/v1/completions`, '--input-len', '8', '--output-len', '6', '--num-prompts', '3', '--json'];
  for (const mode of [[], ['--mode', 'max-rate', '--slo', 'ttft_p99_ms=5000']]) {
    const io = captureIo(process.cwd(), { LMB_LOOPBACK_ONLY: '1', OPENAI_API_KEY: '' });
    assert.equal(await main(['run', ...load, ...mode], io), 0, io.err());
    const blank = captureIo(process.cwd(), { LMB_LOOPBACK_ONLY: '1' });
    assert.notEqual(await main(['run', ...load, ...mode, '--api-key', ''], blank), 0);
    assert.match(blank.out() + blank.err(), /LMB_ERR_INVALID_ARGUMENT.*--api-key is empty/s);
  }
  assert.deepEqual([...s.auth], ['none']);
});

test("a reasoning model's chat stream in llama-server's and gateways' framing: the role chunk is no token, reasoning is", async (t) => {
  // CRLF line ends, `data:` without its space, `: ping` comments, a role-only first chunk, reasoning
  // then content, an empty-choices usage chunk, and no [DONE] (the finish_reason ends it).
  const server = createServer((req, res) => {
    if (req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 'r1' }] }));
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const max = (JSON.parse(body) as { max_completion_tokens: number }).max_completion_tokens;
      const ev = (o: unknown): string => `data:${JSON.stringify(o)}\r\n\r\n`;
      let out = ': ping\r\n\r\n' + ev({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] });
      for (let i = 0; i < max; i++) {
        const delta = i < max / 2 ? { reasoning_content: 'hmm', content: null } : { content: 'ok' };
        out += ev({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: i === max - 1 ? 'length' : null }] }) + ': ping\r\n\r\n';
      }
      out += ev({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 20, completion_tokens: max } });
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(out);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { result, records, outputLengths: lengths } = await runBenchmark({ endpoint: `${origin}/v1/chat/completions`, workload, seed: 1, scrapeMetrics: false });
  assert.deepEqual([result.endpoint_type, result.completed, result.failed, result.total_output_tokens, result.total_input_tokens], ['openai-chat', 8, 0, 48, 160]);
  for (const r of records) assert.deepEqual([r.chunk_times_s.length, r.output_tokens, r.token_source, r.finish_reason], [6, 6, 'usage', 'length']);
  assert.equal(lengths, null);
});

test("two runs in flight at once never send the same x-request-id (vLLM takes it as the engine's request id)", async (t) => {
  const s = await standIn({});
  t.after(s.close);
  const both = await Promise.all([1, 2].map(() => runBenchmark({ endpoint: `${s.origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false, warmupRequests: 2 })));
  assert.equal(s.ids.length, 2 * (8 + 2));
  assert.equal(new Set(s.ids).size, s.ids.length, s.ids.join(' '));
  // Each still ends with its record's id, so the server's logs and the records line up.
  for (const { records } of both) for (const r of records) assert.equal(s.ids.filter((id) => id.endsWith(`-${r.request_id}`)).length, 2);
});
