/**
 * A deterministic tokenizer stand-in for the simulated server: one token per whitespace-separated
 * word (at least one token for a non-empty text). A client that wants an N-token prompt sends N
 * words. Chat messages count the words of every message's content, with no chat-template overhead,
 * so `usage.prompt_tokens` equals what the client counted. Generated text is one word per token,
 * each with a leading space, so the completion re-tokenizes to its `completion_tokens`.
 */
export function countTokens(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || c === 10 || c === 9 || c === 13;
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

const WORDS = ['the', 'model', 'serves', 'tokens', 'in', 'a', 'simulated', 'engine', 'with', 'paged', 'attention', 'and', 'batches'];

/** The text of output token `i` (0-based) of a response. */
export function tokenText(i: number): string {
  return ` ${WORDS[i % WORDS.length] ?? 'x'}`;
}
