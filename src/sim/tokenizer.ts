/**
 * A deterministic tokenizer stand-in for the simulated server: one token per whitespace-separated
 * word (at least one token for a non-empty text). A client that wants an N-token prompt sends N
 * words. Chat messages count the words of every message's content, with no chat-template overhead,
 * so `usage.prompt_tokens` equals what the client counted. Generated text is one word per token,
 * each with a leading space, so the completion re-tokenizes to its `completion_tokens`.
 */
export function countTokens(text: string): number {
  let n = 0;
  forEachWord(text, () => n++);
  return n;
}

/** Each whitespace-separated word of `text`, as [start, end) offsets: what the stand-in counts as a token. */
export function forEachWord(text: string, visit: (start: number, end: number) => void): void {
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    const space = c === 32 || c === 10 || c === 9 || c === 13;
    if (!space && start < 0) start = i;
    else if (space && start >= 0) {
      visit(start, i);
      start = -1;
    }
  }
}

const WORDS = ['the', 'model', 'serves', 'tokens', 'in', 'a', 'simulated', 'engine', 'with', 'paged', 'attention', 'and', 'batches'];

/** The text of output token `i` (0-based) of a response. */
export function tokenText(i: number): string {
  return ` ${WORDS[i % WORDS.length] ?? 'x'}`;
}

/**
 * Token ids of a text for `/tokenize`: one per word (the count `countTokens` gives), each the word's
 * FNV-1a hash within the vocabulary, so the same word has the same id; an empty text is one BOS id (1),
 * as the prompt count's minimum of one token stands for.
 */
export function tokenIds(text: string, vocabSize: number): number[] {
  const ids: number[] = [];
  forEachWord(text, (start, end) => {
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    ids.push((h >>> 0) % vocabSize);
  });
  return ids.length === 0 ? [1] : ids;
}
