import type { Workload } from '../domain/index.js';
import type { Rng } from '../util/rng.js';
import { createRng } from '../util/rng.js';
import { sampleRequests, trafficStreams, type PromptBlocks, type RequestSpec } from '../workload/sample.js';

/**
 * Prompts as the load runner sends them. Synthetic prompts are built deterministically from the seed:
 * the same seed gives the same lengths (drawn through `sampleRequests`, as the simulator draws them)
 * and the same text. Without a tokenizer the text is made of common English words that are one token
 * each in Llama/GPT tokenizers, so a prompt of N words is about N tokens; the server's `usage` gives
 * the exact count, and `clientTokens` keeps our estimate beside it.
 */
export interface PreparedRequest {
  readonly index: number;
  /** A completions prompt, or the user message of a chat request. */
  readonly prompt: string;
  readonly clientTokens: number;
  readonly maxTokens: number;
}

const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an ' +
  'they you were her she there one all we their been has more if will would so what up out when who about ' +
  'into time them can only other new some could these two may then do first any like now my such over our ' +
  'even most made after also did many before must through back years where much your way well down should ' +
  'because each just those people how too little state good very make world still own see men work long get ' +
  'here between both life being under never day same another know while last might us great old year off ' +
  'come since against go came right used take three'
).split(' ');

/** N words drawn from `rng`, each with a leading space (one token apiece in BPE vocabularies). */
export function syntheticText(tokens: number, rng: Rng): string {
  const parts = new Array<string>(tokens);
  for (let i = 0; i < tokens; i++) parts[i] = WORDS[rng.int(WORDS.length)] as string;
  return parts.join(' ');
}

/**
 * A trace request's prompt: block by block, each block's words drawn from a stream of its own id, so
 * prompts whose block ids agree agree word for word (a prefix cache can serve them); the last block
 * is cut at the prompt's length, which keeps it a prefix of the whole block.
 */
function blockPrompt(blocks: PromptBlocks, tokens: number, wordsOf: (id: number) => string[]): string {
  const parts: string[] = [];
  let left = tokens;
  for (const id of blocks.ids) {
    if (left <= 0) break;
    const words = wordsOf(id);
    parts.push(left >= words.length ? words.join(' ') : words.slice(0, left).join(' '));
    left -= words.length;
  }
  return parts.join(' ');
}

/**
 * Writes requests' text for one seed and salt. Its caches (shared prefixes, trace blocks) fill as
 * requests are written, so a long run can write each prompt when it sends it. A salt changes the
 * words and nothing else: the same lengths, arrivals and sharing (equal prefixes, a pool's repeats, a
 * conversation's history) in words no other salt draws. A server's prefix cache outlives a run, so a
 * second run of the same seed against the same server would otherwise find its prompts cached and
 * measure prefills it never did.
 */
export function promptWriter(seed: number, salt?: string): (s: RequestSpec) => PreparedRequest {
  const root = createRng(seed);
  const textRoot = salt === undefined ? root : root.fork(`salt:${salt}`);
  const prefixes = new Map<number, string>();
  const textRng = textRoot.fork('text');
  const blockWords = new Map<number, string[]>();
  const wordsOf = (tokens: number) => (id: number): string[] => {
    let words = blockWords.get(id);
    if (words === undefined) {
      words = syntheticText(tokens, textRoot.fork(`block-${id}`)).split(' ');
      blockWords.set(id, words);
    }
    return words;
  };
  return (s) => {
    const blocks = s.blocks;
    if (blocks !== undefined) {
      // The ids cover the whole prompt (trace readers check it); a shorter list leaves a unique tail.
      const covered = Math.min(s.inputTokens, blocks.ids.length * blocks.tokens);
      const head = blockPrompt(blocks, covered, wordsOf(blocks.tokens));
      const tail = covered < s.inputTokens ? syntheticText(s.inputTokens - covered, textRng.fork(s.index)) : '';
      return { index: s.index, prompt: tail === '' ? head : `${head} ${tail}`, clientTokens: s.inputTokens, maxTokens: s.outputTokens };
    }
    let prefix = '';
    if (s.prefixGroup !== null) {
      let p = prefixes.get(s.prefixGroup);
      if (p === undefined) {
        p = syntheticText(s.prefixTokens, textRoot.fork(`prefix-${s.prefixGroup}`));
        prefixes.set(s.prefixGroup, p);
      }
      prefix = `${p} `;
    }
    // Request i's text comes from its own stream so it does not depend on earlier lengths; a pool's
    // re-sent prompt from its entry's (the entry's first request), so it is the same text again, and a
    // conversation's turn from the conversation's, read further each turn (the words are drawn in
    // order, so turn k's text begins with turn k − 1's whole prompt and answer).
    const own = syntheticText(s.inputTokens, textRng.fork(s.promptId ?? s.index));
    return { index: s.index, prompt: prefix + own, clientTokens: s.prefixTokens + s.inputTokens, maxTokens: s.outputTokens };
  };
}

/**
 * The request list of a workload: lengths from the shared sampler on the simulator's request stream
 * (`trafficStreams`), or its trace's; text from the seed and salt (`promptWriter`).
 */
export function syntheticRequests(w: Workload, seed: number, salt?: string): PreparedRequest[] {
  return sampleRequests(w, trafficStreams(seed).requests).map(promptWriter(seed, salt));
}

/**
 * Request k of an endless run that cycles through `specs` (slo-hold's ring): lengths and sharing
 * repeat each pass, words do not (a salt per pass), so a server's prefix cache cannot serve a pass
 * from the one before. Each prompt is written when asked for: writing a pass of 4,096 1,000-token
 * prompts at once takes ~0.3 s, which would stall the sender at every turn of the ring.
 */
export function promptRing(specs: readonly RequestSpec[], seed: number, salt?: string): (k: number) => PreparedRequest {
  let writer = { pass: 0, write: promptWriter(seed, salt) };
  return (k) => {
    const pass = Math.floor(k / specs.length);
    if (pass !== writer.pass) writer = { pass, write: promptWriter(seed, `${salt ?? ''}#pass-${pass}`) };
    return { ...writer.write(specs[k % specs.length] as RequestSpec), index: k };
  };
}

/**
 * Warm-up requests: the first requests' lengths (cycled), in words of a stream no measured request
 * draws from. A warm-up that re-sent the measured prompts would leave them in the server's prefix
 * cache, and the first measured requests would come back with a fraction of their prefill.
 */
export function warmupRequests(requests: readonly PreparedRequest[], count: number, seed: number, salt?: string): PreparedRequest[] {
  const rng = createRng(seed).fork(salt === undefined ? 'warmup' : `warmup:${salt}`);
  return Array.from({ length: count }, (_, i) => {
    const r = requests[i % requests.length] as PreparedRequest;
    return { index: i, prompt: syntheticText(r.clientTokens, rng.fork(i)), clientTokens: r.clientTokens, maxTokens: r.maxTokens };
  });
}

/** Rough token estimate for text from files (no tokenizer): ~4 characters a token, as OpenAI suggests. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.round(text.length / 4));
}
