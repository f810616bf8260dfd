import type { ErrorKindName, RequestRecord } from '../domain/index.js';
import type { H1Call, H1Handler, H1Head, H1Pool } from './http1.js';
import { createSseParser } from './sse.js';
import type { PreparedRequest } from './prompts.js';

/**
 * One streaming request to an OpenAI-compatible server, timed at the I/O layer: `send_time_s` just
 * before the request is handed to the socket pool, each chunk's time when its bytes arrive (before any
 * JSON parsing of later events). Token counts come from the final `usage` chunk (requested with
 * `stream_options.include_usage`); without one they are estimated (`fallbackOutputTokens`), marked
 * `token_source: 'max_tokens'` or `'fallback'` by how (`estimatedTokenSource`). Every failure becomes
 * an `error_kind` on the record, never a throw.
 *
 * A chunk counts as a token chunk when it has choices with non-empty text, content, reasoning or
 * tool calls (docs/references/load-runners.md#token-chunks: a chat role-only first chunk, or an empty finish chunk, is not a token).
 */
/** What every request of a run shares: the route, API, model name, sampling and headers (one per run, built by connect.ts). */
export interface RequestTemplate {
  readonly path: string;
  readonly api: 'completions' | 'chat';
  readonly model: string;
  readonly ignoreEos: boolean;
  readonly temperature?: number | undefined;
  readonly timeoutMs: number;
  /** Extra request headers (the Authorization of an API key). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Put before each record's id in the `x-request-id` header, unique to the run (connect.ts): vLLM takes
   * that header as the engine's request id, and two clients in flight with the same ids (two runs of
   * r0, r1, …, from two machines or two terminals) collide in its engine (vLLM issue 27711). The
   * header still ends with the record's id, so server logs and records line up.
   */
  readonly requestIdPrefix?: string | undefined;
}

export interface RequestMeta {
  readonly requestId: string;
  readonly schedS: number;
  readonly enqueueS: number;
  readonly phase: RequestRecord['phase'];
  readonly workerId: number;
  readonly loopLagMs: number | null;
  /** Told when the first token chunk arrives (the slo-hold controller sees TTFT before the request ends). */
  readonly onFirstToken?: ((timeS: number) => void) | undefined;
}

export function requestBody(t: RequestTemplate, r: PreparedRequest): string {
  const common: Record<string, unknown> = {
    model: t.model,
    stream: true,
    stream_options: { include_usage: true },
    ignore_eos: t.ignoreEos,
  };
  if (t.temperature !== undefined) common['temperature'] = t.temperature;
  if (t.api === 'chat') {
    return JSON.stringify({
      ...common,
      messages: [{ role: 'user', content: r.prompt }],
      max_completion_tokens: r.maxTokens,
      max_tokens: r.maxTokens,
    });
  }
  return JSON.stringify({ ...common, prompt: r.prompt, max_tokens: r.maxTokens });
}

interface ChunkChoice {
  text?: unknown;
  delta?: { content?: unknown; reasoning?: unknown; reasoning_content?: unknown; tool_calls?: unknown };
  finish_reason?: unknown;
}

function hasToken(c: ChunkChoice): boolean {
  if (typeof c.text === 'string' && c.text.length > 0) return true;
  const d = c.delta;
  if (d === undefined || d === null) return false;
  return (
    (typeof d.content === 'string' && d.content.length > 0) ||
    (typeof d.reasoning === 'string' && d.reasoning.length > 0) ||
    (typeof d.reasoning_content === 'string' && d.reasoning_content.length > 0) ||
    (Array.isArray(d.tool_calls) && d.tool_calls.length > 0)
  );
}

/**
 * Output tokens of an answer whose stream carried no usage. Each token chunk holds at least one token,
 * so the chunks are a floor, and the count when a server sends one token a chunk; but llama.cpp, TGI
 * and servers that batch their stream (or decode speculatively) send several, and counting chunks then
 * undercounts the output and inflates TPOT by the same factor. An answer that finished for `length`
 * says it stopped at its length limit, and the only limit the request set is its max_tokens: vLLM, TGI
 * and SGLang refuse a prompt plus max_tokens past the context (HTTP 400/422) rather than stop short, and
 * output-lengths.ts already counts such an answer as having its length. So a `length` answer is its
 * max_tokens (or its chunks, when a server that ignores max_tokens sent more); any other answer, its
 * chunks. No tokenizer of the served model is at hand to count the text as `vllm bench serve` does
 * (prompts.ts's words are one token each only for our own prompts), and a characters-per-token guess
 * would overcount a server of one token a chunk, whose chunk count is exact. Still an estimate (a
 * server that stops at its context with `length` is overcounted): the record says which
 * (`estimatedTokenSource`).
 */
export function fallbackOutputTokens(chunks: number, finishReason: string | null, maxTokens: number): number {
  return finishReason === 'length' ? Math.max(chunks, maxTokens) : chunks;
}

/**
 * Which estimate `fallbackOutputTokens` gave: `max_tokens` when the count is the request's max_tokens
 * (a `length` answer that sent no more chunks than that), else `fallback`, the chunk count (a floor).
 * Kept apart so the records and the result's token_source_counts say how many counts are each.
 */
export function estimatedTokenSource(chunks: number, finishReason: string | null, maxTokens: number): 'max_tokens' | 'fallback' {
  return finishReason === 'length' && maxTokens >= chunks ? 'max_tokens' : 'fallback';
}

/**
 * The message of an answer other than 200: its body alone (the record's http_status carries the code,
 * and every reader of the message, the diagnosis and a trial's lost-requests reason, puts "HTTP 503"
 * before it, as for the simulator's), with what its headers say that the body does not: where a
 * redirect points (the load follows none, and its body is usually empty), and when a server shedding
 * load asks to be tried again (nothing is retried: the request is counted failed, and Retry-After
 * says how long the server expected to stay busy).
 */
export function statusMessage(status: number, body: string, head: H1Head | null): string {
  const said = body === '' ? null : body.slice(0, 300);
  const quote = (v: string): string => JSON.stringify(v.slice(0, 200));
  if (status >= 300 && status < 400) {
    const where = head?.location == null ? 'a redirect without a Location' : `a redirect to ${quote(head.location)}`;
    return `${where}, not followed (the load follows no redirect: name the URL it points to with --endpoint)${said === null ? '' : `: ${said}`}`;
  }
  const wait = (status === 429 || status === 503) && head?.retryAfter != null ? ` (Retry-After: ${quote(head.retryAfter)})` : '';
  return `${said ?? 'an empty body'}${wait}`;
}

/** Socket, HTTP-framing (http1.ts) and undici errors → the record's error kinds. */
export function classifyError(err: unknown): ErrorKindName {
  const e = err as { code?: unknown; name?: unknown; cause?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'LMB_HTTP_CLOSED':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return 'connection_reset';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return 'timeout';
    case 'UND_ERR_ABORTED':
      return 'aborted';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return 'dns';
    case 'LMB_HTTP_PARSE':
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'UND_ERR_INFO':
      return 'bad_response';
    default:
      if (e.name === 'AbortError') return 'aborted';
      if (/CERT|SELF_SIGNED|TLS|SSL|UNABLE_TO_VERIFY|ALTNAME/.test(code)) return 'tls';
      if (typeof code === 'string' && code.startsWith('HPE_')) return 'bad_response';
      if (e.cause !== undefined && e.cause !== err) return classifyError(e.cause);
      return 'connection_reset';
  }
}

/** Event parsers with data waiting, run together after this turn's reads (check phase). */
const waiting = new Set<() => void>();
let drainScheduled = false;

function drainWaiting(): void {
  drainScheduled = false;
  for (const drain of waiting) drain();
  waiting.clear();
}

function parseLater(drain: () => void): void {
  waiting.add(drain);
  if (!drainScheduled) {
    drainScheduled = true;
    setImmediate(drainWaiting);
  }
}

function parseNow(drain: () => void): void {
  waiting.delete(drain);
  drain();
}

/** Requests in flight, watched by one timer for their deadlines instead of a timer each. */
export interface InFlight {
  readonly deadlineS: number;
  abort(reason: Error): void;
}

export interface Connection {
  readonly pool: H1Pool;
  readonly target: RequestTemplate;
  /** The run's clock (seconds from its origin). */
  readonly nowS: () => number;
  readonly inFlight: Set<InFlight>;
}

export class TimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

export class CallerAbort extends Error {}

/**
 * One timer for every request in flight on this thread: times out the ones past their deadline and
 * aborts them all when `stopped()` says so. Per-request timers and abort listeners cost more than the
 * request itself at a thousand streams.
 */
export function watchInFlight(set: Set<InFlight>, nowS: () => number, stopped: () => boolean, everyMs = 50): () => void {
  const timer = setInterval(() => {
    const stop = stopped();
    const now = nowS();
    for (const f of set) {
      if (stop) f.abort(new CallerAbort('aborted by the caller'));
      else if (now > f.deadlineS) f.abort(new TimeoutError('no complete response within the request timeout'));
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The request's headers as sent (the API key's Authorization among them); no value may break a line. */
function headerLines(t: RequestTemplate, requestId: string): string {
  let out = 'content-type: application/json\r\naccept: text/event-stream\r\n';
  for (const [name, value] of Object.entries({ ...t.headers, 'x-request-id': `${t.requestIdPrefix ?? ''}${requestId}` })) {
    if (/[\r\n\0]/.test(name) || /[\r\n\0]/.test(value)) throw new TypeError(`the ${name} header holds a line break`);
    out += `${name}: ${value}\r\n`;
  }
  return out;
}

/**
 * Sends one request; resolves with its record whatever happens (errors are data). `body` may be
 * built ahead (off the clock); by default it is built here.
 */
export function sendRequest(conn: Connection, req: PreparedRequest, meta: RequestMeta, body?: string): Promise<RequestRecord> {
  const { pool, target, nowS, inFlight } = conn;
  const payload = body ?? requestBody(target, req);
  return new Promise((resolve) => {
    const chunkTimes: number[] = [];
    let firstByte: number | null = null;
    let status: number | null = null;
    let head: H1Head | null = null;
    let usageOut: number | null = null;
    let usageIn: number | null = null;
    let cached: number | null = null;
    let finish: string | null = null;
    let sawDone = false;
    let kind: ErrorKindName | null = null;
    let message: string | null = null;
    let errorText = '';
    let call: H1Call | null = null;
    let abortReason: Error | null = null;
    let settled = false;

    const fail = (k: ErrorKindName, msg: string): void => {
      if (kind === null) {
        kind = k;
        message = msg.slice(0, 500);
      }
    };

    /** One SSE event's data, parsed: a token, the finish reason, usage, or an error. */
    const onEvent = (t: number, data: string): void => {
      if (kind !== null) return;
      if (data === '[DONE]') {
        sawDone = true;
        return;
      }
      let obj: { choices?: unknown; usage?: unknown; error?: unknown; object?: unknown };
      try {
        obj = JSON.parse(data) as typeof obj;
      } catch {
        fail('bad_response', `invalid JSON in the stream: ${data.slice(0, 120)}`);
        return;
      }
      if (typeof obj !== 'object' || obj === null) {
        fail('bad_response', `stream message is not an object: ${data.slice(0, 120)}`);
        return;
      }
      // `"error": null` beside the choices is a chunk without an error (gateways that write every field).
      if ((obj.error !== undefined && obj.error !== null) || obj.object === 'error') {
        const err = obj.error as { message?: unknown } | undefined;
        fail('stream_error', typeof err?.message === 'string' ? err.message : JSON.stringify(obj.error ?? obj).slice(0, 300));
        return;
      }
      const choices = obj.choices;
      if (Array.isArray(choices) && choices.length > 0) {
        const c = choices[0] as ChunkChoice;
        if (hasToken(c)) {
          chunkTimes.push(t);
          if (chunkTimes.length === 1) meta.onFirstToken?.(t);
        }
        if (typeof c.finish_reason === 'string') finish = c.finish_reason;
      }
      const u = obj.usage as { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } | null } | null | undefined;
      if (u !== null && u !== undefined && typeof u === 'object') {
        if (typeof u.completion_tokens === 'number') usageOut = u.completion_tokens;
        if (typeof u.prompt_tokens === 'number') usageIn = u.prompt_tokens;
        const ct = u.prompt_tokens_details?.cached_tokens;
        if (typeof ct === 'number') cached = ct;
      }
    };
    // Events are parsed after the reads of this turn of the event loop (or when the response ends), so a
    // wave of chunks arriving together is timed read by read without waiting behind JSON parsing.
    const events: (number | string)[] = [];
    const drain = (): void => {
      for (let i = 0; i < events.length; i += 2) onEvent(events[i] as number, events[i + 1] as string);
      events.length = 0;
    };
    let sawEvent = false;
    const parser = createSseParser((data) => {
      sawEvent = true;
      events.push(chunkArrival, data);
      if (events.length === 2) parseLater(drain);
    });
    let chunkArrival = 0;

    const finishRecord = (errEnd: unknown): void => {
      if (settled) return;
      settled = true;
      inFlight.delete(watch);
      const done = nowS();
      parseNow(drain);
      if (errEnd !== null) {
        const k = abortReason !== null ? (abortReason instanceof TimeoutError ? 'timeout' : 'aborted') : classifyError(errEnd);
        fail(k, abortReason?.message ?? (errEnd instanceof Error ? errEnd.message : 'the request failed'));
      } else if (status !== null && status !== 200) {
        fail('http_status', statusMessage(status, errorText.trim(), head));
      } else if (kind === null) {
        parser.end();
        drain();
        // No event at all is an answer that was never a stream (one JSON body), not a stream cut short.
        if (kind === null && !sawEvent) {
          const said = errorText.trim();
          fail('bad_response', `the answer held no server-sent event ("data:" line): ${said === '' ? 'an empty body' : `not streamed: ${said.slice(0, 300)}`}`);
        }
        else if (kind === null && !sawDone && finish === null) fail('truncated_stream', 'the stream ended before [DONE] or a finish_reason');
        else if (kind === null && chunkTimes.length === 0) fail('bad_response', 'never received a token chunk');
      }
      const fromUsage = usageOut !== null && usageOut > 0;
      resolve({
        request_id: meta.requestId,
        sched_time_s: meta.schedS,
        enqueue_time_s: meta.enqueueS,
        send_time_s: sendS,
        first_byte_time_s: firstByte,
        chunk_times_s: chunkTimes,
        done_time_s: done,
        prompt_tokens: usageIn ?? req.clientTokens,
        prompt_tokens_client: req.clientTokens,
        // A failed answer's are the chunks it got: its finish reason did not end a whole answer.
        output_tokens: fromUsage ? (usageOut as number) : kind === null ? fallbackOutputTokens(chunkTimes.length, finish, req.maxTokens) : chunkTimes.length,
        // A failed answer's count is its chunks (above), whatever its finish reason said.
        token_source: fromUsage ? 'usage' : kind === null ? estimatedTokenSource(chunkTimes.length, finish, req.maxTokens) : 'fallback',
        cached_tokens: cached,
        finish_reason: finish,
        http_status: status,
        error_kind: kind,
        error: message,
        phase: meta.phase,
        worker_id: meta.workerId,
        loop_lag_ms: meta.loopLagMs,
      });
    };

    const abortWith = (reason: Error): void => {
      if (settled || abortReason !== null) return;
      abortReason = reason;
      call?.abort(reason);
    };

    const handler: H1Handler = {
      onStart(statusCode, atS, h) {
        // The read's time, as the chunks' are: timed after parsing, the first byte came after the first token.
        firstByte = atS;
        status = statusCode;
        if (statusCode !== 200) head = h;
      },
      onBody(chunk, atS) {
        if (status !== 200) {
          if (errorText.length < 2000) errorText += chunk.toString('utf8');
          return;
        }
        chunkArrival = atS;
        // The start of an answer that is no stream, to say what it was: kept only until an event arrives.
        if (!sawEvent && errorText.length < 300) errorText += chunk.toString('utf8', 0, Math.min(chunk.length, 300));
        parser.push(chunk);
      },
      onEnd() {
        finishRecord(null);
      },
      onError(err) {
        finishRecord(err);
      },
    };
    const sendS = nowS();
    const watch: InFlight = { deadlineS: sendS + target.timeoutMs / 1000, abort: abortWith };
    inFlight.add(watch);
    try {
      call = pool.request('POST', target.path, headerLines(target, meta.requestId), payload, handler);
    } catch (err) {
      finishRecord(err);
    }
  });
}
