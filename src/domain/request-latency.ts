import { z } from 'zod';
import { isSuccess, TokenSource, type RequestRecord } from './request-record.js';

/**
 * One line of `--requests-out FILE.jsonl` (`run` and `sim run` alike): a request's arrival and the
 * latencies a client measured, in ms, so percentiles can be pooled across stages, runs or real and
 * simulated runs without recomputing them from token timestamps. Derived from a `RequestRecord`
 * (`--records` keeps those whole): TTFT and E2E are measured from the send, as vLLM's bench measures
 * them; ITLs are the gaps between streamed chunks (one token each in the simulator).
 */
export const RequestLatency = z.strictObject({
  request_id: z.string(),
  /** Intended arrival (the schedule's time, or when a closed loop's slot freed), s from the run's start. */
  arrival_s: z.number(),
  /** When it was sent (later than arrival_s when a concurrency cap held it), s from the run's start. */
  send_s: z.number(),
  /** Null for a failed request. */
  ttft_ms: z.number().nullable(),
  itl_ms: z.array(z.number()),
  e2e_ms: z.number().nullable(),
  input_tokens: z.int().nonnegative(),
  output_tokens: z.int().nonnegative(),
  /**
   * Where output_tokens came from: the server's usage, or an estimate where it sent none (RequestRecord's
   * token_source), so a file pooled from a server without usage says which counts are a lower bound.
   */
  token_source: TokenSource,
  /** Prompt tokens the prefix cache served, when known. */
  cached_tokens: z.int().nonnegative().nullable(),
  phase: z.enum(['warmup', 'measure', 'cooldown']),
  /** Why it failed (RequestRecord's error_kind), or null. */
  error: z.string().nullable(),
});
export type RequestLatency = z.infer<typeof RequestLatency>;

/** ms to µs precision: token gaps of a long run would otherwise fill the file with float noise. */
const ms = (s: number): number => Math.round(s * 1e6) / 1e3;

export function requestLatencyOf(r: RequestRecord): RequestLatency {
  const ok = isSuccess(r);
  const chunks = r.chunk_times_s;
  const itl: number[] = [];
  if (ok) for (let i = 1; i < chunks.length; i++) itl.push(ms((chunks[i] as number) - (chunks[i - 1] as number)));
  return {
    request_id: r.request_id,
    arrival_s: r.sched_time_s,
    send_s: r.send_time_s,
    ttft_ms: ok ? ms((chunks[0] as number) - r.send_time_s) : null,
    itl_ms: itl,
    e2e_ms: ok ? ms((chunks[chunks.length - 1] as number) - r.send_time_s) : null,
    input_tokens: r.prompt_tokens,
    output_tokens: r.output_tokens,
    token_source: r.token_source,
    cached_tokens: r.cached_tokens,
    phase: r.phase,
    error: ok ? null : (r.error_kind ?? 'no_output'),
  };
}

/** Records → the JSON Lines text of `--requests-out`. */
export function requestLatencyLines(records: readonly RequestRecord[]): string {
  let out = '';
  for (const r of records) out += `${JSON.stringify(requestLatencyOf(r))}\n`;
  return out;
}
