import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import OpenAI from 'openai';
import { startSimServer, type SimServer } from '../../src/sim/index.js';
import { catalog } from './helpers.js';

// The simulated server against what vLLM's OpenAI server does with the request fields a client sends.
let server: SimServer;
let client: OpenAI;
const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';

before(async () => {
  server = await startSimServer({ config: { max_model_len: 4096 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 200, seed: 1, catalog });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
});
after(async () => {
  await server.close();
});

const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const errorOf = (json: Record<string, unknown>): { message: string; param: unknown } => json['error'] as { message: string; param: unknown };

test('a completions request without max_tokens generates at most 16 tokens (vLLM CompletionRequest default); null means the rest of the context', async () => {
  const r = await post('/v1/completions', { model: MODEL, prompt: words(10), ignore_eos: true });
  assert.equal(r.status, 200);
  assert.equal((r.json['usage'] as { completion_tokens: number }).completion_tokens, 16);
  const rest = await post('/v1/completions', { model: MODEL, prompt: words(4000), max_tokens: null, ignore_eos: true });
  assert.equal((rest.json['usage'] as { completion_tokens: number }).completion_tokens, 96);
});

test("prompt + max_tokens over the context is vLLM's 400, naming max_tokens and the input tokens", async () => {
  const r = await post('/v1/completions', { model: MODEL, prompt: words(4000), max_tokens: 200 });
  assert.equal(r.status, 400);
  const e = errorOf(r.json);
  assert.match(e.message, /^'max_tokens' or 'max_completion_tokens' is too large: 200\. This model's maximum context length is 4096 tokens and your request has 4000 input tokens \(200 > 4096 - 4000\)/);
  assert.equal(e.param, 'max_tokens');
  const chat = await post('/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: words(5000) }] });
  assert.equal(chat.status, 400);
  assert.match(errorOf(chat.json).message, /maximum context length is 4096 tokens\. However, your request has 5000 input tokens/);
  assert.equal(errorOf(chat.json).param, 'input_tokens');
});

test('n choices per prompt and a batch of prompts: one choice each, indexed prompt × n + sample, usage summed', async () => {
  const r = await post('/v1/completions', { model: MODEL, prompt: [words(6), words(4)], n: 2, max_tokens: 3, ignore_eos: true });
  assert.equal(r.status, 200);
  const choices = r.json['choices'] as { index: number; text: string; finish_reason: string }[];
  assert.deepEqual(
    choices.map((c) => c.index),
    [0, 1, 2, 3],
  );
  for (const c of choices) assert.equal(c.text.trim().split(/\s+/).length, 3);
  assert.deepEqual(r.json['usage'], { prompt_tokens: 10, total_tokens: 22, completion_tokens: 12, prompt_tokens_details: null });
  const chat = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: words(5) }], n: 3, max_completion_tokens: 4, ignore_eos: true } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(chat.choices.length, 3);
  assert.equal(chat.usage?.completion_tokens, 12);
  assert.equal(chat.usage?.prompt_tokens, 5);
});

test('streaming n > 1: every choice streams its tokens and finish_reason; one usage chunk counts them all', async () => {
  const stream = await client.completions.create({ model: MODEL, prompt: words(8), n: 2, max_tokens: 5, ignore_eos: true, stream: true, stream_options: { include_usage: true } } as OpenAI.CompletionCreateParamsStreaming);
  const tokens = [0, 0];
  const finish: (string | null)[] = [null, null];
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    if (chunk.choices.length === 0) usage = chunk.usage ?? undefined;
    for (const c of chunk.choices) {
      tokens[c.index] = (tokens[c.index] ?? 0) + 1;
      if (c.finish_reason !== null) finish[c.index] = c.finish_reason;
    }
  }
  assert.deepEqual(tokens, [5, 5]);
  assert.deepEqual(finish, ['length', 'length']);
  assert.equal(usage?.completion_tokens, 10);
});

test('min_tokens holds EOS back and may not exceed max_tokens', async () => {
  // Without ignore_eos the stand-in stops at a seeded "EOS" near 200 tokens; min_tokens 600 forbids that.
  const r = await post('/v1/completions', { model: MODEL, prompt: words(5), max_tokens: 600, min_tokens: 600 });
  assert.equal((r.json['usage'] as { completion_tokens: number }).completion_tokens, 600);
  const bad = await post('/v1/completions', { model: MODEL, prompt: words(5), max_tokens: 5, min_tokens: 10 });
  assert.equal(bad.status, 400);
  assert.equal(errorOf(bad.json).message, 'min_tokens must be less than or equal to max_tokens=5, got 10.');
  // Chat without max_tokens: checked against what the context leaves.
  const chat = await post('/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: words(96) }], min_tokens: 4001 });
  assert.equal(errorOf(chat.json).message, 'min_tokens must be less than or equal to max_tokens=4000, got 4001.');
});

test('a stop string ends the choice with finish_reason "stop" and stop_reason, the text cut before it', async () => {
  // The stand-in's words are " the model serves tokens in …".
  const r = await post('/v1/completions', { model: MODEL, prompt: words(5), max_tokens: 10, stop: ['tokens'], ignore_eos: true });
  const c = (r.json['choices'] as { text: string; finish_reason: string; stop_reason: string | null }[])[0];
  assert.deepEqual([c?.text, c?.finish_reason, c?.stop_reason], [' the model serves ', 'stop', 'tokens']);
  assert.equal((r.json['usage'] as { completion_tokens: number }).completion_tokens, 4);
  const kept = await post('/v1/completions', { model: MODEL, prompt: words(5), max_tokens: 10, stop: 'model', include_stop_str_in_output: true, ignore_eos: true });
  assert.equal((kept.json['choices'] as { text: string }[])[0]?.text, ' the model');
});

test('logprobs come back in the shape each API uses, one entry per token', async () => {
  const c = await post('/v1/completions', { model: MODEL, prompt: words(5), max_tokens: 3, logprobs: 2, ignore_eos: true });
  const lp = (c.json['choices'] as { logprobs: { tokens: string[]; token_logprobs: number[]; top_logprobs: Record<string, number>[]; text_offset: number[] } }[])[0]?.logprobs;
  assert.equal(lp?.tokens.length, 3);
  assert.equal(lp?.token_logprobs.length, 3);
  assert.equal(lp?.tokens.join(''), (c.json['choices'] as { text: string }[])[0]?.text);
  assert.ok(lp?.top_logprobs.every((t) => Object.keys(t).length >= 2));
  const chat = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: words(5) }], max_completion_tokens: 2, logprobs: true, top_logprobs: 3, ignore_eos: true } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  const content = chat.choices[0]?.logprobs?.content ?? [];
  assert.equal(content.length, 2);
  assert.equal(content[0]?.top_logprobs.length, 3);
  assert.ok(content.every((t) => t.logprob <= 0));
  const tooMany = await post('/v1/completions', { model: MODEL, prompt: 'x', max_tokens: 2, logprobs: 21 });
  assert.equal(tooMany.status, 400);
});

test('sampling fields vLLM refuses are a 400 with its message', async () => {
  for (const [body, message] of [
    [{ n: 0 }, 'n must be at least 1, got 0.'],
    [{ temperature: -1 }, 'temperature must be non-negative, got -1.'],
    [{ max_tokens: 0 }, 'max_tokens must be at least 1, got 0.'],
    [{ stream_options: { include_usage: true } }, 'Stream options can only be defined when `stream=True`.'],
  ] as const) {
    const r = await post('/v1/completions', { model: MODEL, prompt: 'a b', ...body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(errorOf(r.json).message, message);
  }
});

test('request_success_total counts EOS and stop-string finishes under "stop", max_tokens under "length"', async () => {
  const own = await startSimServer({ config: { max_model_len: 4096 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 50, seed: 1, catalog });
  try {
    const send = async (body: Record<string, unknown>): Promise<void> => {
      const r = await fetch(`${own.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'a b', ...body }) });
      assert.equal(r.status, 200);
    };
    await send({ max_tokens: 3, ignore_eos: true });
    await send({ max_tokens: 9, stop: ['serves'], ignore_eos: true });
    await send({ max_tokens: 3000 }); // an "EOS" draw near 200 tokens ends it first
    const text = await (await fetch(`${own.url}/metrics`)).text();
    const count = (reason: string): number => Number(new RegExp(`vllm:request_success_total\\{[^}]*finished_reason="${reason}"\\} (\\d+)`).exec(text)?.[1]);
    assert.deepEqual([count('stop'), count('length')], [2, 1]);
  } finally {
    await own.close();
  }
});

test('a client that hangs up on an n = 3 stream frees all three requests: batch slots and KV blocks', async () => {
  const own = await startSimServer({ config: { max_model_len: 4096 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 1, seed: 1, catalog });
  try {
    const body = JSON.stringify({ model: MODEL, prompt: words(500), n: 3, max_tokens: 3000, ignore_eos: true, stream: true });
    const firstChunk = new Promise<http.ClientRequest>((ok, fail) => {
      const req = http.request(`${own.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.once('data', () => ok(req));
        res.on('error', () => {});
      });
      req.on('error', (err) => fail(err));
      req.end(body);
    });
    const req = await firstChunk;
    assert.equal(own.engine.running + own.engine.waiting, 3);
    assert.ok(own.engine.kvUsage > 0);
    req.destroy();
    // The server hears the close on its next turns of the event loop.
    for (let i = 0; i < 200 && own.engine.running + own.engine.waiting > 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(own.engine.running + own.engine.waiting, 0);
    assert.equal(own.engine.kvUsage, 0);
  } finally {
    await own.close();
  }
});

test("/tokenize counts a prompt or a conversation as generation does; /version names the release imitated", async () => {
  const t = await post('/tokenize', { model: MODEL, prompt: words(12) });
  assert.equal(t.status, 200);
  assert.equal(t.json['count'], 12);
  assert.equal((t.json['tokens'] as number[]).length, 12);
  assert.equal(t.json['max_model_len'], 4096);
  const again = await post('/tokenize', { prompt: words(12) });
  assert.deepEqual(again.json['tokens'], t.json['tokens']);
  const chat = await post('/tokenize', { messages: [{ role: 'system', content: words(3) }, { role: 'user', content: words(4) }] });
  assert.equal(chat.json['count'], 7);
  assert.equal((await post('/tokenize', { prompt: [5, 6, 7] })).json['count'], 3);
  assert.equal((await post('/tokenize', { prompt: 7 })).status, 400);
  const own = await startSimServer({ config: { max_model_len: 4096 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, seed: 1, catalog, vllmVersion: '0.15.1' });
  try {
    assert.deepEqual(await (await fetch(`${own.url}/version`)).json(), { version: '0.15.1' });
  } finally {
    await own.close();
  }
});

test("/metrics has vLLM's per-request histograms: e2e latency, inter-token latency, prompt and generation tokens", async () => {
  const own = await startSimServer({ config: { max_model_len: 4096 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 200, seed: 1, catalog });
  try {
    const r = await fetch(`${own.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: words(30), max_tokens: 5, ignore_eos: true }) });
    assert.equal(r.status, 200);
    const text = await (await fetch(`${own.url}/metrics`)).text();
    const value = (name: string): number => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
    assert.equal(value('vllm:e2e_request_latency_seconds_count'), 1);
    assert.equal(value('vllm:inter_token_latency_seconds_count'), 4);
    assert.equal(value('vllm:request_prompt_tokens_sum'), 30);
    assert.equal(value('vllm:request_generation_tokens_sum'), 5);
    assert.match(text, /vllm:request_prompt_tokens_bucket\{[^}]*le="2000"\} 1\n/);
  } finally {
    await own.close();
  }
});

test('a route asked with another method is 405 with the methods it takes; an unknown path is 404', async () => {
  const r = await fetch(`${server.url}/v1/completions`);
  assert.equal(r.status, 405);
  assert.equal(r.headers.get('allow'), 'POST');
  assert.deepEqual(await r.json(), { detail: 'Method Not Allowed' });
  assert.equal((await fetch(`${server.url}/ping`, { method: 'POST' })).status, 200);
  assert.equal((await fetch(`${server.url}/v2/nothing`)).status, 404);
});

test('a model is answered by its served name alone, as vLLM matches it exactly; another name, a catalog id or another case is a 404', async () => {
  assert.equal((await post('/v1/completions', { model: MODEL, prompt: words(3), max_tokens: 1 })).status, 200);
  assert.equal((await post('/v1/completions', { prompt: words(3), max_tokens: 1 })).status, 200);
  for (const other of ['llama-3.1-8b', MODEL.toLowerCase(), 'Llama-3.1-8B-Instruct']) {
    const r = await post('/v1/completions', { model: other, prompt: words(3), max_tokens: 1 });
    assert.equal(r.status, 404, other);
    assert.equal(errorOf(r.json).message, `The model \`${other}\` does not exist.`);
  }
});
