import { randomBytes } from 'node:crypto';
import { LmBenchError } from '../errors.js';
import type { Workload } from '../domain/index.js';
import { requestBody, type RequestTemplate } from './client.js';
import { apiOfPath, assertAllowedTarget, describeTarget, discoverModel, parseEndpoint, probeEndpoint, type Endpoint } from './endpoint.js';
import { DEFAULT_TRANSPORT, authHeaders, type Transport } from './transport.js';

/**
 * What every load mode does before the first measured request: the endpoint checked against the
 * loopback policy, the route picked from the workload's API, the bounds told to the caller, the
 * model discovered when not given, and one 1-token probe so a wrong URL or key fails before the clock
 * starts, within the probe time-out. The probe's prompt is one the run never sends and shares no
 * prefix with any of them: the request it copied would otherwise be served from a prefix cache
 * (vLLM's, llama.cpp's slot cache) and its TTFT come out a fraction of the others'.
 */
export const PROBE_PROMPT = 'lm-bench connectivity probe: reply with one word.';

export interface ConnectOptions {
  readonly endpoint: string;
  readonly model?: string | undefined;
  readonly workload: Workload;
  readonly timeoutMs: number;
  readonly temperature?: number | undefined;
  readonly transport?: Partial<Transport> | undefined;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Told where the load goes and how it is bounded, and when the probe waits on a server shedding load. */
  readonly onTarget?: ((line: string) => void) | undefined;
  /** Aborts the probe's wait on a server shedding load (Ctrl-C). */
  readonly signal?: AbortSignal | undefined;
  readonly bounds: { readonly prompts: number; readonly durationS?: number | undefined };
}

export interface Connected {
  readonly ep: Endpoint;
  readonly transport: Transport;
  readonly target: RequestTemplate;
  readonly model: string;
  readonly api: 'completions' | 'chat';
}

/**
 * The route the load goes to and its API: a chat path is chat whatever the workload says, and
 * `--api chat` against …/v1/completions means the chat endpoint beside it. A dry run prints this
 * route, so what it says is where the run would send.
 */
export function routeFor(ep: Endpoint, workloadApi: 'completions' | 'chat'): { readonly api: 'completions' | 'chat'; readonly route: Endpoint } {
  const api = workloadApi === 'chat' || apiOfPath(ep.path) === 'chat' ? 'chat' : 'completions';
  const path = api === 'chat' && apiOfPath(ep.path) !== 'chat' ? ep.path.replace(/\/completions(\?|$)/, '/chat/completions$1') : ep.path;
  return { api, route: { ...ep, path, url: `${ep.origin}${path}` } };
}

export async function connectTarget(opts: ConnectOptions): Promise<Connected> {
  const ep = parseEndpoint(opts.endpoint);
  assertAllowedTarget(ep, opts.env ?? process.env);
  const transport: Transport = { ...DEFAULT_TRANSPORT, ...opts.transport };
  // The probes wait no longer than a request may, and never more than 10 s: a dead host fails fast.
  const probeMs = Math.min(opts.timeoutMs, 10_000);
  const w = opts.workload;
  const { api, route } = routeFor(ep, w.api);
  const path = route.path;
  if (opts.bounds.prompts === 0) throw new LmBenchError('LMB_ERR_WORKLOAD_INVALID', 'the workload has no requests');
  opts.onTarget?.(describeTarget(route, transport, { prompts: opts.bounds.prompts, durationS: opts.bounds.durationS, timeoutS: opts.timeoutMs / 1000 }));
  const model = opts.model ?? (await discoverModel(ep, transport, probeMs));
  const target: RequestTemplate = {
    path, api, model, ignoreEos: w.ignore_eos, temperature: opts.temperature, timeoutMs: opts.timeoutMs, headers: authHeaders(transport),
    requestIdPrefix: `lmb-${randomBytes(4).toString('hex')}-`,
  };
  await probeEndpoint(route, requestBody(target, { index: -1, prompt: PROBE_PROMPT, clientTokens: 10, maxTokens: 1 }), transport, probeMs, { onWait: opts.onTarget, signal: opts.signal });
  return { ep, transport, target, model, api };
}
