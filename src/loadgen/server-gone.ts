import type { RequestRecord } from '../domain/index.js';

/**
 * Tells when a server has gone away under a load that runs on its own clock (slo-hold sends until
 * `--duration-s`, minutes by default): every request finds no server, so the rest of the run would only
 * add failures to the records. "No server" is a connection refused (nothing listens on the port any
 * more), or one reset before any byte of an answer came back; any request that got an answer, even an
 * error status, shows something is there and starts the count again. A count, not a time span: a server
 * that restarts takes far longer than the few ms a refusal takes, at any rate the load is sent.
 */
export const GONE_AFTER_REFUSALS = 20;

export interface ServerGone {
  /** Requests in a row that found no server. */
  readonly requests: number;
  /** The first of them: when it was sent, seconds from the run's origin. */
  readonly sinceS: number;
  /** The last one's error (e.g. "connect ECONNREFUSED 127.0.0.1:8000"). */
  readonly error: string;
}

function foundNoServer(r: RequestRecord): boolean {
  switch (r.error_kind) {
    case 'connection_refused':
      return true;
    case 'connection_reset':
      return r.first_byte_time_s === null;
    // A DNS or TLS failure fails the probe before any load; a time-out may be a busy server, an abort the caller's.
    case 'dns':
    case 'tls':
    case 'timeout':
    case 'aborted':
    case 'http_status':
    case 'truncated_stream':
    case 'stream_error':
    case 'bad_response':
    case null:
      return false;
  }
}

/** Fed each record as it finishes; `gone()` is non-null once `limit` requests in a row found no server. */
export function watchServerGone(limit = GONE_AFTER_REFUSALS): { readonly see: (r: RequestRecord) => void; readonly gone: () => ServerGone | null } {
  let streak = 0;
  let sinceS = Number.POSITIVE_INFINITY;
  let error = '';
  return {
    see(r) {
      if (foundNoServer(r)) {
        streak++;
        sinceS = Math.min(sinceS, r.send_time_s);
        error = r.error ?? r.error_kind ?? '';
      } else if (r.first_byte_time_s !== null) {
        // Something answered (a token, or a status): the server is there.
        streak = 0;
        sinceS = Number.POSITIVE_INFINITY;
      }
    },
    gone: () => (streak >= limit ? { requests: streak, sinceS, error } : null),
  };
}
