/**
 * Where the load goes, and where an OpenAI-compatible server keeps its routes, read from the
 * endpoint's path alone: which API a route is, and where its model list is.
 */
export interface Endpoint {
  readonly url: string;
  /** scheme://host:port */
  readonly origin: string;
  /** Host name or address, without brackets. */
  readonly host: string;
  /** Path and query of the completions or chat endpoint. */
  readonly path: string;
  readonly loopback: boolean;
  readonly tls: boolean;
}

export function apiOfPath(path: string): 'completions' | 'chat' {
  return /chat\/completions/.test(path) ? 'chat' : 'completions';
}

/**
 * The model list beside the endpoint's completions route: `/llama/v1/chat/completions` →
 * `/llama/v1/models`, so a gateway's route prefix (KServe, Ray Serve, an ingress) is kept, as `vllm
 * bench serve` reads `/v1/models` under its base URL; the query (an `api-version`) goes along. Any
 * other route: `/v1/models` at the root.
 */
export function modelsPathOf(path: string): string {
  const q = path.indexOf('?');
  const route = q < 0 ? path : path.slice(0, q);
  const m = /^(.*?)\/(?:chat\/)?completions\/?$/.exec(route);
  return m === null ? '/v1/models' : `${m[1] ?? ''}/models${q < 0 ? '' : path.slice(q)}`;
}

/**
 * Where the server's Prometheus `/metrics` may be, in the order to try: vLLM serves it at its root, so
 * behind a gateway that mounts the server under a prefix (`/llama/v1/completions`) it is at
 * `/llama/metrics`; the root comes after (a gateway that keeps the prefix for the API alone).
 */
export function metricsPathsOf(path: string): string[] {
  const q = path.indexOf('?');
  const route = q < 0 ? path : path.slice(0, q);
  const m = /^(.*?)\/v1\/(?:chat\/)?completions\/?$/.exec(route);
  const prefix = m?.[1] ?? '';
  return prefix === '' ? ['/metrics'] : [`${prefix}/metrics`, '/metrics'];
}
