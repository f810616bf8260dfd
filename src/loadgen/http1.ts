import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Transport } from './transport.js';

/**
 * The HTTP/1.1 client the load's requests go through: keep-alive connections, one request at a time on
 * each, responses framed by hand (status line, headers, chunked or Content-Length or close-delimited
 * bodies) straight from the socket's reads.
 *
 * Why not undici, which every other request of lm-bench uses: at a thousand streams a token chunk
 * arrives every 10 µs, and the per-read path is what sets how late a chunk is timed. undici's (a
 * Buffer and a stream event per read, llhttp in wasm, a handler chain) cost ~25 µs a read on this
 * machine, so a wave of 1,000 first tokens took 25 ms to get through and the run's mean TTFT came out
 * 47 ms late (bench/loadgen-accuracy.ts). Here every socket of a thread reads into one shared buffer
 * (net's `onread`: no allocation per read), each read is timed once when it arrives, and its bytes are
 * handed on as views of that buffer, which the handler must consume before it returns.
 */
/** Headers of an answer that no stream follows, kept to say why (the rest are read for framing only). */
export interface H1Head {
  /** Where a redirect points (the load follows none). */
  readonly location: string | null;
  /** When a server shedding load (429, 503) asks to be tried again: seconds or an HTTP date. */
  readonly retryAfter: string | null;
}

export interface H1Handler {
  /** The status line and headers arrived; `atS`: when the read that completed them arrived. */
  onStart(status: number, atS: number, head: H1Head): void;
  /** Body bytes (de-chunked), a view valid only during the call; `atS`: when the read arrived. */
  onBody(bytes: Buffer, atS: number): void;
  /** The response ended; the connection is already free for the next request. */
  onEnd(): void;
  /** The request failed (socket error, bad framing, abort); called at most once, never after onEnd. */
  onError(err: Error): void;
}

export interface H1Call {
  /** Ends the request now: its connection is closed and the handler told `reason`. */
  abort(reason: Error): void;
}

export interface H1Pool {
  /** Sends `head` (request line and headers, without Host and Content-Length) and `body`. */
  request(method: 'GET' | 'POST', path: string, headers: string, body: string, handler: H1Handler): H1Call;
  /** Opens up to `n` connections ahead of the load; resolves when each is up or has failed. */
  preconnect(n: number): Promise<void>;
  /** Closes idle connections, and each busy one when its response ends. */
  close(): Promise<void>;
  /** Closes everything now; requests in flight fail. */
  destroy(): void;
}

/** An error of this client, with a code `classifyError` maps to an error kind. */
export class H1Error extends Error {
  readonly code: 'LMB_HTTP_PARSE' | 'LMB_HTTP_CLOSED' | 'UND_ERR_CONNECT_TIMEOUT';
  constructor(code: H1Error['code'], message: string) {
    super(message);
    this.code = code;
  }
}

export interface H1PoolOptions {
  readonly origin: string;
  readonly transport: Transport;
  /** Most connections open at once; null: as many as requests in flight. */
  readonly connections: number | null;
  /** The clock reads are timed on (seconds). */
  readonly nowS: () => number;
  /**
   * Idle connections older than this are not reused, and are closed (below vLLM's 5 s keep-alive,
   * `VLLM_HTTP_TIMEOUT_KEEP_ALIVE` in vllm/envs.py); a server's own `Keep-Alive: timeout=` shortens it for its connections.
   */
  readonly keepAliveMs?: number;
}

/** Where a connection is in its response; numbers, so the per-read switch stays cheap. */
const Phase = { Idle: 0, Head: 1, ChunkSize: 2, ChunkData: 3, ChunkEnd: 4, Trailers: 5, Length: 6, UntilClose: 7 } as const;
type Phase = (typeof Phase)[keyof typeof Phase];

const MAX_HEAD_CHARS = 64 * 1024;
const READ_BUFFER_BYTES = 64 * 1024;

interface Call extends H1Call {
  readonly wire: string;
  readonly handler: H1Handler;
  conn: Conn | null;
  done: boolean;
  /** Sent again once already, after a reused connection closed before answering it. */
  retried: boolean;
  /** Must go on a connection opened for it (its retry), not an idle one. */
  fresh: boolean;
}

interface Conn {
  readonly socket: Socket;
  call: Call | null;
  phase: Phase;
  /** Head or chunk-size line text gathered across reads. */
  text: string;
  remaining: number;
  keepAlive: boolean;
  idleSinceMs: number;
  gone: boolean;
  /** Responses this connection has completed: a request on a reused connection may meet its close. */
  served: number;
  /** Bytes of the current call's answer arrived (a call with none was never processed). */
  answered: boolean;
  /** How long it may sit idle: ours, or less when the server's `Keep-Alive: timeout=` says so. */
  idleLimitMs: number;
  /** Requests the server still takes on it (`Keep-Alive: max=`), or Infinity. */
  requestsLeft: number;
}

export function createH1Pool(opts: H1PoolOptions): H1Pool {
  const url = new URL(opts.origin);
  const secure = url.protocol === 'https:';
  const port = Number(url.port === '' ? (secure ? 443 : 80) : url.port);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const hostHeader = url.host;
  const keepAliveMs = opts.keepAliveMs ?? 4000;
  const cap = opts.connections ?? Number.POSITIVE_INFINITY;
  const t = opts.transport;
  const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  const conns = new Set<Conn>();
  const idle: Conn[] = [];
  const queue: Call[] = [];
  let closing: (() => void) | null = null;
  // Idle connections past their limit are closed, not just skipped: a server with a thread per
  // connection (llama.cpp's) holds a thread for each one until it does.
  const sweep = setInterval(() => {
    const nowMs = performance.now();
    for (const conn of [...idle]) {
      if (nowMs - conn.idleSinceMs >= conn.idleLimitMs) {
        unidle(conn);
        conn.socket.destroy();
      }
    }
  }, 250);
  sweep.unref();

  const open = (): Conn => {
    const conn: Conn = {
      socket: null as unknown as Socket, call: null, phase: Phase.Idle, text: '', remaining: 0, keepAlive: true, idleSinceMs: 0, gone: false,
      served: 0, answered: false, idleLimitMs: keepAliveMs, requestsLeft: Number.POSITIVE_INFINITY,
    };
    const onread = { buffer: readBuffer, callback: (n: number, buf: Uint8Array): boolean => (onRead(conn, n, buf as Buffer), true) };
    const common = { host, port, noDelay: true, onread, timeout: 0 };
    const socket = secure
      ? tlsConnect({ ...common, servername: host, ALPNProtocols: ['http/1.1'], ...(t.caCertPem === null ? {} : { ca: t.caCertPem }), rejectUnauthorized: !t.insecure })
      : netConnect(common);
    (conn as { socket: Socket }).socket = socket;
    conns.add(conn);
    const timer = setTimeout(() => socket.destroy(new H1Error('UND_ERR_CONNECT_TIMEOUT', `connect to ${hostHeader} timed out after ${t.connectTimeoutMs} ms`)), t.connectTimeoutMs);
    timer.unref();
    socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(timer));
    socket.on('error', (err: Error) => {
      if (!retry(conn)) fail(conn, err);
    });
    // The server's FIN: whatever it said in its headers, this connection takes no further request.
    socket.on('end', () => {
      conn.keepAlive = false;
      unidle(conn);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      gone(conn);
    });
    return conn;
  };

  const unidle = (conn: Conn): void => {
    const at = idle.indexOf(conn);
    if (at >= 0) idle.splice(at, 1);
  };

  /**
   * A request written on a reused connection that closed before any byte of its answer was never
   * processed: servers close kept-alive connections when they like (llama.cpp's after every streamed
   * reply, whatever its `Keep-Alive` header said), and the close can cross the next request on the
   * wire. Such a request goes again, once, on a connection opened for it, as undici and browsers do.
   */
  const retry = (conn: Conn): boolean => {
    const call = conn.call;
    if (call === null || call.done || call.retried || conn.served === 0 || conn.answered || conn.phase !== Phase.Head || conn.text !== '') return false;
    conn.call = null;
    conn.keepAlive = false;
    if (!conn.socket.destroyed) conn.socket.destroy();
    call.retried = true;
    call.fresh = true;
    call.conn = null;
    queue.unshift(call);
    queueMicrotask(pump);
    return true;
  };

  const gone = (conn: Conn): void => {
    if (conn.gone) return;
    conn.gone = true;
    conns.delete(conn);
    const call = conn.call;
    if (call !== null && !retry(conn)) {
      if (conn.phase === Phase.UntilClose) finish(conn);
      else fail(conn, new H1Error('LMB_HTTP_CLOSED', conn.phase === Phase.Head ? 'the server closed the connection before answering' : 'the server closed the connection mid-response'));
    }
    unidle(conn);
    if (closing !== null && conns.size === 0) closing();
    else pump();
  };

  const fail = (conn: Conn, err: Error): void => {
    const call = conn.call;
    conn.call = null;
    conn.keepAlive = false;
    if (!conn.socket.destroyed) conn.socket.destroy();
    if (call !== null && !call.done) {
      call.done = true;
      call.handler.onError(err);
    }
  };

  /** The response ended: the connection goes back to the pool before the handler hears of it. */
  const finish = (conn: Conn): void => {
    const call = conn.call;
    conn.call = null;
    conn.phase = Phase.Idle;
    conn.served++;
    conn.requestsLeft--;
    if (conn.keepAlive && conn.requestsLeft > 0 && !conn.gone && closing === null) {
      conn.idleSinceMs = performance.now();
      idle.push(conn);
    } else if (!conn.socket.destroyed) {
      conn.socket.destroy();
    }
    if (call !== null && !call.done) {
      call.done = true;
      call.handler.onEnd();
    }
    pump();
  };

  /** Reads the status line and framing headers; returns the phase the body starts in. */
  const parseHead = (conn: Conn, head: string, atS: number): Phase => {
    const lineEnd = head.indexOf('\r\n');
    const statusLine = lineEnd < 0 ? head : head.slice(0, lineEnd);
    const m = /^HTTP\/1\.([01]) (\d{3})/.exec(statusLine);
    if (m === null) throw new H1Error('LMB_HTTP_PARSE', `not an HTTP/1.x response: ${JSON.stringify(statusLine.slice(0, 80))}`);
    const status = Number(m[2]);
    let length: number | null = null;
    let chunked = false;
    let keepAlive = m[1] === '1';
    let location: string | null = null;
    let retryAfter: string | null = null;
    for (const line of head.slice(lineEnd + 2).split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const raw = line.slice(colon + 1).trim();
      const value = raw.toLowerCase();
      if (name === 'location') location = raw;
      else if (name === 'retry-after') retryAfter = raw;
      else if (name === 'content-length') {
        if (!/^\d+$/.test(value)) throw new H1Error('LMB_HTTP_PARSE', `bad Content-Length: ${JSON.stringify(value.slice(0, 40))}`);
        length = Number(value);
      } else if (name === 'transfer-encoding') {
        chunked = value.split(',').pop()?.trim() === 'chunked';
      } else if (name === 'connection') {
        if (value.includes('close')) keepAlive = false;
        else if (value.includes('keep-alive')) keepAlive = true;
      } else if (name === 'keep-alive') {
        // `timeout=5, max=100`: the server closes after `timeout` s idle and after `max` more requests.
        const timeoutS = /timeout\s*=\s*(\d+)/.exec(value)?.[1];
        const maxLeft = /max\s*=\s*(\d+)/.exec(value)?.[1];
        // A second's margin: a request must not reach the server as its idle timer fires.
        if (timeoutS !== undefined) conn.idleLimitMs = Math.min(keepAliveMs, Math.max(0, Number(timeoutS) * 1000 - 1000));
        if (maxLeft !== undefined) conn.requestsLeft = Number(maxLeft) + 1; // this response is one of them
      }
    }
    if (status >= 100 && status < 200) {
      conn.phase = Phase.Head; // an interim answer: the real one follows
      return conn.phase;
    }
    conn.keepAlive = keepAlive;
    conn.call?.handler.onStart(status, atS, { location, retryAfter });
    if (status === 204 || status === 304 || (length === 0 && !chunked)) conn.phase = Phase.Idle;
    else if (chunked) conn.phase = Phase.ChunkSize;
    else if (length !== null) {
      conn.phase = Phase.Length;
      conn.remaining = length;
    } else {
      conn.phase = Phase.UntilClose;
      conn.keepAlive = false;
    }
    return conn.phase;
  };

  /** One read: frames as much of the response as it holds; `buf` is only valid during the call. */
  const onRead = (conn: Conn, n: number, buf: Buffer): void => {
    const atS = opts.nowS();
    conn.answered = true;
    if (conn.call === null) {
      // Bytes nobody asked for: the connection can no longer be trusted to frame the next answer.
      conn.keepAlive = false;
      conn.socket.destroy();
      return;
    }
    try {
      let off = 0;
      while (off < n && conn.call !== null) {
        switch (conn.phase) {
          case Phase.Head: {
            const before = conn.text.length;
            conn.text += buf.toString('latin1', off, n);
            const end = conn.text.indexOf('\r\n\r\n', Math.max(0, before - 3));
            if (end < 0) {
              if (conn.text.length > MAX_HEAD_CHARS) throw new H1Error('LMB_HTTP_PARSE', 'response headers larger than 64 KiB');
              off = n;
              break;
            }
            off += end + 4 - before;
            const head = conn.text.slice(0, end);
            conn.text = '';
            if (parseHead(conn, head, atS) === Phase.Idle) finish(conn);
            break;
          }
          case Phase.ChunkSize:
          case Phase.Trailers: {
            let nl = buf.indexOf(10, off);
            if (nl >= n) nl = -1; // the shared buffer holds older bytes past this read's end
            const upto = nl < 0 ? n : nl;
            conn.text += buf.toString('latin1', off, upto);
            if (conn.text.length > 4096) throw new H1Error('LMB_HTTP_PARSE', 'a chunk-size or trailer line longer than 4 KiB');
            if (nl < 0) {
              off = n;
              break;
            }
            off = nl + 1;
            const line = conn.text.endsWith('\r') ? conn.text.slice(0, -1) : conn.text;
            conn.text = '';
            if (conn.phase === Phase.Trailers) {
              if (line === '') finish(conn);
              break;
            }
            const sizeText = line.split(';', 1)[0]?.trim() ?? '';
            if (!/^[0-9a-fA-F]{1,12}$/.test(sizeText)) throw new H1Error('LMB_HTTP_PARSE', `bad chunk size: ${JSON.stringify(line.slice(0, 40))}`);
            const size = parseInt(sizeText, 16);
            if (size === 0) conn.phase = Phase.Trailers;
            else {
              conn.phase = Phase.ChunkData;
              conn.remaining = size;
            }
            break;
          }
          case Phase.ChunkData:
          case Phase.Length: {
            const take = Math.min(conn.remaining, n - off);
            conn.remaining -= take;
            const view = buf.subarray(off, off + take);
            off += take;
            const call: Call = conn.call;
            call.handler.onBody(view, atS);
            if (conn.call !== call) break; // aborted by the handler
            if (conn.remaining === 0) {
              if (conn.phase === Phase.Length) finish(conn);
              else conn.phase = Phase.ChunkEnd;
            }
            break;
          }
          case Phase.ChunkEnd: {
            const c = buf[off] as number;
            off++;
            if (c === 10) conn.phase = Phase.ChunkSize;
            else if (c !== 13) throw new H1Error('LMB_HTTP_PARSE', 'chunk data longer than its size');
            break;
          }
          case Phase.UntilClose: {
            conn.call.handler.onBody(buf.subarray(off, n), atS);
            off = n;
            break;
          }
          case Phase.Idle:
            throw new H1Error('LMB_HTTP_PARSE', 'bytes after the end of the response');
        }
      }
      if (off < n && conn.call === null && !conn.gone) {
        // The server sent more than the response it was asked for.
        conn.keepAlive = false;
        unidle(conn);
        conn.socket.destroy();
      }
    } catch (err) {
      fail(conn, err as Error);
    }
  };

  const start = (conn: Conn, call: Call): void => {
    call.conn = conn;
    conn.call = call;
    conn.phase = Phase.Head;
    conn.text = '';
    conn.answered = false;
    conn.keepAlive = true;
    conn.socket.write(call.wire);
  };

  /** A free connection for the next queued call, or a new one while under the cap. */
  const pump = (): void => {
    while (queue.length > 0) {
      let conn: Conn | undefined;
      const nowMs = performance.now();
      // The most recently used first, so the load runs on as few connections as it needs.
      while ((queue[0] as Call).fresh === false && (conn = idle.pop()) !== undefined) {
        if (!conn.gone && conn.keepAlive && nowMs - conn.idleSinceMs < conn.idleLimitMs) break;
        conn.socket.destroy();
        conn = undefined;
      }
      if (conn === undefined) {
        if (conns.size - idle.length >= cap || closing !== null) return;
        conn = open();
      }
      start(conn, queue.shift() as Call);
    }
  };

  return {
    request(method, path, headers, body, handler) {
      const wire = `${method} ${path} HTTP/1.1\r\nhost: ${hostHeader}\r\n${headers}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const call: Call = {
        wire,
        handler,
        conn: null,
        done: false,
        retried: false,
        fresh: false,
        abort(reason) {
          if (call.done) return;
          if (call.conn === null) {
            const at = queue.indexOf(call);
            if (at >= 0) queue.splice(at, 1);
            call.done = true;
            handler.onError(reason);
            return;
          }
          if (call.conn.call === call) fail(call.conn, reason);
        },
      };
      if (closing !== null) {
        call.done = true;
        queueMicrotask(() => handler.onError(new H1Error('LMB_HTTP_CLOSED', 'the connection pool is closed')));
        return call;
      }
      queue.push(call);
      pump();
      return call;
    },
    async preconnect(n) {
      const opening: Promise<void>[] = [];
      for (let k = conns.size; k < Math.min(n, cap); k++) {
        const conn = open();
        opening.push(
          new Promise<void>((resolve) => {
            conn.socket.once(secure ? 'secureConnect' : 'connect', () => resolve());
            conn.socket.once('close', () => resolve());
          }).then(() => {
            if (conn.gone || conn.call !== null) return;
            conn.idleSinceMs = performance.now();
            idle.push(conn);
            pump();
          }),
        );
      }
      await Promise.all(opening);
    },
    close() {
      clearInterval(sweep);
      return new Promise<void>((resolve) => {
        closing = resolve;
        for (const conn of [...idle]) conn.socket.destroy();
        idle.length = 0;
        for (const call of queue.splice(0)) call.abort(new H1Error('LMB_HTTP_CLOSED', 'the connection pool is closed'));
        if (conns.size === 0) resolve();
      });
    },
    destroy() {
      clearInterval(sweep);
      closing ??= () => undefined;
      for (const call of queue.splice(0)) call.abort(new H1Error('LMB_HTTP_CLOSED', 'the connection pool is closed'));
      for (const conn of [...conns]) fail(conn, new H1Error('LMB_HTTP_CLOSED', 'the connection pool is closed'));
    },
  };
}
