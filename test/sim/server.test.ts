import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startSimServer, type SimServer } from '../../src/sim/index.js';
import { LmBenchError } from '../../src/errors.js';
import { catalog } from './helpers.js';

let server: SimServer;
let client: OpenAI;
const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';

before(async () => {
  server = await startSimServer({ config: { max_model_len: 4096 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 20, seed: 1, catalog });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
});
after(async () => {
  await server.close();
});

const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

test('streaming completions: one chunk per token, finish_reason on the last, a usage chunk, then [DONE]', async () => {
  const stream = await client.completions.create({ model: MODEL, prompt: words(50), max_tokens: 12, stream: true, stream_options: { include_usage: true }, ignore_eos: true } as OpenAI.CompletionCreateParamsStreaming);
  const texts: string[] = [];
  let usage: OpenAI.CompletionUsage | undefined;
  let last: string | null = null;
  for await (const chunk of stream) {
    if (chunk.choices.length === 0) usage = chunk.usage ?? undefined;
    for (const c of chunk.choices) {
      texts.push(c.text);
      last = c.finish_reason;
    }
  }
  assert.equal(texts.length, 12);
  assert.equal(last, 'length');
  assert.deepEqual(usage && { p: usage.prompt_tokens, c: usage.completion_tokens, t: usage.total_tokens }, { p: 50, c: 12, t: 62 });
});

test('streaming chat: the role chunk comes first with empty content', async () => {
  const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: words(20) }], max_completion_tokens: 5, stream: true, ignore_eos: true } as OpenAI.ChatCompletionCreateParamsStreaming);
  const deltas: OpenAI.ChatCompletionChunk.Choice.Delta[] = [];
  for await (const chunk of stream) for (const c of chunk.choices) deltas.push(c.delta);
  assert.equal(deltas[0]?.role, 'assistant');
  assert.equal(deltas[0]?.content, '');
  assert.equal(deltas.length, 6);
});

test('non-streaming completions and chat carry text and usage', async () => {
  const c = await client.completions.create({ model: MODEL, prompt: words(10), max_tokens: 7, ignore_eos: true } as OpenAI.CompletionCreateParamsNonStreaming);
  assert.equal(c.usage?.completion_tokens, 7);
  assert.equal(c.choices[0]?.text.trim().split(/\s+/).length, 7);
  const chat = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: words(8) }], max_tokens: 3, ignore_eos: true } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(chat.choices[0]?.message.role, 'assistant');
  assert.deepEqual([chat.usage?.prompt_tokens, chat.usage?.completion_tokens], [10, 3]);
  assert.equal(chat.choices[0]?.finish_reason, 'length');
});

test('prompt + max_tokens over max_model_len is HTTP 400; an unknown model is 404', async () => {
  await assert.rejects(client.completions.create({ model: MODEL, prompt: words(4000), max_tokens: 200 }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 400 && /maximum context length is 4096/.test(err.message));
  await assert.rejects(client.completions.create({ model: 'nope', prompt: 'x', max_tokens: 2 }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 404);
});

test('/v1/models, /health and /metrics speak vLLM', async () => {
  const models = await client.models.list();
  const m = models.data[0] as unknown as { id: string; root: string; max_model_len: number };
  assert.deepEqual([m.id, m.root, m.max_model_len], [MODEL, MODEL, 4096]);
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
  const text = await (await fetch(`${server.url}/metrics`)).text();
  for (const name of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc', 'vllm:num_preemptions_total', 'vllm:time_to_first_token_seconds_bucket']) {
    assert.ok(text.includes(name), name);
  }
  const gen = /vllm:generation_tokens_total\{[^}]*\} (\d+)/.exec(text);
  assert.ok(gen !== null && Number(gen[1]) >= 12 + 5 + 7 + 3);
});

test('a configuration that cannot start rejects with LMB_ERR_STARTUP_FAILED', async () => {
  await assert.rejects(
    startSimServer({ config: {}, hardware: { gpu: 'L4', count: 1 }, model: 'llama-3.1-8b', port: 0, catalog }),
    (err: unknown) => err instanceof LmBenchError && err.code === 'LMB_ERR_STARTUP_FAILED' && /C13/.test(err.message),
  );
});

test('an MoE model behind the OpenAI API: gpt-oss-120b on 2 GPUs streams its tokens', async () => {
  const moe = await startSimServer({ config: { tensor_parallel_size: 2, max_model_len: 8192 }, hardware: { gpu: 'H100-SXM', count: 2 }, model: 'gpt-oss-120b', port: 0, speed: 20, seed: 1, catalog });
  try {
    const c = new OpenAI({ baseURL: `${moe.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const models = await c.models.list();
    assert.equal(models.data[0]?.id, 'openai/gpt-oss-120b');
    const r = await c.completions.create({ model: 'openai/gpt-oss-120b', prompt: words(300), max_tokens: 8, ignore_eos: true } as OpenAI.CompletionCreateParamsNonStreaming);
    assert.equal(r.usage?.completion_tokens, 8);
    assert.equal(r.usage?.prompt_tokens, 300);
  } finally {
    await moe.close();
  }
});

test('a re-sent prompt is served from the prefix cache; a fresh one of the same length is not', async () => {
  const own = await startSimServer({ config: { max_model_len: 4096 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 20, seed: 1, catalog });
  try {
    const c = new OpenAI({ baseURL: `${own.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const hits = async (): Promise<number> => Number(/vllm:prefix_cache_hits_total\{[^}]*\} (\d+)/.exec(await (await fetch(`${own.url}/metrics`)).text())?.[1]);
    const send = (prompt: string) => c.completions.create({ model: MODEL, prompt, max_tokens: 2, ignore_eos: true } as OpenAI.CompletionCreateParamsNonStreaming);
    await send(words(200));
    assert.equal(await hits(), 0);
    await send(words(200).replaceAll('w', 'v'));
    assert.equal(await hits(), 0, 'different text of the same length shares nothing');
    await send(words(200));
    // vLLM keeps at least the last prompt token to compute: 12 full 16-token blocks of the 200 hit.
    assert.equal(await hits(), 192);
  } finally {
    await own.close();
  }
});
