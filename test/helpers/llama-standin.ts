import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A loopback stand-in for llama.cpp's `llama-server`, for what lm-bench must survive from it (issue 29).
 * It does what that server does where it matters to a load runner:
 *
 * - **A fixed pool of HTTP threads, one per connection** (cpp-httplib's model; llama-server runs `--parallel` + 2
 *   of them): an accepted connection beyond the pool waits, unread, until a thread
 *   frees, and a thread stays with its connection until the connection closes (the client closes it,
 *   it sits idle past the keep-alive time-out, or the server closes it).
 * - **It closes the connection after every streamed reply**, although its headers said `Keep-Alive`.
 * - **Slots**: `parallel` requests are decoded at once; the rest are deferred, first come first served.
 * - **`/metrics` in llama.cpp's names** (`llamacpp:requests_processing`, `llamacpp:requests_deferred`, …),
 *   and nothing else: no queue, prefill or KV-cache histograms.
 *
 * Time per request: `prefillMsPerToken` × prompt words, then one token every `decodeMs` (a slot's
 * speed does not depend on the other slots: a CPU server's batch is small). Prompts are counted in
 * whitespace-separated words, as lm-bench's synthetic prompts are one token a word.
 */
export interface LlamaStandinOptions {
  /** HTTP threads: connections served at once (default 4). */
  readonly threads?: number;
  /** Slots: requests decoded at once (default 2). */
  readonly parallel?: number;
  readonly prefillMsPerToken?: number;
  readonly decodeMs?: number;
  /** Idle time after which a thread closes its kept-alive connection (default 5 s, cpp-httplib's). */
  readonly keepAliveS?: number;
  /** Serve `/metrics` (llama-server needs `--metrics`; default true). */
  readonly metrics?: boolean;
  /** Close the connection after a streamed reply, as llama-server does (default true). */
  readonly closeAfterStream?: boolean;
}

export interface LlamaStandin {
  readonly url: string;
  /** Connections accepted so far, and the most that waited for a thread at once. */
  stats(): { accepted: number; maxWaitingForThread: number; completions: number; requestsSeen: readonly string[] };
  close(): Promise<void>;
}

interface Job {
  readonly promptTokens: number;
  readonly maxTokens: number;
  readonly stream: boolean;
  readonly chat: boolean;
  readonly includeUsage: boolean;
  readonly socket: Socket;
  readonly done: () => void;
}

export async function startLlamaStandin(opts: LlamaStandinOptions = {}, port = 0): Promise<LlamaStandin> {
  const threads = opts.threads ?? 4;
  const parallel = opts.parallel ?? 2;
  const prefillMs = opts.prefillMsPerToken ?? 0.5;
  const decodeMs = opts.decodeMs ?? 20;
  const keepAliveMs = (opts.keepAliveS ?? 5) * 1000;
  const closeAfterStream = opts.closeAfterStream ?? true;
  const serveMetrics = opts.metrics ?? true;

  const waitingForThread: Socket[] = [];
  const live = new Set<Socket>();
  let busyThreads = 0;
  let accepted = 0;
  let maxWaiting = 0;
  let completions = 0;
  const requestsSeen: string[] = [];
  const counters = { promptTokens: 0, predicted: 0, decodes: 0, busySlotSum: 0 };

  let processing = 0;
  const deferred: Job[] = [];

  const admit = (): void => {
    while (processing < parallel && deferred.length > 0) {
      processing++;
      void runJob(deferred.shift() as Job).finally(() => {
        processing--;
        admit();
      });
    }
  };

  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

  const runJob = async (job: Job): Promise<void> => {
    const s = job.socket;
    const id = `cmpl-${completions}`;
    await sleep(job.promptTokens * prefillMs);
    counters.promptTokens += job.promptTokens;
    if (job.stream && !s.destroyed) {
      s.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: Keep-Alive\r\nKeep-Alive: timeout=5, max=100\r\nTransfer-Encoding: chunked\r\n\r\n');
    }
    const chunk = (data: string): void => {
      if (s.destroyed) return;
      const body = `data: ${data}\n\n`;
      s.write(`${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n`);
    };
    for (let k = 0; k < job.maxTokens; k++) {
      if (k > 0) await sleep(decodeMs);
      counters.predicted++;
      counters.decodes++;
      counters.busySlotSum += processing;
      const last = k === job.maxTokens - 1;
      if (job.stream) {
        const choice = job.chat ? { index: 0, delta: { content: ' tok' }, finish_reason: last ? 'length' : null } : { index: 0, text: ' tok', finish_reason: last ? 'length' : null };
        chunk(JSON.stringify({ id, object: job.chat ? 'chat.completion.chunk' : 'text_completion', choices: [choice] }));
      }
    }
    completions++;
    const usage = { prompt_tokens: job.promptTokens, completion_tokens: job.maxTokens, total_tokens: job.promptTokens + job.maxTokens };
    if (s.destroyed) return job.done();
    if (job.stream) {
      if (job.includeUsage) chunk(JSON.stringify({ id, choices: [], usage }));
      chunk('[DONE]');
      s.write('0\r\n\r\n');
      // llama-server's habit: the reply said Keep-Alive, the connection closes anyway.
      if (closeAfterStream) s.end();
    } else {
      const text = ' tok'.repeat(job.maxTokens);
      const body = JSON.stringify({ id, choices: [job.chat ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'length' } : { index: 0, text, finish_reason: 'length' }], usage });
      s.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    }
    job.done();
  };

  const reply = (s: Socket, status: number, contentType: string, body: string): void => {
    if (s.destroyed) return;
    s.write(`HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Error'}\r\nContent-Type: ${contentType}\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  };

  const metricsText = (): string =>
    [
      '# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.',
      '# TYPE llamacpp:prompt_tokens_total counter',
      `llamacpp:prompt_tokens_total ${counters.promptTokens}`,
      '# TYPE llamacpp:tokens_predicted_total counter',
      `llamacpp:tokens_predicted_total ${counters.predicted}`,
      '# TYPE llamacpp:n_decode_total counter',
      `llamacpp:n_decode_total ${counters.decodes}`,
      '# TYPE llamacpp:n_busy_slots_per_decode gauge',
      `llamacpp:n_busy_slots_per_decode ${counters.decodes === 0 ? 0 : counters.busySlotSum / counters.decodes}`,
      '# HELP llamacpp:requests_processing Number of requests processing.',
      '# TYPE llamacpp:requests_processing gauge',
      `llamacpp:requests_processing ${processing}`,
      '# HELP llamacpp:requests_deferred Number of requests deferred.',
      '# TYPE llamacpp:requests_deferred gauge',
      `llamacpp:requests_deferred ${deferred.length}`,
      '',
    ].join('\n');

  /** One thread's life with one connection: requests in order until the connection closes. */
  const serve = (s: Socket): void => {
    busyThreads++;
    let buf = Buffer.alloc(0);
    let working = false;
    let idleTimer: NodeJS.Timeout | null = null;
    const armIdle = (): void => {
      if (idleTimer !== null) clearTimeout(idleTimer);
      idleTimer = setTimeout(() => s.end(), keepAliveMs);
    };
    const next = (): void => {
      if (working || s.destroyed || s.writableEnded) return;
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return armIdle();
      const head = buf.subarray(0, end).toString('latin1');
      const len = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buf.length < end + 4 + len) return;
      const body = buf.subarray(end + 4, end + 4 + len).toString('utf8');
      buf = buf.subarray(end + 4 + len);
      if (idleTimer !== null) clearTimeout(idleTimer);
      working = true;
      const done = (): void => {
        working = false;
        if (!s.destroyed && !s.writableEnded) next();
      };
      const [method, path] = head.split(' ', 2) as [string, string];
      if (method === 'GET' && path === '/health') return (reply(s, 200, 'application/json', '{"status":"ok"}'), done());
      if (method === 'GET' && path === '/v1/models') return (reply(s, 200, 'application/json', JSON.stringify({ object: 'list', data: [{ id: 'standin', object: 'model' }] })), done());
      if (method === 'GET' && path === '/metrics') {
        if (serveMetrics) reply(s, 200, 'text/plain; version=0.0.4', metricsText());
        else reply(s, 501, 'application/json', '{"error":{"message":"This server does not support metrics endpoint. Start it with `--metrics`","type":"not_supported_error"}}');
        return done();
      }
      if (method === 'POST' && (path === '/v1/completions' || path === '/v1/chat/completions')) {
        let req: { prompt?: string; messages?: { content: string }[]; max_tokens?: number; stream?: boolean; stream_options?: { include_usage?: boolean } };
        try {
          req = JSON.parse(body) as typeof req;
        } catch {
          reply(s, 400, 'application/json', '{"error":{"message":"bad json"}}');
          return done();
        }
        const chat = path.endsWith('/chat/completions');
        const prompt = chat ? (req.messages?.map((m) => m.content).join(' ') ?? '') : (req.prompt ?? '');
        requestsSeen.push(prompt);
        deferred.push({
          promptTokens: Math.max(1, prompt.split(/\s+/).filter((w) => w !== '').length),
          maxTokens: Math.max(1, req.max_tokens ?? 16),
          stream: req.stream === true,
          chat,
          includeUsage: req.stream_options?.include_usage === true,
          socket: s,
          done,
        });
        return admit();
      }
      reply(s, 404, 'application/json', '{"error":{"message":"File Not Found"}}');
      done();
    };
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      next();
    });
    s.on('close', () => {
      if (idleTimer !== null) clearTimeout(idleTimer);
      busyThreads--;
      const waiting = waitingForThread.shift();
      if (waiting !== undefined) serve(waiting);
    });
    s.resume();
    armIdle();
  };

  const server: Server = createServer({ pauseOnConnect: true }, (s) => {
    accepted++;
    live.add(s);
    s.setNoDelay(true);
    s.on('error', () => s.destroy());
    s.on('close', () => {
      live.delete(s);
      const at = waitingForThread.indexOf(s);
      if (at >= 0) waitingForThread.splice(at, 1);
    });
    if (busyThreads < threads) serve(s);
    else {
      waitingForThread.push(s);
      maxWaiting = Math.max(maxWaiting, waitingForThread.length);
    }
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats: () => ({ accepted, maxWaitingForThread: maxWaiting, completions, requestsSeen }),
    close: () => {
      for (const s of live) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

// As a process (the benchmarks run it beside the client they measure):
// node --import tsx test/helpers/llama-standin.ts [--threads N] [--parallel N] [--decode-ms X] [--prefill-ms-per-token X]
if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const arg = (name: string): number | undefined => {
    const i = process.argv.indexOf(name);
    return i < 0 ? undefined : Number(process.argv[i + 1]);
  };
  const o: { -readonly [K in keyof LlamaStandinOptions]: LlamaStandinOptions[K] } = {};
  const threads = arg('--threads');
  const parallel = arg('--parallel');
  const decode = arg('--decode-ms');
  const prefill = arg('--prefill-ms-per-token');
  if (threads !== undefined) o.threads = threads;
  if (parallel !== undefined) o.parallel = parallel;
  if (decode !== undefined) o.decodeMs = decode;
  if (prefill !== undefined) o.prefillMsPerToken = prefill;
  const s = await startLlamaStandin(o, arg('--port') ?? 0);
  process.stderr.write(`llama stand-in listening on ${s.url}\n`);
  process.on('SIGTERM', () => void s.close().then(() => process.exit(0)));
}
