import { Pool } from 'undici';
import { LmBenchError } from '../errors.js';

/**
 * How the runner talks to a server, as plain data so it can cross into a worker thread: TLS trust
 * (an extra CA, or no verification at all when the user says so) and the API key vLLM's `--api-key`
 * asks for. The key travels only in the Authorization header; it is never part of a result, a record,
 * a log line or an error message (`redactKey` scrubs any text that might echo it).
 */
export interface Transport {
  /** Bearer token for `Authorization`, or null. */
  readonly apiKey: string | null;
  /** PEM of CA certificates to trust besides the system's (a self-signed server's own certificate). */
  readonly caCertPem: string | null;
  /** Skip certificate verification (`--insecure`). */
  readonly insecure: boolean;
  /** Limit on setting up the TCP (and TLS) connection. */
  readonly connectTimeoutMs: number;
}

export const DEFAULT_TRANSPORT: Transport = Object.freeze({ apiKey: null, caCertPem: null, insecure: false, connectTimeoutMs: 10_000 });

/** A connection pool to one origin; `connections` null = unbounded. */
export function openPool(origin: string, t: Transport, connections: number | null): Pool {
  return new Pool(origin, {
    connections,
    pipelining: 1,
    // Below vLLM's 5 s keep-alive so a pooled socket is never one the server just closed (`VLLM_HTTP_TIMEOUT_KEEP_ALIVE`, vllm/envs.py).
    keepAliveTimeout: 4000,
    keepAliveMaxTimeout: 4000,
    connect: {
      timeout: t.connectTimeoutMs,
      noDelay: true,
      ...(t.caCertPem === null ? {} : { ca: t.caCertPem }),
      ...(t.insecure ? { rejectUnauthorized: false } : {}),
    },
  });
}

/**
 * The API key of a run: `--api-key`, else the environment's OPENAI_API_KEY. An empty flag is a mistake
 * said as such; an empty variable (`export OPENAI_API_KEY=`, never meant as a key) is no key, never a
 * blank bearer token, in every mode of `run`.
 */
export function apiKeyFrom(flag: string | undefined, envValue: string | undefined): string | null {
  if (flag === '') throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--api-key is empty', { details: { field: 'api-key' } });
  return flag ?? (envValue === undefined || envValue === '' ? null : envValue);
}

export function authHeaders(t: Transport): Record<string, string> {
  return t.apiKey === null ? {} : { authorization: `Bearer ${t.apiKey}` };
}

/** Replaces every occurrence of the API key in a text (error bodies, messages) with `***`. */
export function redactKey(text: string, t: Pick<Transport, 'apiKey'>): string {
  return t.apiKey === null || t.apiKey === '' ? text : text.split(t.apiKey).join('***');
}
