import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for an OpenAI-compatible completions server, for `lm-bench run` tests: it lists
 * one model (`stand-in`) on /v1/models, answers 404 elsewhere, and hands each /v1/completions request
 * to `answer` with the request's max_tokens. Listening on 127.0.0.1 at a free port once started.
 */
export interface StandIn {
  readonly server: Server;
  readonly port: number;
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  /** The completions endpoint. */
  readonly url: string;
  /** Drops open connections and stops listening. */
  readonly close: () => Promise<void>;
}

export async function completionsStandIn(answer: (res: ServerResponse, maxTokens: number, server: Server) => void): Promise<StandIn> {
  const server = createServer((req, res) => {
    if (req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 'stand-in' }] }));
      return;
    }
    if (req.url !== '/v1/completions') {
      res.writeHead(404).end();
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => answer(res, (JSON.parse(body) as { max_tokens: number }).max_tokens, server));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const close = (): Promise<void> =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return { server, port, origin, url: `${origin}/v1/completions`, close };
}

/** vLLM's stream of `n` one-token chunks, the finish reason (length) on the last, then [DONE]; `usage` adds its usage chunk first. */
export function tokenStream(n: number, usage: boolean): string {
  let out = '';
  for (let i = 0; i < n; i++) out += `data: ${JSON.stringify({ choices: [{ index: 0, text: ' tok', finish_reason: i === n - 1 ? 'length' : null }] })}\n\n`;
  if (usage) out += `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 8, completion_tokens: n } })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}
