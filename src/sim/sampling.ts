type Json = Record<string, unknown>;

/** vLLM's default `--max-logprobs`: the most logprobs a request may ask for per token. */
export const MAX_LOGPROBS = 20;
/** `max_tokens` of a completions request that does not send one (vLLM's CompletionRequest default). */
export const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;

/**
 * The fields of a completions or chat body that shape what the simulated server generates, read and
 * checked as vLLM's request models and `SamplingParams._verify_args` check them, with vLLM's wording
 * for the 400 (so a client that parses vLLM's errors reads the simulator's alike).
 */
export interface SamplingRequest {
  /** Choices per prompt. */
  readonly n: number;
  /** `max_completion_tokens`, else `max_tokens`; undefined: the rest of the context, as vLLM defaults it. */
  readonly maxTokens: number | undefined;
  /** No EOS, and no stop string, before this many tokens. */
  readonly minTokens: number;
  readonly ignoreEos: boolean;
  /** Stop strings, in the order given. */
  readonly stop: readonly string[];
  /** Keep the stop string in the text (vLLM's `include_stop_str_in_output`). */
  readonly includeStop: boolean;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** Alternatives per token to return with each token's logprob, or null when logprobs were not asked for. */
  readonly logprobs: number | null;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const present = (v: unknown): boolean => v !== undefined && v !== null;

/** An optional integer field: its value, undefined when absent or null, or the 400 message. */
function optInt(body: Json, key: string): number | undefined | string {
  const v = body[key];
  if (!present(v)) return undefined;
  return isInt(v) ? v : `${key} must be an integer, got ${JSON.stringify(v)}.`;
}

function readLogprobs(body: Json, chat: boolean): number | null | string {
  if (chat) {
    const top = optInt(body, 'top_logprobs');
    if (typeof top === 'string') return top;
    const on = body['logprobs'] === true;
    if (top !== undefined && !on) return 'when using `top_logprobs`, `logprobs` must be set to true.';
    if (top !== undefined && top < 0) return '`top_logprobs` must be a positive value.';
    if (!on) return null;
    const k = top ?? 0;
    return k > MAX_LOGPROBS ? `Requested sample logprobs of ${k}, which is greater than max allowed: ${MAX_LOGPROBS}` : k;
  }
  const k = optInt(body, 'logprobs');
  if (typeof k === 'string' || k === undefined) return k ?? null;
  if (k < 0) return `logprobs must be non-negative, got ${k}.`;
  return k > MAX_LOGPROBS ? `Requested sample logprobs of ${k}, which is greater than max allowed: ${MAX_LOGPROBS}` : k;
}

/** The sampling fields of a body, or vLLM's 400 message for the first one it would refuse. */
export function readSampling(body: Json, chat: boolean): SamplingRequest | string {
  const n = optInt(body, 'n');
  if (typeof n === 'string') return n;
  if (n !== undefined && n < 1) return `n must be at least 1, got ${n}.`;
  // Chat takes max_completion_tokens over the deprecated max_tokens, both unset by default (the rest of
  // the context). Completions has only max_tokens, 16 when absent (OpenAI's default, vLLM's
  // CompletionRequest) and the rest of the context only when sent as null.
  const maxKey = chat && present(body['max_completion_tokens']) ? 'max_completion_tokens' : 'max_tokens';
  const maxTokens = !chat && !(maxKey in body) ? COMPLETIONS_DEFAULT_MAX_TOKENS : optInt(body, maxKey);
  if (typeof maxTokens === 'string') return maxTokens;
  if (maxTokens !== undefined && maxTokens < 1) return `max_tokens must be at least 1, got ${maxTokens}.`;
  const minTokens = optInt(body, 'min_tokens') ?? 0;
  if (typeof minTokens === 'string') return minTokens;
  if (minTokens < 0) return `min_tokens must be greater than or equal to 0, got ${minTokens}.`;
  if (maxTokens !== undefined && minTokens > maxTokens) return `min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${minTokens}.`;
  const temperature = body['temperature'];
  if (present(temperature) && typeof temperature !== 'number') return `temperature must be a number, got ${JSON.stringify(temperature)}.`;
  if (typeof temperature === 'number' && temperature < 0) return `temperature must be non-negative, got ${temperature}.`;
  const rawStop = body['stop'];
  let stop: string[] = [];
  if (typeof rawStop === 'string') stop = [rawStop];
  else if (Array.isArray(rawStop) && rawStop.every((s) => typeof s === 'string')) stop = rawStop;
  else if (present(rawStop)) return '`stop` must be a string or a list of strings';
  const stream = body['stream'] === true;
  if (present(body['stream_options']) && !stream) return 'Stream options can only be defined when `stream=True`.';
  const logprobs = readLogprobs(body, chat);
  if (typeof logprobs === 'string') return logprobs;
  const so = body['stream_options'] as Json | null | undefined;
  return {
    n: n ?? 1,
    maxTokens,
    minTokens,
    ignoreEos: body['ignore_eos'] === true,
    stop: stop.filter((s) => s.length > 0),
    includeStop: body['include_stop_str_in_output'] === true,
    stream,
    includeUsage: stream && so?.['include_usage'] === true,
    logprobs,
  };
}

/** A 400 vLLM answers with the parameter it names (`VLLMValidationError`: `param` in the body, and in the message). */
export interface ParamError {
  readonly message: string;
  readonly param: string;
}

/**
 * One prompt's output budget: `max_tokens` when prompt + max_tokens fits `max_model_len`, the rest of the
 * context when the request left it unset, or vLLM's refusal in its OpenAI server's wording
 * (`serving_engine.py` `_validate_input` of the 0.10–0.15 releases the simulator is fitted on, with
 * `(parameter=…, value=…)` as 0.15 appends it to a `VLLMValidationError`; a client that parses "maximum
 * context length is L tokens and your request has P input tokens" reads it as it reads vLLM's).
 */
export function outputBudget(promptTokens: number, maxTokens: number | undefined, maxModelLen: number): number | ParamError {
  if (maxTokens === undefined) {
    // Unset: what the context leaves (vLLM's get_max_tokens); a prompt that fills it leaves nothing.
    if (promptTokens < maxModelLen) return maxModelLen - promptTokens;
    return {
      message: `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input messages. (parameter=input_tokens, value=${promptTokens})`,
      param: 'input_tokens',
    };
  }
  if (promptTokens + maxTokens <= maxModelLen) return maxTokens;
  return {
    message:
      `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${maxModelLen} tokens and your request has ` +
      `${promptTokens} input tokens (${maxTokens} > ${maxModelLen} - ${promptTokens}). (parameter=max_tokens, value=${maxTokens})`,
    param: 'max_tokens',
  };
}
