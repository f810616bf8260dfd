import type { PromptBlocks } from '../workload/sample.js';
import { forEachWord } from './tokenizer.js';

type Json = Record<string, unknown>;

/** A request's prompt as the simulated server reads it: its token count and its full blocks' content ids. */
export interface ReadPrompt {
  readonly tokens: number;
  /** One id per full block of `blockSize` tokens; equal ids mean equal tokens from the prompt's start to that block's end. */
  readonly blocks: PromptBlocks;
}

/**
 * Ids stay below 2^46 so the KV pool's trace keys (id × 64 + 2^40) remain exact doubles. Two 32-bit
 * FNV-1a lanes with different offsets make the 46 bits; at a million distinct blocks the chance of any
 * two sharing an id is under 1%, and a shared id costs one block's false hit, not a wrong figure elsewhere.
 */
const HIGH_MASK = 0x3fff;

class BlockHasher {
  readonly ids: number[] = [];
  /** Tokens read so far, the count `usage.prompt_tokens` reports. */
  count = 0;
  private lo = 0x811c9dc5;
  private hi = 0x01000193 ^ 0x5bd1e995;
  private inBlock = 0;

  private readonly blockSize: number;

  constructor(blockSize: number) {
    this.blockSize = blockSize;
  }

  /** One token, as the characters of a word or the decimal of a token id. */
  token(text: string, from = 0, to = text.length): void {
    let lo = this.lo;
    let hi = this.hi;
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i);
      lo = Math.imul(lo ^ c, 0x01000193);
      hi = Math.imul(hi ^ c, 0x01000193) ^ (hi >>> 15);
    }
    // A separator, so "ab c" and "a bc" differ.
    this.lo = Math.imul(lo ^ 32, 0x01000193);
    this.hi = Math.imul(hi ^ 32, 0x01000193);
    this.count++;
    if (++this.inBlock < this.blockSize) return;
    // vLLM chains each full block's hash to its parent's: the running lanes carry on into the next block.
    this.ids.push((this.hi & HIGH_MASK) * 2 ** 32 + (this.lo >>> 0));
    this.inBlock = 0;
  }

  /** Every whitespace-separated word of a text, one token apiece (the server's tokenizer stand-in). */
  words(text: string): void {
    forEachWord(text, (start, end) => this.token(text, start, end));
  }
}

function messageTexts(messages: unknown[]): string[] {
  const texts: string[] = [];
  for (const m of messages) {
    const content = (m as Json | null)?.['content'];
    if (typeof content === 'string') texts.push(content);
    else if (Array.isArray(content)) {
      for (const part of content as unknown[]) {
        const text = (part as Json | null)?.['text'];
        if (typeof text === 'string') texts.push(text);
      }
    }
  }
  return texts;
}

/**
 * The prompt of a completions or chat body, or the 400 message for one the server cannot read. Block ids
 * come from the prompt's own text, so a client that re-sends a prompt (a pool) or extends a conversation
 * (a session) meets the prefix cache as it would on vLLM. Chat messages are read as their contents in
 * order, with no template tokens (the token count does the same).
 */
export function readPrompt(body: Json, chat: boolean, blockSize: number): ReadPrompt | string {
  const h = new BlockHasher(blockSize);
  let tokens: number;
  if (chat) {
    const messages = body['messages'];
    if (!Array.isArray(messages) || messages.length === 0) return '`messages` must be a non-empty array';
    for (const text of messageTexts(messages as unknown[])) h.words(text);
    tokens = Math.max(1, h.count);
  } else {
    const prompt = body['prompt'];
    if (typeof prompt === 'string') {
      h.words(prompt);
      tokens = Math.max(1, h.count);
    } else if (Array.isArray(prompt) && prompt.length > 0) {
      const first: unknown = prompt[0];
      if (prompt.every((x) => typeof x === 'number')) {
        for (const id of prompt) h.token(String(id));
        tokens = prompt.length;
      } else if (typeof first === 'string') {
        h.words(first);
        tokens = Math.max(1, h.count);
      } else if (Array.isArray(first)) {
        for (const id of first as unknown[]) h.token(String(id));
        tokens = first.length;
      } else return '`prompt` must be a string, a list of strings or a list of token ids';
    } else return '`prompt` must be a string, a list of strings or a list of token ids';
  }
  return { tokens, blocks: { ids: h.ids, tokens: blockSize } };
}
