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
export interface H1Handler {
  /** The status line and headers arrived. */
  onStart(status: number): void;
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
  /** Idle connections older than this are not reused (below vLLM's 5 s keep-alive, reference §6.2). */
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

  const open = (): Conn => {
    const conn: Conn = { socket: null as unknown as Socket, call: null, phase: Phase.Idle, text: '', remaining: 0, keepAlive: true, idleSinceMs: 0, gone: false };
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
    socket.on('error', (err: Error) => fail(conn, err));
    socket.on('close', () => {
      clearTimeout(timer);
      gone(conn);
    });
    return conn;
  };

  const gone = (conn: Conn): void => {
    if (conn.gone) return;
    conn.gone = true;
    conns.delete(conn);
    const call = conn.call;
    if (call !== null) {
      if (conn.phase === Phase.UntilClose) finish(conn);
      else fail(conn, new H1Error('LMB_HTTP_CLOSED', conn.phase === Phase.Head ? 'the server closed the connection before answering' : 'the server closed the connection mid-response'));
    }
    const at = idle.indexOf(conn);
    if (at >= 0) idle.splice(at, 1);
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
    if (conn.keepAlive && !conn.gone && closing === null) {
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
  const parseHead = (conn: Conn, head: string): Phase => {
    const lineEnd = head.indexOf('\r\n');
    const statusLine = lineEnd < 0 ? head : head.slice(0, lineEnd);
    const m = /^HTTP\/1\.([01]) (\d{3})/.exec(statusLine);
    if (m === null) throw new H1Error('LMB_HTTP_PARSE', `not an HTTP/1.x response: ${JSON.stringify(statusLine.slice(0, 80))}`);
    const status = Number(m[2]);
    let length: number | null = null;
    let chunked = false;
    let keepAlive = m[1] === '1';
    for (const line of head.slice(lineEnd + 2).split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim().toLowerCase();
      if (name === 'content-length') {
        if (!/^\d+$/.test(value)) throw new H1Error('LMB_HTTP_PARSE', `bad Content-Length: ${JSON.stringify(value.slice(0, 40))}`);
        length = Number(value);
      } else if (name === 'transfer-encoding') {
        chunked = value.split(',').pop()?.trim() === 'chunked';
      } else if (name === 'connection') {
        if (value.includes('close')) keepAlive = false;
        else if (value.includes('keep-alive')) keepAlive = true;
      }
    }
    if (status >= 100 && status < 200) {
      conn.phase = Phase.Head; // an interim answer: the real one follows
      return conn.phase;
    }
    conn.keepAlive = keepAlive;
    conn.call?.handler.onStart(status);
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
            if (parseHead(conn, head) === Phase.Idle) finish(conn);
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
        const at = idle.indexOf(conn);
        if (at >= 0) idle.splice(at, 1);
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
    conn.keepAlive = true;
    conn.socket.write(call.wire);
  };

  /** A free connection for the next queued call, or a new one while under the cap. */
  const pump = (): void => {
    while (queue.length > 0) {
      let conn: Conn | undefined;
      const nowMs = performance.now();
      while ((conn = idle.pop()) !== undefined) {
        if (!conn.gone && nowMs - conn.idleSinceMs < keepAliveMs) break;
        conn.socket.destroy();
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
      return new Promise<void>((resolve) => {
        closing = resolve;
        for (const conn of [...idle]) conn.socket.destroy();
        idle.length = 0;
        for (const call of queue.splice(0)) call.abort(new H1Error('LMB_HTTP_CLOSED', 'the connection pool is closed'));
        if (conns.size === 0) resolve();
      });
    },
    destroy() {
      closing ??= () => undefined;
      for (const call of queue.splice(0)) call.abort(new H1Error('LMB_HTTP_CLOSED', 'the connection pool is closed'));
      for (const conn of [...conns]) fail(conn, new H1Error('LMB_HTTP_CLOSED', 'the connection pool is closed'));
    },
  };
}
