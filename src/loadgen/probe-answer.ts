import { LmBenchError } from '../errors.js';
import { apiOfPath, modelsPathOf, type Endpoint } from './routes.js';
import { redactKey, type Transport } from './transport.js';

/**
 * What the probe's answer says before any load is sent: an answer no run could measure is refused
 * here with its reason (LMB_ERR_ENDPOINT_BAD_RESPONSE), so a wrong URL, model or server fails in a
 * second instead of as a run of failed requests. Pure: the answer in, the error (or null) out.
 */
export interface ProbeAnswer {
  readonly status: number;
  readonly contentType: string;
  /** The `Location` header, if any. */
  readonly location: string | string[] | undefined;
  readonly text: string;
}

/** An error answer's own words: OpenAI's `error.message`, vLLM's `message`, FastAPI's `detail`, TGI's `error`. */
function errorMessageOf(text: string): string | null {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof obj !== 'object' || obj === null) return null;
  const o = obj as { error?: unknown; message?: unknown; detail?: unknown };
  const inner = typeof o.error === 'object' && o.error !== null ? (o.error as { message?: unknown }).message : o.error;
  for (const m of [inner, o.message, o.detail]) if (typeof m === 'string' && m !== '') return m;
  return null;
}

/**
 * A 404 or 400 whose error names the model the probe asked for (vLLM's "The model `X` does not
 * exist.", Ollama's "model \"X\" not found"): the route is right and the model name wrong, which the
 * generic "not an OpenAI-compatible endpoint" would hide.
 */
function modelRefusal(status: number, text: string, sentBody: string): { model: string; message: string } | null {
  if (status !== 404 && status !== 400) return null;
  const message = errorMessageOf(text);
  let model: unknown;
  try {
    model = (JSON.parse(sentBody) as { model?: unknown }).model;
  } catch {
    return null;
  }
  if (message === null || typeof model !== 'string' || model === '') return null;
  // The name as a word of the message (quoted, or between spaces), so a short name ("m") is not found inside "maximum".
  const named = new RegExp(`(^|[\\s"'\`=(])${model.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[\\s"'\`),.:;])`).test(message);
  return named ? { model, message } : null;
}

/** Where a redirect points, resolved against the endpoint. */
function redirectTarget(ep: Endpoint, location: ProbeAnswer['location'], t: Transport): string {
  const to = Array.isArray(location) ? location[0] : location;
  if (to === undefined || to === '') return '';
  try {
    return ` to ${redactKey(new URL(to, ep.url).href, t)}: give that URL as --endpoint`;
  } catch {
    return ` to ${JSON.stringify(redactKey(to.slice(0, 120), t))}`;
  }
}

/** The error a probe answer earns (`sentBody`: the probe's request body), or null when a run can measure this server. */
export function probeProblem(ep: Endpoint, a: ProbeAnswer, sentBody: string, t: Transport): LmBenchError | null {
  const bad = (message: string, extra: Record<string, unknown> = {}): LmBenchError =>
    new LmBenchError('LMB_ERR_ENDPOINT_BAD_RESPONSE', message, { details: { endpoint: ep.url, status: a.status, ...extra } });
  const quoted = JSON.stringify(redactKey(a.text.slice(0, 120), t));
  const refused = modelRefusal(a.status, a.text, sentBody);
  if (refused !== null) {
    return bad(
      `${ep.host} does not serve model ${JSON.stringify(refused.model)} (HTTP ${a.status}: ${redactKey(refused.message.slice(0, 200), t)}); pass --model with one it lists at ${ep.origin}${modelsPathOf(ep.path)}, or leave --model out to take the first`,
      { model: refused.model },
    );
  }
  // The load's client follows no redirect (vLLM's bench does not either): a route the server moves,
  // FastAPI's 307 from `/v1/completions/` to `/v1/completions` above all, would fail every request.
  if (a.status >= 300 && a.status < 400) return bad(`${ep.url} answered HTTP ${a.status}, a redirect${redirectTarget(ep, a.location, t)}`);
  const looksSse = /(^|\n)data:/.test(a.text);
  const looksJson = /^\s*[{[]/.test(a.text);
  const hasError = /"error"\s*:/.test(a.text);
  // A completion in one JSON body (or JSON lines, Ollama's own /api/generate): the server, or a proxy
  // before it, does not stream OpenAI's events, and without them there is no first token or gap
  // between tokens to time; every request would fail. An error object is left for the run to count.
  if (a.status === 200 && !looksSse && looksJson && !hasError) {
    return bad(`${ep.url} answered a streamed request (stream: true) with JSON, not server-sent events: the server or a proxy before it does not stream OpenAI's events, so TTFT and ITL cannot be measured (${quoted})`);
  }
  // Events, but none of OpenAI's: an engine's own streaming route (llama.cpp's /completion, TGI's
  // /generate_stream, SGLang's /generate), whose chunks carry no `choices`, so no token would be seen.
  if (a.status === 200 && looksSse && !/"choices"\s*:/.test(a.text) && !hasError) {
    return bad(`${ep.url} streams events without OpenAI's \`choices\` (${quoted}): an engine's own route, not an OpenAI-compatible ${apiOfPath(ep.path)} endpoint (…/v1/completions or …/v1/chat/completions)`);
  }
  if (a.status === 404 || a.status === 405 || a.contentType.includes('text/html') || (a.status === 200 && !looksSse && !looksJson)) {
    return bad(`${ep.url} is not an OpenAI-compatible ${apiOfPath(ep.path)} endpoint (HTTP ${a.status}, ${a.contentType || 'no content type'}: ${quoted})`);
  }
  return null;
}
