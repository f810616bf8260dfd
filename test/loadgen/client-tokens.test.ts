import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Workload } from '../../src/domain/index.js';
import { fallbackOutputTokens } from '../../src/loadgen/client.js';
import { runBenchmark } from '../../src/loadgen/index.js';
import { completionsStandIn } from '../helpers/completions-stand-in.js';

// Output tokens of answers whose stream carries no usage, against a loopback server that streams
// several tokens a chunk (llama.cpp, TGI, a server batching its stream): what is stored is what the
// server generated where the stream says it, and marked by which estimate: `max_tokens` for an answer
// counted as its max_tokens, `fallback` for one counted by its chunks.

interface Habit {
  readonly tokensPerChunk: number;
  /** Tokens generated whatever max_tokens says (null: max_tokens). */
  readonly generate: number | null;
  /** The finish reason of the last chunk. */
  readonly finish: string;
}

async function standIn(h: Habit): Promise<{ origin: string; close: () => Promise<void>; asked: number[] }> {
  /** max_tokens of every measured request. */
  const asked: number[] = [];
  const s = await completionsStandIn((res, max) => {
    // The 1-token probe is answered as vLLM would, so the load itself meets the habit.
    const probe = max === 1;
    if (!probe) asked.push(max);
    const n = probe ? 1 : (h.generate ?? max);
    const per = probe ? 1 : h.tokensPerChunk;
    let out = '';
    for (let i = 0; i < n; i += per) {
      const last = i + per >= n;
      out += `data: ${JSON.stringify({ object: 'text_completion', choices: [{ index: 0, text: ' tok'.repeat(Math.min(per, n - i)), finish_reason: last ? (probe ? 'length' : h.finish) : null }] })}\n\n`;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${out}data: [DONE]\n\n`);
  });
  return { origin: s.origin, close: s.close, asked };
}

const workload: Workload = {
  name: 'no-usage',
  api: 'completions',
  input_len: { dist: 'fixed', value: 8 },
  output_len: { dist: 'fixed', value: 6 },
  arrival: { kind: 'closed', concurrency: 2 },
  num_prompts: 4,
  ignore_eos: true,
};

const run = (origin: string): ReturnType<typeof runBenchmark> =>
  runBenchmark({ endpoint: `${origin}/v1/completions`, workload, seed: 1, scrapeMetrics: false, timeoutMs: 10_000, workers: 1 });

test('two tokens a chunk, no usage, finished at max_tokens: each answer is its max_tokens, not its 3 chunks, marked max_tokens (not the chunk floor\'s fallback)', { timeout: 30_000 }, async (t) => {
  const s = await standIn({ tokensPerChunk: 2, generate: null, finish: 'length' });
  t.after(s.close);
  const { result, records } = await run(s.origin);
  assert.equal(result.completed, 4);
  assert.deepEqual(s.asked, [6, 6, 6, 6]);
  for (const r of records) {
    assert.equal(r.chunk_times_s.length, 3, r.request_id);
    assert.equal(r.output_tokens, 6, `${r.request_id}: 6 tokens generated in 3 chunks`);
    assert.equal(r.token_source, 'max_tokens');
  }
  assert.equal(result.total_output_tokens, 24);
  assert.deepEqual(result.lmb.token_source_counts, { max_tokens: 4 });
});

test('two tokens a chunk, no usage, stopped early: the chunks are a floor, never raised to max_tokens, and the answers are short', { timeout: 30_000 }, async (t) => {
  const s = await standIn({ tokensPerChunk: 2, generate: 4, finish: 'stop' });
  t.after(s.close);
  const { result, records, outputLengths } = await run(s.origin);
  assert.equal(result.completed, 4);
  assert.deepEqual(records.map((r) => [r.chunk_times_s.length, r.output_tokens, r.token_source]), Array.from({ length: 4 }, () => [2, 2, 'fallback']));
  assert.equal(outputLengths?.short, 4);
});

test('a server that runs past max_tokens and says length is counted by its chunks, the larger', { timeout: 30_000 }, async (t) => {
  const s = await standIn({ tokensPerChunk: 1, generate: 9, finish: 'length' });
  t.after(s.close);
  const { records } = await run(s.origin);
  // Counted by its chunks, so marked as the chunk count is: fallback.
  assert.deepEqual(records.map((r) => [r.output_tokens, r.error_kind, r.token_source]), Array.from({ length: 4 }, () => [9, null, 'fallback']));
});

test('fallbackOutputTokens: max_tokens only for an answer that ended at its length', () => {
  assert.equal(fallbackOutputTokens(3, 'length', 6), 6);
  assert.equal(fallbackOutputTokens(8, 'length', 6), 8);
  assert.equal(fallbackOutputTokens(3, 'stop', 6), 3);
  assert.equal(fallbackOutputTokens(3, null, 6), 3);
});
