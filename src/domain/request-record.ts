import { z } from 'zod';

/**
 * One request as the load runner or the simulator saw it (docs/references/load-runners.md#per-request-record): enough to
 * recompute every metric of vLLM, GuideLLM or genai-perf later. Times are seconds on a monotonic
 * clock from the run's start (`BenchmarkResult.lmb.start_epoch_ms` maps them to wall time).
 */
export const ErrorKindName = z.enum([
  'http_status',
  'connection_reset',
  'connection_refused',
  /** The host name does not resolve. */
  'dns',
  /** The TLS handshake failed (untrusted or mismatched certificate, protocol error). */
  'tls',
  'timeout',
  'truncated_stream',
  'stream_error',
  'bad_response',
  'aborted',
]);
export type ErrorKindName = z.infer<typeof ErrorKindName>;

/**
 * Where a record's output_tokens come from: the server's `usage`; for an answer without one, its
 * max_tokens (it finished for `length`, so it stopped at that limit: `max_tokens`) or its token chunks
 * (a floor, exact for a server of one token a chunk: `fallback`); or the simulator (`sim`).
 */
export const TokenSource = z.enum(['usage', 'max_tokens', 'fallback', 'sim']);
export type TokenSource = z.infer<typeof TokenSource>;

export const RequestRecord = z.strictObject({
  request_id: z.string(),
  /** Intended send time from the arrival schedule (open loop), or the time the slot freed (closed loop). */
  sched_time_s: z.number(),
  /** When the request entered the client's queue (equal to sched_time_s unless generated late). */
  enqueue_time_s: z.number(),
  /** When the HTTP request was actually written. send − sched is the client queueing. */
  send_time_s: z.number(),
  first_byte_time_s: z.number().nullable(),
  /** Arrival times of SSE data messages with non-empty `choices` (vLLM's chunk semantics). */
  chunk_times_s: z.array(z.number()),
  /** Tokens carried by each chunk when known (the simulator knows; a client usually does not). */
  chunk_tokens: z.array(z.int().nonnegative()).optional(),
  done_time_s: z.number().nullable(),
  prompt_tokens: z.int().nonnegative(),
  prompt_tokens_client: z.int().nonnegative().nullable(),
  output_tokens: z.int().nonnegative(),
  token_source: TokenSource,
  cached_tokens: z.int().nonnegative().nullable(),
  finish_reason: z.string().nullable(),
  http_status: z.int().nullable(),
  error_kind: ErrorKindName.nullable(),
  error: z.string().nullable(),
  phase: z.enum(['warmup', 'measure', 'cooldown']),
  worker_id: z.int().nonnegative(),
  /** Event-loop lag observed when the request was sent, ms (client overload shows here). */
  loop_lag_ms: z.number().nonnegative().nullable(),
});
export type RequestRecord = z.infer<typeof RequestRecord>;

export function isSuccess(r: RequestRecord): boolean {
  return r.error_kind === null && r.chunk_times_s.length > 0;
}
