import { createServer, type Socket } from 'node:net';
import { parseArgs } from 'node:util';

/**
 * The load-runner benchmark's stub, in its own process so it does not share the client's event loop.
 * It speaks just enough HTTP/1.1 (keep-alive, Content-Length bodies, chunked SSE replies) straight
 * on sockets, with one 1 ms timer wheel for every stream, so that a thousand streams at 10 ms a token
 * (100,000 writes a second) cost it as little as possible. First token `ttft` ms after the request's
 * body arrived, then one every `itl` ms from the first token's actual write, `max_tokens` tokens,
 * usage, [DONE]. GET /stats reports what it actually sent (and resets with /stats?reset).
 * Prints its URL on the first line of stdout.
 */
const { values } = parseArgs({
  options: { ttft: { type: 'string', default: '50' }, itl: { type: 'string', default: '10' }, 'events-per-write': { type: 'string', default: '1' } },
});
const ttftMs = Number(values.ttft);
const itlMs = Number(values.itl);
const perWrite = Math.max(1, Number(values['events-per-write']));

const TOKEN = 'data: {"id":"cmpl-b","object":"text_completion","model":"stub","choices":[{"index":0,"text":" tok","finish_reason":null}]}\n\n';
const LAST = 'data: {"id":"cmpl-b","object":"text_completion","model":"stub","choices":[{"index":0,"text":" tok","finish_reason":"length"}]}\n\n';
const chunk = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
const HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n';
const tokenRun = (n: number, last: boolean): string => chunk(TOKEN.repeat(last ? n - 1 : n) + (last ? LAST : ''));

interface Stream {
  readonly socket: Socket;
  readonly tokens: number;
  readonly arrivedMs: number;
  sent: number;
  firstMs: number;
  lastMs: number;
}
const truth = { requests: 0, ttftSumMs: 0, gaps: 0, gapSumMs: 0, chunks: 0 };
const wheel = new Map<number, Stream[]>();
const schedule = (s: Stream, atMs: number): void => {
  const slot = Math.max(Math.ceil(atMs), lastTick); // never into a slot already swept
  const list = wheel.get(slot);
  if (list === undefined) wheel.set(slot, [s]);
  else list.push(s);
};
let lastTick = Math.floor(performance.now());
setInterval(() => {
  const now = performance.now();
  const from = lastTick;
  lastTick = Math.floor(now) + 1;
  for (let slot = from; slot < lastTick; slot++) {
    const due = wheel.get(slot);
    if (due === undefined) continue;
    wheel.delete(slot);
    for (const s of due) emit(s, now);
  }
}, 1);

function emit(s: Stream, now: number): void {
  if (s.socket.destroyed) return;
  const n = Math.min(perWrite, s.tokens - s.sent);
  const done = s.sent + n >= s.tokens;
  let out = tokenRun(n, done);
  if (s.sent === 0) {
    s.firstMs = now;
    truth.requests++;
    truth.ttftSumMs += now - s.arrivedMs;
  } else {
    truth.gaps++;
    truth.gapSumMs += now - s.lastMs;
  }
  truth.chunks += n;
  s.lastMs = now;
  s.sent += n;
  if (done) {
    out += chunk(`data: {"id":"cmpl-b","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":${s.tokens},"total_tokens":${s.tokens + 7}}}\n\ndata: [DONE]\n\n`) + '0\r\n\r\n';
    s.socket.write(out);
    return;
  }
  s.socket.write(out);
  schedule(s, s.firstMs + (s.sent / perWrite) * itlMs);
}

function reply(socket: Socket, status: string, type: string, body: string): void {
  socket.write(`HTTP/1.1 ${status}\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`);
}

function handle(socket: Socket, head: string, body: string, arrivedMs: number): void {
  const [method, url] = head.split(' ', 2);
  if (method === 'GET' && url?.startsWith('/stats') === true) {
    reply(socket, '200 OK', 'application/json', JSON.stringify({
      requests: truth.requests,
      chunks: truth.chunks,
      mean_ttft_ms: truth.requests === 0 ? null : truth.ttftSumMs / truth.requests,
      mean_write_gap_ms: truth.gaps === 0 ? null : truth.gapSumMs / truth.gaps,
    }));
    if (url.includes('reset')) Object.assign(truth, { requests: 0, ttftSumMs: 0, gaps: 0, gapSumMs: 0, chunks: 0 });
    return;
  }
  if (method === 'GET' && url === '/v1/models') {
    reply(socket, '200 OK', 'application/json', '{"object":"list","data":[{"id":"stub-model","object":"model"}]}');
    return;
  }
  if (method !== 'POST') {
    reply(socket, '404 Not Found', 'application/json', '{"detail":"Not Found"}');
    return;
  }
  const m = /"max_tokens":(\d+)/.exec(body);
  const tokens = Math.max(1, Number(m?.[1] ?? 16));
  socket.write(HEAD);
  schedule({ socket, tokens, arrivedMs, sent: 0, firstMs: 0, lastMs: 0 }, arrivedMs + ttftMs);
}

const server = createServer((socket) => {
  socket.setNoDelay(true);
  let buf: Buffer = Buffer.alloc(0);
  socket.on('data', (data: Buffer) => {
    buf = buf.length === 0 ? data : Buffer.concat([buf, data]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const len = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buf.length < end + 4 + len) return;
      const body = buf.subarray(end + 4, end + 4 + len).toString('utf8');
      buf = buf.subarray(end + 4 + len);
      handle(socket, head, body, performance.now());
    }
  });
  socket.on('error', () => socket.destroy());
});
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  process.stdout.write(`http://127.0.0.1:${port}/v1/completions\n`);
});
process.on('SIGTERM', () => process.exit(0));
