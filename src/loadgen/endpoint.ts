import { LmBenchError } from '../errors.js';
import { classifyError } from './client.js';
import { authHeaders, openPool, redactKey, type Transport } from './transport.js';
import { isLoopbackHost } from '../util/loopback.js';
import { probeProblem } from './probe-answer.js';
import { apiOfPath, modelsPathOf, type Endpoint } from './routes.js';

export { isLoopbackHost, apiOfPath, modelsPathOf, type Endpoint };

/**
 * Where the load goes, checked before any load is sent: any http(s) server the user names (usually
 * another machine), which must answer and look like an OpenAI-compatible completions or chat endpoint.
 * Wrong endpoints fail fast, within the connect or probe time-out, with LMB_ERR_ENDPOINT_UNREACHABLE
 * (naming the host and the cause: refused, DNS, TLS, time-out) or LMB_ERR_ENDPOINT_BAD_RESPONSE; a
 * server that answers but misbehaves under load is measured, with its errors counted.
 */
export function parseEndpoint(raw: string): Endpoint {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--endpoint "${raw}" is not a URL`, { details: { field: 'endpoint', value: raw } });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--endpoint must be http(s), got ${u.protocol}`, { details: { field: 'endpoint', value: raw } });
  }
  if (u.username !== '' || u.password !== '') {
    // Credentials in a URL end up in logs and results; the API key has its own flag.
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--endpoint must not carry credentials; pass the key with --api-key or OPENAI_API_KEY', { details: { field: 'endpoint' } });
  }
  const path = u.pathname === '/' ? '/v1/completions' : `${u.pathname}${u.search}`;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return { url: `${u.origin}${path}`, origin: u.origin, host, path, loopback: isLoopbackHost(host), tls: u.protocol === 'https:' };
}

/**
 * Refuses a non-loopback endpoint when LMB_LOOPBACK_ONLY=1. The test runner and the benchmarks set
 * it, so no test can ever send traffic off this machine; users never see it.
 */
export function assertAllowedTarget(ep: Endpoint, env: Readonly<Record<string, string | undefined>>): void {
  if (env['LMB_LOOPBACK_ONLY'] === '1' && !ep.loopback) {
    throw new LmBenchError('LMB_ERR_ENDPOINT_NOT_LOOPBACK', `${ep.host} is not a loopback address and LMB_LOOPBACK_ONLY=1 is set (tests and benchmarks only load this machine)`, {
      details: { field: 'endpoint', host: ep.host },
    });
  }
}

const CAUSES: Readonly<Record<string, string>> = {
  connection_refused: 'connection refused',
  dns: 'the host name does not resolve',
  tls: 'TLS handshake failed',
  timeout: 'no answer within the time-out',
  connection_reset: 'connection reset',
};

function unreachable(ep: Endpoint, err: unknown, t: Transport): LmBenchError {
  const kind = classifyError(err);
  const inner = (err as { cause?: unknown }).cause;
  const why = redactKey([err, inner].filter((e): e is Error => e instanceof Error).map((e) => e.message).join(': ') || String(err), t);
  const hint = kind === 'tls' ? '; for a self-signed certificate pass --ca-cert FILE (or --insecure)' : kind === 'connection_refused' || kind === 'timeout' ? '; is the server running and reachable from here?' : '';
  return new LmBenchError('LMB_ERR_ENDPOINT_UNREACHABLE', `${ep.host} (${ep.origin}) does not answer: ${CAUSES[kind] ?? kind} (${why})${hint}`, {
    cause: err,
    details: { endpoint: ep.url, host: ep.host, cause: kind },
  });
}

/** A one-connection pool for the probes, closed afterwards. */
async function withProbe<T>(ep: Endpoint, t: Transport, fn: (pool: ReturnType<typeof openPool>) => Promise<T>): Promise<T> {
  const pool = openPool(ep.origin, t, 1);
  try {
    return await fn(pool);
  } finally {
    await pool.close().catch(() => pool.destroy());
  }
}

/** The first model the server lists beside the endpoint (`modelsPathOf`; vLLM's bench does the same). */
export async function discoverModel(ep: Endpoint, t: Transport, timeoutMs: number): Promise<string> {
  const path = modelsPathOf(ep.path);
  return withProbe(ep, t, async (pool) => {
    let res;
    try {
      res = await pool.request({ method: 'GET', path, headers: authHeaders(t), headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    } catch (err) {
      throw unreachable(ep, err, t);
    }
    const text = await res.body.text();
    let id: unknown;
    try {
      id = (JSON.parse(text) as { data?: { id?: unknown }[] }).data?.[0]?.id;
    } catch {
      id = undefined;
    }
    if (res.statusCode === 401 || res.statusCode === 403) throw unauthorized(ep, res.statusCode, t);
    if (res.statusCode !== 200 || typeof id !== 'string') {
      throw new LmBenchError('LMB_ERR_ENDPOINT_BAD_RESPONSE', `${ep.origin}${path} answered HTTP ${res.statusCode} without a model list; pass --model`, {
        details: { endpoint: ep.url, status: res.statusCode, body: redactKey(text.slice(0, 200), t) },
      });
    }
    return id;
  });
}

function unauthorized(ep: Endpoint, status: number, t: Transport): LmBenchError {
  const how = t.apiKey === null ? 'no API key was sent; pass --api-key or set OPENAI_API_KEY' : 'the API key was refused';
  return new LmBenchError('LMB_ERR_ENDPOINT_BAD_RESPONSE', `${ep.host} answered HTTP ${status}: ${how}`, { details: { endpoint: ep.url, status } });
}

/**
 * One tiny streamed request (max_tokens 1) before the run: a refused connection is UNREACHABLE; a 401
 * or 403 is BAD_RESPONSE saying what of the key, and any other answer no run could measure is
 * BAD_RESPONSE saying why (probe-answer.ts). Anything else (5xx, odd chunks) is left for the run to
 * measure and count.
 */
export async function probeEndpoint(ep: Endpoint, body: string, t: Transport, timeoutMs: number): Promise<void> {
  await withProbe(ep, t, async (pool) => {
    let res;
    try {
      res = await pool.request({
        method: 'POST',
        path: ep.path,
        headers: { ...authHeaders(t), 'content-type': 'application/json', accept: 'text/event-stream' },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (err) {
      throw unreachable(ep, err, t);
    }
    let text = '';
    try {
      text = await res.body.text();
    } catch {
      return; // a broken body is a run-time error to count, not a wrong endpoint
    }
    if (res.statusCode === 401 || res.statusCode === 403) throw unauthorized(ep, res.statusCode, t);
    const problem = probeProblem(ep, { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), location: res.headers['location'], text }, body, t);
    if (problem !== null) throw problem;
  });
}

/** The line printed before any load is sent: where it goes, how much, and how it is bounded. */
export function describeTarget(ep: Endpoint, t: Transport, bounds: { readonly prompts: number; readonly durationS: number | undefined; readonly timeoutS: number }): string {
  const where = ep.loopback ? 'this machine (loopback)' : `remote host ${ep.host}`;
  const tls = ep.tls ? (t.insecure ? ', TLS without certificate verification' : t.caCertPem !== null ? ', TLS with the given CA' : ', TLS') : '';
  const key = t.apiKey === null ? '' : ', API key set';
  const limit = bounds.durationS === undefined ? '' : `, for at most ${bounds.durationS} s`;
  return `load target: ${ep.url} on ${where}${tls}${key}; at most ${bounds.prompts} requests${limit}, each cut off after ${bounds.timeoutS} s`;
}
