import { isIP } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
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
 * `vllm bench serve`'s defaults for the parts of the target its flags leave out: `--host` (127.0.0.1,
 * IPv4 on purpose, as vLLM says), `--port` and `--endpoint` (a path there, appended to the server).
 */
export const VLLM_BENCH_TARGET = { host: '127.0.0.1', port: 8000, path: '/v1/completions' } as const;

/** How a command line names the server: lm-bench's `--endpoint URL`, or vllm bench serve's flags. */
export interface TargetFlags {
  /** A whole URL (lm-bench), or a path starting with `/` (vllm bench serve's `--endpoint`). */
  readonly endpoint?: string | undefined;
  readonly baseUrl?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
}

const invalid = (field: string, message: string, value?: string): LmBenchError =>
  new LmBenchError('LMB_ERR_INVALID_ARGUMENT', message, { details: { field, ...(value === undefined ? {} : { value }) } });

/** A scheme before `//`: the value is a whole URL, not vllm bench serve's path. */
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * The endpoint URL the flags name, as `vllm bench serve` builds it: `--base-url` + `--endpoint`, else
 * `http://--host:--port` + `--endpoint`, each part left out taking vLLM's default; undefined when no
 * flag names the server (a config file's `endpoint` may). Where vLLM quietly lets `--base-url` win
 * over `--host`/`--port`, or would glue a second URL onto the first, this refuses: the user meant one
 * of them and the load must not go to the other.
 */
export function endpointOfFlags(f: TargetFlags): string | undefined {
  const serverFlag = f.baseUrl !== undefined ? '--base-url' : f.host !== undefined ? '--host' : f.port !== undefined ? '--port' : undefined;
  if (f.baseUrl !== undefined && (f.host !== undefined || f.port !== undefined)) {
    throw invalid('base-url', `--base-url names the server; --${f.host !== undefined ? 'host' : 'port'} cannot go with it (give --base-url http://host:port, or --host and --port)`);
  }
  const ep = f.endpoint;
  if (ep !== undefined && HAS_SCHEME.test(ep)) {
    if (serverFlag !== undefined) throw invalid('endpoint', `--endpoint ${ep} is a whole URL and ${serverFlag} names the server too; give one (with ${serverFlag}, --endpoint is the path: --endpoint /v1/chat/completions)`, ep);
    return ep;
  }
  if (ep !== undefined && !ep.startsWith('/')) {
    throw invalid('endpoint', `--endpoint "${ep}" is neither a URL (http://gpu-box:8000/v1/completions) nor a path starting with / (vllm bench serve's --endpoint /v1/completions)`, ep);
  }
  const path = ep ?? VLLM_BENCH_TARGET.path;
  if (f.baseUrl !== undefined) {
    const base = baseUrlOf(f.baseUrl);
    // The OpenAI SDK's base_url ends in /v1; vLLM's --base-url is the server's root, the path brings /v1.
    if (/\/v1$/.test(base) && path.startsWith('/v1/')) {
      throw invalid('base-url', `--base-url ${f.baseUrl} ends in /v1 and the endpoint path ${path} starts with it, which makes …/v1/v1/…: give the server's root, --base-url ${base.slice(0, -3)} (as vllm bench serve)`, f.baseUrl);
    }
    return `${base}${path}`;
  }
  if (serverFlag === undefined && ep === undefined) return undefined;
  return `http://${hostPart(f.host ?? VLLM_BENCH_TARGET.host)}:${f.port ?? VLLM_BENCH_TARGET.port}${path}`;
}

/** `--base-url` checked as a server's root (a gateway's prefix allowed) and without a trailing `/`. */
function baseUrlOf(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw invalid('base-url', `--base-url "${raw}" is not a URL (http://gpu-box:8000)`, raw);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw invalid('base-url', `--base-url must be http(s), got ${u.protocol}`, raw);
  if (u.username !== '' || u.password !== '') throw invalid('base-url', '--base-url must not carry credentials; pass the key with --api-key or OPENAI_API_KEY');
  // The endpoint's path is appended: a query or fragment here would end up before it.
  if (u.search !== '' || u.hash !== '') throw invalid('base-url', `--base-url ${raw}: the server's root, without ?query or #fragment (the --endpoint path is appended to it)`, raw);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

/** `--host` as it goes into a URL: a name or an address, IPv6 in brackets (vLLM's join_host_port). */
function hostPart(raw: string): string {
  const bare = raw.replace(/^\[(.*)\]$/, '$1');
  const v6 = isIP(bare) === 6;
  const part = v6 ? `[${bare}]` : bare;
  // Anything a URL would read as more than a host (a port, a path, credentials) is not a host.
  const bad = bare === '' || (!v6 && /[:/@?#[\]\s]/.test(bare)) || !URL.canParse(`http://${part}/`);
  if (bad) throw invalid('host', `--host "${raw}" is not a host name or address (the port goes in --port)`, raw);
  return part;
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
      const url = `${ep.origin}${path}`;
      throw new LmBenchError('LMB_ERR_ENDPOINT_BAD_RESPONSE', `${url} answered HTTP ${res.statusCode}${noModelListWhy(url, res.statusCode, res.headers, t)}`, {
        details: { endpoint: ep.url, status: res.statusCode, body: redactKey(text.slice(0, 200), t) },
      });
    }
    return id;
  });
}

/**
 * Why the model list did not come, after its status: a redirect (the load's client follows none, so
 * `--model` alone would only move the failure to the first request), a server shedding load or not
 * ready (429, 503: nothing is sent; its Retry-After told), or no list at all (pass --model).
 */
function noModelListWhy(url: string, status: number, headers: Record<string, string | string[] | undefined>, t: Transport): string {
  const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
  if (status >= 300 && status < 400) {
    const to = one(headers['location']);
    const where = to === undefined || !URL.canParse(to, url) ? '' : ` to ${redactKey(new URL(to, url).href, t)}`;
    return `, a redirect${where}: the load follows no redirect; name the server where it points (--endpoint, --base-url)`;
  }
  if (status === 429 || status === 503) {
    const after = one(headers['retry-after']);
    const wait = after === undefined ? '' : ` (Retry-After: ${JSON.stringify(after.slice(0, 40))})`;
    return `${wait}: the server is shedding load or not ready yet; nothing was sent, try again when it answers`;
  }
  return ' without a model list; pass --model';
}

function unauthorized(ep: Endpoint, status: number, t: Transport): LmBenchError {
  const how = t.apiKey === null ? 'no API key was sent; pass --api-key or set OPENAI_API_KEY' : 'the API key was refused';
  return new LmBenchError('LMB_ERR_ENDPOINT_BAD_RESPONSE', `${ep.host} answered HTTP ${status}: ${how}`, { details: { endpoint: ep.url, status } });
}

/**
 * One tiny streamed request (max_tokens 1) before the run: a refused connection is UNREACHABLE; a 401
 * or 403 is BAD_RESPONSE saying what of the key, and any other answer no run could measure is
 * BAD_RESPONSE saying why (probe-answer.ts). A 429 or 503 is a server shedding load (or not ready):
 * every request of the run would likely get the same, so the probe waits as its Retry-After asks, within
 * PROBE_WAIT_MAX_S in all, and asks again; a server still shedding then (or that names no wait, or a
 * longer one) is BAD_RESPONSE naming the status, before anything is sent. Anything else (other 5xx, odd
 * chunks) is left for the run to measure and count.
 */
export const PROBE_WAIT_MAX_S = 30;

/** Seconds a Retry-After asks for (delta-seconds, or an HTTP date from `nowMs`); null when it says neither. */
export function retryAfterS(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  // An HTTP date starts with its day's name (every format RFC 9110 allows); Date.parse takes far more ("-3").
  const at = /^[A-Za-z]{3}/.test(v) ? Date.parse(v) : Number.NaN;
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

export interface ProbeWait {
  /** Told each wait before the probe asks again (the CLI prints it). */
  readonly onWait?: ((line: string) => void) | undefined;
  /** Aborts a wait (Ctrl-C): LMB_ERR_INTERRUPTED. */
  readonly signal?: AbortSignal | undefined;
}

export async function probeEndpoint(ep: Endpoint, body: string, t: Transport, timeoutMs: number, wait: ProbeWait = {}): Promise<void> {
  let waitedS = 0;
  for (;;) {
    const shed = await probeOnce(ep, body, t, timeoutMs);
    if (shed === null) return;
    const askedS = retryAfterS(shed.retryAfter, Date.now());
    const said = `${ep.url} answered the probe request HTTP ${shed.status}${shed.retryAfter === null ? '' : ` (Retry-After: ${JSON.stringify(shed.retryAfter.slice(0, 40))})`}`;
    // At least a second between probes: a Retry-After of 0 is not an invitation to spin.
    const nextS = askedS === null ? null : Math.max(1, askedS);
    if (nextS === null || waitedS + nextS > PROBE_WAIT_MAX_S) {
      const waited = waitedS === 0 ? '' : ` after waiting ${waitedS} s`;
      const why = nextS === null ? '' : `, and asks for more than lm-bench waits before a run (${PROBE_WAIT_MAX_S} s in all)`;
      throw new LmBenchError('LMB_ERR_ENDPOINT_BAD_RESPONSE', `${said}${waited}: the server is shedding load or not ready yet${why}; nothing was sent, as every request would likely be refused the same; try again when it answers`, {
        details: { endpoint: ep.url, status: shed.status, retry_after: shed.retryAfter },
      });
    }
    wait.onWait?.(`${said}: the server is shedding load or not ready yet; asking again in ${nextS} s`);
    try {
      await sleep(nextS * 1000, undefined, { signal: wait.signal });
    } catch (err) {
      throw new LmBenchError('LMB_ERR_INTERRUPTED', 'the run was aborted', { cause: err });
    }
    waitedS += nextS;
  }
}

/** One probe: null when a run can measure the answer, the status and Retry-After of a server shedding load; throws for the others. */
async function probeOnce(ep: Endpoint, body: string, t: Transport, timeoutMs: number): Promise<{ status: 429 | 503; retryAfter: string | null } | null> {
  return withProbe(ep, t, async (pool) => {
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
      return null; // a broken body is a run-time error to count, not a wrong endpoint
    }
    if (res.statusCode === 401 || res.statusCode === 403) throw unauthorized(ep, res.statusCode, t);
    if (res.statusCode === 429 || res.statusCode === 503) {
      const after = res.headers['retry-after'];
      return { status: res.statusCode, retryAfter: (Array.isArray(after) ? after[0] : after) ?? null };
    }
    const problem = probeProblem(ep, { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), location: res.headers['location'], text }, body, t);
    if (problem !== null) throw problem;
    return null;
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
