import { readFileSync } from 'node:fs';
import { LmBenchError } from '../errors.js';
import type { Rng } from '../util/rng.js';
import { estimateTokens, type PreparedRequest } from './prompts.js';

/**
 * Prompts from files: a ShareGPT-format JSON (`[{conversations: [{from, value}, …]}]`, turn 0 is the
 * prompt, turn 1 the reply whose length sets max_tokens; vLLM's filter: prompt and reply ≥ 4 tokens,
 * prompt ≤ 1024, both ≤ 2048) or a JSONL of `{prompt, output_tokens?}`. Entries are shuffled with
 * the seed and cycled when the file holds fewer than asked (vLLM oversamples the same way).
 */
function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `${file}: cannot read dataset file`, { cause: err, details: { file } });
  }
}

function bad(file: string, line: number | null, message: string): LmBenchError {
  return new LmBenchError('LMB_ERR_CONFIG_INVALID', `${file}${line === null ? '' : `:${line}`}: ${message}`, {
    details: { file, line },
  });
}

function shuffle<T>(xs: T[], rng: Rng): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
  }
  return xs;
}

interface Entry {
  readonly prompt: string;
  readonly clientTokens: number;
  readonly outputTokens: number;
}

function take(entries: Entry[], n: number, file: string): PreparedRequest[] {
  if (entries.length === 0) throw bad(file, null, 'no usable prompts in the file');
  const out: PreparedRequest[] = [];
  for (let i = 0; i < n; i++) {
    const e = entries[i % entries.length] as Entry;
    out.push({ index: i, prompt: e.prompt, clientTokens: e.clientTokens, maxTokens: e.outputTokens });
  }
  return out;
}

export function loadShareGpt(file: string, opts: { numPrompts: number; rng: Rng; outputLen?: number | undefined }): PreparedRequest[] {
  let data: unknown;
  try {
    data = JSON.parse(readText(file));
  } catch (err) {
    if (err instanceof LmBenchError) throw err;
    throw bad(file, null, `not valid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(data)) throw bad(file, null, 'a ShareGPT file is a JSON array of {conversations: [...]}');
  const entries: Entry[] = [];
  for (const item of data as unknown[]) {
    const conv = (item as { conversations?: unknown }).conversations;
    if (!Array.isArray(conv) || conv.length < 2) continue;
    const prompt = (conv[0] as { value?: unknown }).value;
    const reply = (conv[1] as { value?: unknown }).value;
    if (typeof prompt !== 'string' || typeof reply !== 'string') continue;
    const pIn = estimateTokens(prompt);
    const pOut = opts.outputLen ?? estimateTokens(reply);
    if (pIn < 4 || (opts.outputLen === undefined && pOut < 4) || pIn > 1024 || pIn + pOut > 2048) continue;
    entries.push({ prompt, clientTokens: pIn, outputTokens: pOut });
  }
  return take(shuffle(entries, opts.rng), opts.numPrompts, file);
}

export function loadJsonlPrompts(file: string, opts: { numPrompts: number; rng: Rng; outputLen: number }): PreparedRequest[] {
  const entries: Entry[] = [];
  readText(file)
    .split('\n')
    .forEach((raw, i) => {
      const text = raw.trim();
      if (text === '') return;
      let obj: unknown;
      try {
        obj = JSON.parse(text);
      } catch {
        throw bad(file, i + 1, 'not a JSON object');
      }
      const { prompt, output_tokens: outTok } = obj as { prompt?: unknown; output_tokens?: unknown };
      if (typeof prompt !== 'string' || prompt === '') throw bad(file, i + 1, 'prompt: expected a non-empty string');
      if (outTok !== undefined && (typeof outTok !== 'number' || !Number.isInteger(outTok) || outTok < 1)) {
        throw bad(file, i + 1, 'output_tokens: expected a positive integer');
      }
      entries.push({ prompt, clientTokens: estimateTokens(prompt), outputTokens: typeof outTok === 'number' ? outTok : opts.outputLen });
    });
  return take(shuffle(entries, opts.rng), opts.numPrompts, file);
}
