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

/** The contents of chat messages as one text, in order (what the stand-in tokenizes for a conversation). */
export function messageText(messages: readonly unknown[]): string {
  return messageTexts(messages).join(' ');
}

function messageTexts(messages: readonly unknown[]): string[] {
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
 * order, with no template tokens (the token count does the same). A completions body with a batch of
 * prompts reads as its first; `readPrompts` reads them all.
 */
export function readPrompt(body: Json, chat: boolean, blockSize: number): ReadPrompt | string {
  const all = readPrompts(body, chat, blockSize);
  return typeof all === 'string' ? all : (all[0] as ReadPrompt);
}

const PROMPT_SHAPE = '`prompt` must be a string, a list of strings or a list of token ids';

/** One prompt of token ids: each id a whole number ≥ 0 (vLLM's `list[Annotated[int, Field(ge=0)]]`). */
function readIds(ids: readonly unknown[], blockSize: number): ReadPrompt | string {
  if (!ids.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= 0)) return PROMPT_SHAPE;
  const h = new BlockHasher(blockSize);
  for (const id of ids) h.token(String(id));
  return { tokens: Math.max(1, ids.length), blocks: { ids: h.ids, tokens: blockSize } };
}

function readText(text: string, blockSize: number): ReadPrompt {
  const h = new BlockHasher(blockSize);
  h.words(text);
  return { tokens: Math.max(1, h.count), blocks: { ids: h.ids, tokens: blockSize } };
}

/**
 * Every prompt of a body: chat's one conversation; a completions `prompt` that is a string or one list
 * of token ids is one prompt, a list of strings or a list of token-id lists is a batch, one choice (or
 * `n`) per prompt in vLLM's answer.
 */
export function readPrompts(body: Json, chat: boolean, blockSize: number): ReadPrompt[] | string {
  if (chat) {
    const messages = body['messages'];
    if (!Array.isArray(messages) || messages.length === 0) return '`messages` must be a non-empty array';
    const h = new BlockHasher(blockSize);
    for (const text of messageTexts(messages as unknown[])) h.words(text);
    return [{ tokens: Math.max(1, h.count), blocks: { ids: h.ids, tokens: blockSize } }];
  }
  const prompt = body['prompt'];
  if (typeof prompt === 'string') return [readText(prompt, blockSize)];
  if (!Array.isArray(prompt) || prompt.length === 0) return PROMPT_SHAPE;
  const list = prompt as unknown[];
  if (list.every((x) => typeof x === 'number')) {
    const one = readIds(list, blockSize);
    return typeof one === 'string' ? one : [one];
  }
  if (list.every((x) => typeof x === 'string')) return list.map((t) => readText(t, blockSize));
  if (list.every((x) => Array.isArray(x) && x.length > 0)) {
    const out: ReadPrompt[] = [];
    for (const ids of list as unknown[][]) {
      const one = readIds(ids, blockSize);
      if (typeof one === 'string') return one;
      out.push(one);
    }
    return out;
  }
  return PROMPT_SHAPE;
}
