import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { createH1Pool, type H1Handler, type H1Pool } from '../../src/loadgen/http1.js';
import { DEFAULT_TRANSPORT } from '../../src/loadgen/transport.js';

// The load's HTTP/1.1 client against a raw TCP server on loopback that answers each request with a
// scripted byte sequence, written in pieces with pauses so the client's reads split it where the test
// says (across the status line, headers, chunk sizes, chunk data and the CRLF after it).
type Script = (socket: Socket, n: number) => Promise<void> | void;

interface Raw {
  readonly origin: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Connections open now. */
  open(): number;
  close(): Promise<void>;
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Writes the pieces one at a time, `gapMs` apart (Nagle off), so each tends to arrive as its own read. */
async function pieces(socket: Socket, parts: readonly string[], gapMs = 3): Promise<void> {
  for (const p of parts) {
    if (socket.destroyed) return;
    socket.write(p);
    await pause(gapMs);
  }
}

let script: Script = () => undefined;
let raw: Raw;
before(async () => {
  let accepted = 0;
  const live = new Set<Socket>();
  let requestNo = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    live.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => live.delete(socket));
    socket.on('error', () => socket.destroy());
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const len = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        buf = buf.slice(end + 4 + len);
        void script(socket, requestNo++);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  raw = {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => accepted,
    open: () => live.size,
    close: () => {
      for (const s of live) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
});
after(() => raw.close());

interface Outcome {
  status: number | null;
  body: string;
  reads: number;
  error: (Error & { code?: string }) | null;
}

function send(pool: H1Pool, path = '/x', body = '{}'): { done: Promise<Outcome>; abort: (e: Error) => void } {
  const out: Outcome = { status: null, body: '', reads: 0, error: null };
  let abort: (e: Error) => void = () => undefined;
  const done = new Promise<Outcome>((resolve) => {
    const handler: H1Handler = {
      onStart: (s) => (out.status = s),
      onBody: (b) => {
        out.body += b.toString('utf8');
        out.reads++;
      },
      onEnd: () => resolve(out),
      onError: (e) => {
        out.error = e;
        resolve(out);
      },
    };
    const call = pool.request('POST', path, 'content-type: application/json\r\n', body, handler);
    abort = (e) => call.abort(e);
  });
  return { done, abort };
}

const newPool = (connections: number | null = null, keepAliveMs?: number): H1Pool =>
  createH1Pool({ origin: raw.origin, transport: DEFAULT_TRANSPORT, connections, nowS: () => performance.now() / 1000, ...(keepAliveMs === undefined ? {} : { keepAliveMs }) });

const CHUNKED = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n';

test('a chunked body split inside its status line, headers, sizes, data and CRLFs is reassembled exactly', async () => {
  script = (s) => pieces(s, ['HTT', 'P/1.1 200 OK\r\ntransfer-enc', 'oding: chunked\r', '\n\r', '\n5\r', '\nhel', 'lo\r', '\n', '1;ext=1\r\n', '-', '\r\n6\r\nworld!\r\n0', '\r\n', 'x-trailer: 1\r\n', '\r\n']);
  const pool = newPool();
  try {
    const out = await send(pool).done;
    assert.equal(out.error, null);
    assert.equal(out.status, 200);
    assert.equal(out.body, 'hello-world!');
    assert.ok(out.reads >= 3, `body came in ${out.reads} reads`);
  } finally {
    await pool.close();
  }
});

test('Content-Length and close-delimited bodies end where they should; 1xx answers are skipped', async () => {
  const pool = newPool();
  try {
    script = (s) => pieces(s, ['HTTP/1.1 404 Not Found\r\ncontent-length: 11\r\n\r\n{"de', 'tail":1}']);
    assert.deepEqual(await send(pool).done, { status: 404, body: '{"detail":1}'.slice(0, 11), reads: 2, error: null });
    script = (s) => pieces(s, ['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok']);
    const cont = await send(pool).done;
    assert.equal(cont.status, 200);
    assert.equal(cont.body, 'ok');
    script = async (s) => {
      await pieces(s, ['HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil ', 'the end']);
      s.end();
    };
    const closeDelimited = await send(pool).done;
    assert.equal(closeDelimited.error, null);
    assert.equal(closeDelimited.body, 'until the end');
  } finally {
    await pool.close();
  }
});

test('connections are kept alive and reused, closed on "connection: close", and never more than the cap', async () => {
  const pool = newPool(2);
  const before0 = raw.connections();
  try {
    script = (s) => pieces(s, [CHUNKED, '2\r\nok\r\n0\r\n\r\n'], 10);
    const first = await Promise.all(Array.from({ length: 6 }, () => send(pool).done));
    assert.ok(first.every((o) => o.error === null && o.body === 'ok'));
    assert.equal(raw.connections() - before0, 2, 'six requests, two at a time, on two connections');
    script = (s) => pieces(s, ['HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok']);
    await send(pool).done;
    await pause(20);
    assert.equal(raw.open(), 1, 'the connection the server asked to close is closed');
    script = (s) => pieces(s, [CHUNKED, '2\r\nok\r\n0\r\n\r\n']);
    await Promise.all([send(pool).done, send(pool).done]);
    assert.equal(raw.connections() - before0, 3);
  } finally {
    await pool.close();
  }
  await pause(20);
  assert.equal(raw.open(), 0, 'close() leaves no connection open');
});

test('an idle connection past the keep-alive limit, or one the server closed, is not reused', async () => {
  const pool = newPool(null, 40);
  const before0 = raw.connections();
  try {
    script = (s) => pieces(s, ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok']);
    await send(pool).done;
    await pause(80);
    assert.equal((await send(pool).done).error, null);
    assert.equal(raw.connections() - before0, 2, 'the stale connection was replaced');
    script = (s, n) => {
      s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      if (n % 2 === 0) setTimeout(() => s.destroy(), 5); // the server drops it while idle
    };
    for (let k = 0; k < 4; k++) {
      const out = await send(pool).done;
      assert.equal(out.error, null, `request ${k}: ${out.error?.message}`);
      await pause(20);
    }
  } finally {
    await pool.close();
  }
});

test('bad framing, a server that hangs up mid-answer, and an abort each end the request with a coded error', async () => {
  const pool = newPool();
  try {
    script = (s) => pieces(s, ['SSH-2.0-OpenSSH\r\n\r\n']);
    assert.equal((await send(pool).done).error?.code, 'LMB_HTTP_PARSE');
    script = (s) => pieces(s, [`${CHUNKED}zz\r\n`]);
    assert.equal((await send(pool).done).error?.code, 'LMB_HTTP_PARSE');
    script = (s) => pieces(s, [`${CHUNKED}2\r\nokX\r\n0\r\n\r\n`]);
    assert.equal((await send(pool).done).error?.code, 'LMB_HTTP_PARSE');
    script = (s) => pieces(s, ['HTTP/1.1 200 OK\r\ncontent-length: 1x\r\n\r\n']);
    assert.equal((await send(pool).done).error?.code, 'LMB_HTTP_PARSE');
    script = async (s) => {
      await pieces(s, [`${CHUNKED}2\r\nok\r\n`]);
      s.destroy();
    };
    const cut = await send(pool).done;
    assert.equal(cut.error?.code, 'LMB_HTTP_CLOSED');
    assert.equal(cut.body, 'ok', 'what arrived before the cut was delivered');
    script = (s) => pieces(s, [CHUNKED, '2\r\nok\r\n']); // and then nothing
    const hung = send(pool);
    const reason = new Error('deadline');
    setTimeout(() => hung.abort(reason), 30);
    assert.equal((await hung.done).error, reason);
    await pause(20);
    assert.equal(raw.open(), 0, 'every failed request closed its connection');
  } finally {
    await pool.close();
  }
});

test('streams on many connections of one pool share its read buffer without mixing their bytes', async () => {
  script = (s, n) => pieces(s, [CHUNKED, ...Array.from({ length: 20 }, (_, k) => `${(`req${n}-tok${k};`).length.toString(16)}\r\nreq${n}-tok${k};\r\n`), '0\r\n\r\n'], 1);
  const pool = newPool(16);
  try {
    const outs = await Promise.all(Array.from({ length: 48 }, () => send(pool).done));
    for (const o of outs) {
      assert.equal(o.error, null);
      const n = /^req(\d+)-/.exec(o.body)?.[1];
      assert.equal(o.body, Array.from({ length: 20 }, (_, k) => `req${n}-tok${k};`).join(''));
    }
    assert.equal(new Set(outs.map((o) => o.body)).size, 48);
  } finally {
    await pool.close();
  }
});

test('preconnect opens the connections before any request; a refused port fails the request, not the pool', async () => {
  const pool = newPool(8);
  const before0 = raw.connections();
  await pool.preconnect(5);
  await pause(20); // the server accepts them on its own turn of the event loop
  assert.equal(raw.connections() - before0, 5);
  script = (s) => pieces(s, ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok']);
  await Promise.all(Array.from({ length: 5 }, () => send(pool).done));
  assert.equal(raw.connections() - before0, 5, 'the requests used the open connections');
  await pool.close();

  const dead = createServer();
  await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
  const port = (dead.address() as AddressInfo).port;
  await new Promise<void>((r) => dead.close(() => r()));
  const refused = createH1Pool({ origin: `http://127.0.0.1:${port}`, transport: DEFAULT_TRANSPORT, connections: null, nowS: () => 0 });
  const out = await send(refused).done;
  assert.equal(out.error?.code, 'ECONNREFUSED');
  await refused.close();
});

test('a reused connection closed before any byte of the answer sends the request again, once, on a new connection', async () => {
  const pool = newPool();
  const before0 = raw.connections();
  try {
    // Every answer says keep-alive, then the server hangs up on the next request without a word.
    script = (s, n) => {
      if (n % 2 === 0) s.write('HTTP/1.1 200 OK\r\nkeep-alive: timeout=5\r\ncontent-length: 2\r\n\r\nok');
      else s.destroy();
    };
    assert.equal((await send(pool).done).error, null);
    // Sent on the kept-alive connection, dropped unanswered, sent again on a fresh one and answered.
    const again = await send(pool).done;
    assert.equal(again.error, null, again.error?.message);
    assert.equal(again.body, 'ok');
    assert.equal(raw.connections() - before0, 2);
    // A fresh connection that closes unanswered is a failure: nothing says it was not processed.
    script = (s) => {
      s.destroy();
    };
    const fresh = newPool();
    const out = await send(fresh).done;
    assert.equal(out.error?.code, 'LMB_HTTP_CLOSED');
    await fresh.close();
    // And a retried request that meets a close again fails rather than looping.
    const twice = newPool();
    const n0 = raw.connections();
    script = (() => {
      let k = 0;
      return (s: Socket): void => {
        if (k++ === 0) s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
        else s.destroy();
      };
    })();
    assert.equal((await send(twice).done).error, null);
    assert.equal((await send(twice).done).error?.code, 'LMB_HTTP_CLOSED');
    assert.equal(raw.connections() - n0, 2, 'one retry, no more');
    await twice.close();
  } finally {
    await pool.close();
  }
});

test("the server's Keep-Alive limits are honoured: max= requests per connection, timeout= idle", async () => {
  const pool = newPool();
  const before0 = raw.connections();
  try {
    // max=N: N more requests on this connection (Apache counts down); max=0: none, so a new one each time.
    script = (s) => void s.write('HTTP/1.1 200 OK\r\nkeep-alive: timeout=5, max=0\r\ncontent-length: 2\r\n\r\nok');
    for (let k = 0; k < 3; k++) assert.equal((await send(pool).done).error, null);
    assert.equal(raw.connections() - before0, 3);
    // timeout=1 (less a second's margin: 0): the idle connection is closed, not kept for the next request.
    script = (s) => void s.write('HTTP/1.1 200 OK\r\nkeep-alive: timeout=1\r\ncontent-length: 2\r\n\r\nok');
    const n0 = raw.connections();
    await send(pool).done;
    await pause(300);
    assert.equal(raw.open(), 0, 'the sweep closed the connection past the server’s idle limit');
    await send(pool).done;
    assert.equal(raw.connections() - n0, 2);
  } finally {
    await pool.close();
  }
});
