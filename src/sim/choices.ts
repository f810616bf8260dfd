import type { SamplingRequest } from './sampling.js';
import { tokenText } from './tokenizer.js';

/**
 * What one choice of a simulated completion generates, decided when the request arrives (the engine
 * only needs its length): how many tokens, why it stops, and its text. The words are the tokenizer
 * stand-in's fixed cycle (`tokenText`), so a stop string is found where vLLM would find it in that
 * text: not before `min_tokens`, the text cut before the stop string (after it with
 * `include_stop_str_in_output`), `finish_reason` "stop" and the string as `stop_reason`.
 */
export interface ChoicePlan {
  readonly tokens: number;
  readonly finishReason: 'length' | 'stop';
  /** The stop string that ended it, or null (EOS, or the length). */
  readonly stopReason: string | null;
  /** Length of the text returned (the tokens' text, cut at a stop string). */
  readonly textLength: number;
}

/** Output length when a choice stops at "EOS" (ignore_eos false): median of a seeded log-normal draw. */
export const NATURAL_MEAN = 200;

/**
 * One choice's plan: `maxTokens` (already resolved against the context), a seeded EOS draw unless
 * `ignore_eos`, never before `min_tokens`, then the first stop string in the text.
 */
export function planChoice(s: SamplingRequest, maxTokens: number, normal: () => number): ChoicePlan {
  let tokens = maxTokens;
  let finishReason: ChoicePlan['finishReason'] = 'length';
  if (!s.ignoreEos) {
    const natural = Math.max(1, s.minTokens, Math.round(NATURAL_MEAN * Math.exp(0.7 * normal() - 0.245)));
    if (natural < maxTokens) {
      tokens = natural;
      finishReason = 'stop';
    }
  }
  let text = '';
  if (s.stop.length > 0) {
    const longest = Math.max(...s.stop.map((x) => x.length));
    for (let i = 0; i < tokens; i++) {
      const from = Math.max(0, text.length - longest + 1);
      text += tokenText(i);
      // vLLM checks stop strings only once more than min_tokens tokens are out.
      if (i + 1 <= s.minTokens) continue;
      let at = -1;
      let hit: string | null = null;
      for (const stop of s.stop) {
        const j = text.indexOf(stop, from);
        if (j >= 0 && (at < 0 || j < at)) {
          at = j;
          hit = stop;
        }
      }
      if (hit !== null) return { tokens: i + 1, finishReason: 'stop', stopReason: hit, textLength: s.includeStop ? at + hit.length : at };
    }
    return { tokens, finishReason, stopReason: null, textLength: text.length };
  }
  return { tokens, finishReason, stopReason: null, textLength: textLengthOf(tokens) };
}

/** Characters in the text of the first `tokens` output tokens. */
export function textLengthOf(tokens: number): number {
  let n = 0;
  for (let i = 0; i < tokens; i++) n += tokenText(i).length;
  return n;
}

/**
 * A choice's text as it streams: token `i`'s share of the returned text (the text cut at a stop string,
 * so the pieces add up to the final text, the last ones empty where the cut falls earlier).
 */
export class ChoiceText {
  private emitted = 0;
  private full = 0;
  private readonly limit: number;

  constructor(plan: ChoicePlan) {
    this.limit = plan.textLength;
  }

  /** The text token `i` adds (tokens come in order). */
  piece(i: number): string {
    const t = tokenText(i);
    const start = this.full;
    this.full += t.length;
    const end = Math.min(this.full, this.limit);
    if (end <= this.emitted) return '';
    const out = t.slice(this.emitted - start, end - start);
    this.emitted = end;
    return out;
  }
}

/** A token's log-probability stand-in: deterministic, in (−1, 0]. */
const logprobOf = (i: number, rank: number): number => -Math.round((0.05 + 0.11 * ((i * 3 + rank) % 7) + 0.8 * rank) * 1000) / 1000;

/** The `top` alternatives at token `i`, the sampled one first (vLLM returns the sampled token and the top ones). */
function alternatives(i: number, top: number): { token: string; logprob: number }[] {
  const out = [{ token: tokenText(i), logprob: logprobOf(i, 0) }];
  for (let r = 1; r < top; r++) out.push({ token: tokenText(i + r), logprob: logprobOf(i, r) });
  return out;
}

/** Completions' `logprobs` for tokens [from, to): vLLM's {text_offset, token_logprobs, tokens, top_logprobs}. */
export function completionLogprobs(from: number, to: number, top: number, offset0: number): Record<string, unknown> {
  const tokens: string[] = [];
  const tokenLogprobs: number[] = [];
  const topLogprobs: Record<string, number>[] = [];
  const offsets: number[] = [];
  let offset = offset0;
  for (let i = from; i < to; i++) {
    const alts = alternatives(i, Math.max(1, top));
    const t = tokenText(i);
    tokens.push(t);
    tokenLogprobs.push(alts[0]?.logprob ?? 0);
    topLogprobs.push(Object.fromEntries(alts.slice(0, top + 1).map((a) => [a.token, a.logprob])));
    offsets.push(offset);
    offset += t.length;
  }
  return { text_offset: offsets, token_logprobs: tokenLogprobs, tokens, top_logprobs: topLogprobs };
}

/** Chat's `logprobs` for tokens [from, to): {content: [{token, logprob, bytes, top_logprobs}]}. */
export function chatLogprobs(from: number, to: number, top: number): Record<string, unknown> {
  const bytes = (s: string): number[] => [...Buffer.from(s, 'utf8')];
  const content = [];
  for (let i = from; i < to; i++) {
    const alts = alternatives(i, Math.max(1, top));
    const t = tokenText(i);
    content.push({ token: t, logprob: alts[0]?.logprob ?? 0, bytes: bytes(t), top_logprobs: alts.slice(0, top).map((a) => ({ token: a.token, logprob: a.logprob, bytes: bytes(a.token) })) });
  }
  return { content };
}
