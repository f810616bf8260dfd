import type { PromptBlocks } from '../workload/sample.js';
import type { KvRequest } from './kv-cache.js';

/** A request inside the simulated engine (virtual or real time). */
export interface SimRequest extends KvRequest {
  /** Prompt tokens, shared prefix included. */
  readonly promptTokens: number;
  /** Tokens to generate (ignore_eos: exactly max_tokens). */
  readonly maxTokens: number;
  numComputed: number;
  numOutput: number;
  /** Emission time of every output token, seconds (kept only when the replica records tokens). */
  readonly chunkTimes: number[];
  /** Emission times of the first and the latest output token, seconds (NaN before the first). */
  firstTokenS: number;
  lastTokenS: number;
  /** Prefix-cache hit at the first admission, tokens. */
  cachedTokens: number;
  /** When it reached the engine's queue and when it was first scheduled (vLLM's queued → scheduled), seconds (NaN before). */
  arrivalS: number;
  scheduledS: number;
  admitted: boolean;
  finished: boolean;
}

// eslint-disable-next-line max-params -- the request's fields, in the order a spec lists them
export function newSimRequest(idx: number, promptTokens: number, maxTokens: number, prefixGroup: number | null, prefixTokens: number, blocks: PromptBlocks | null = null): SimRequest {
  return {
    idx,
    prefixGroup,
    prefixTokens,
    blocks,
    cachedKeys: [],
    privateBlocks: 0,
    hashedBlocks: 0,
    slidingBlocks: 0,
    promptTokens,
    maxTokens,
    numComputed: 0,
    numOutput: 0,
    chunkTimes: [],
    firstTokenS: Number.NaN,
    lastTokenS: Number.NaN,
    cachedTokens: 0,
    arrivalS: Number.NaN,
    scheduledS: Number.NaN,
    admitted: false,
    finished: false,
  };
}
