import { isIP } from 'node:net';
import { request } from 'undici';
import { LmBenchError } from '../errors.js';
import { classifyError } from './client.js';

/**
 * Where the load goes, checked before any load is sent: the endpoint must be loopback (the load
 * runner is a test tool, not a traffic cannon), must answer, and must look like an OpenAI-compatible
 * completions or chat endpoint. Wrong endpoints fail fast with LMB_ERR_ENDPOINT_UNREACHABLE or
 * LMB_ERR_ENDPOINT_BAD_RESPONSE; a server that answers but misbehaves under load is measured, with
 * its errors counted.
 */
export interface Endpoint {
  readonly url: string;
  /** scheme://host:port */
  readonly origin: string;
  /** Path and query of the completions or chat endpoint. */
  readonly path: string;
}

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.split('.')[0] === '127';
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

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
  if (!isLoopbackHost(u.hostname)) {
    throw new LmBenchError(
      'LMB_ERR_ENDPOINT_NOT_LOOPBACK',
      `${u.hostname} is not a loopback address; load tests only target 127.0.0.0/8, ::1 or localhost`,
      { details: { field: 'endpoint', value: raw } },
    );
  }
  const path = u.pathname === '/' ? '/v1/completions' : `${u.pathname}${u.search}`;
  return { url: raw, origin: u.origin, path };
}

export function apiOfPath(path: string): 'completions' | 'chat' {
  return /chat\/completions/.test(path) ? 'chat' : 'completions';
}

function unreachable(ep: Endpoint, err: unknown): LmBenchError {
  const why = err instanceof Error ? err.message : String(err);
  return new LmBenchError('LMB_ERR_ENDPOINT_UNREACHABLE', `${ep.origin} does not answer (${classifyError(err)}: ${why}); is the server running?`, {
    cause: err,
    details: { endpoint: ep.url },
  });
}

const PROBE_TIMEOUT_MS = 10_000;

/** The first model the server lists at /v1/models (vLLM's bench does the same). */
export async function discoverModel(ep: Endpoint): Promise<string> {
  let res;
  try {
    res = await request(`${ep.origin}/v1/models`, { headersTimeout: PROBE_TIMEOUT_MS, bodyTimeout: PROBE_TIMEOUT_MS });
  } catch (err) {
    throw unreachable(ep, err);
  }
  const text = await res.body.text();
  let id: unknown;
  try {
    id = (JSON.parse(text) as { data?: { id?: unknown }[] }).data?.[0]?.id;
  } catch {
    id = undefined;
  }
  if (res.statusCode !== 200 || typeof id !== 'string') {
    throw new LmBenchError(
      'LMB_ERR_ENDPOINT_BAD_RESPONSE',
      `${ep.origin}/v1/models answered HTTP ${res.statusCode} without a model list; pass --model`,
      { details: { endpoint: ep.url, status: res.statusCode, body: text.slice(0, 200) } },
    );
  }
  return id;
}

/**
 * One tiny streamed request (max_tokens 1) before the run: a refused connection is UNREACHABLE; a 404
 * or 405, an HTML page, or a 200 that carries neither SSE events nor JSON is BAD_RESPONSE. Anything
 * else (5xx, odd chunks) is left for the run to measure and count.
 */
export async function probeEndpoint(ep: Endpoint, body: string): Promise<void> {
  let res;
  try {
    res = await request(`${ep.origin}${ep.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body,
      headersTimeout: PROBE_TIMEOUT_MS,
      bodyTimeout: PROBE_TIMEOUT_MS,
    });
  } catch (err) {
    throw unreachable(ep, err);
  }
  let text = '';
  try {
    text = await res.body.text();
  } catch {
    return; // a broken body is a run-time error to count, not a wrong endpoint
  }
  const type = String(res.headers['content-type'] ?? '');
  const looksSse = /(^|\n)data:/.test(text);
  const looksJson = /^\s*[{[]/.test(text);
  const wrong =
    res.statusCode === 404 ||
    res.statusCode === 405 ||
    type.includes('text/html') ||
    (res.statusCode === 200 && !looksSse && !looksJson);
  if (wrong) {
    throw new LmBenchError(
      'LMB_ERR_ENDPOINT_BAD_RESPONSE',
      `${ep.url} is not an OpenAI-compatible ${apiOfPath(ep.path)} endpoint (HTTP ${res.statusCode}, ${type || 'no content type'}: ${JSON.stringify(text.slice(0, 120))})`,
      { details: { endpoint: ep.url, status: res.statusCode } },
    );
  }
}
