import type { RequestRecord } from '../domain/index.js';
import { requestBody, sendRequest, watchInFlight, type InFlight, type RequestTemplate } from './client.js';
import { clockFrom, startLagMonitor } from './clock.js';
import type { PreparedRequest } from './prompts.js';
import { createH1Pool } from './http1.js';
import type { Transport } from './transport.js';

/**
 * Drives streams on one thread (the main one, or a piscina worker: the spec is plain data). Closed
 * loop: `streams` loops each claim the next request from a counter shared by every thread (Atomics on
 * a SharedArrayBuffer), so several threads together keep exactly C in flight. Open loop: this thread's
 * share of the arrivals, each sent at its absolute intended time (no cumulative drift), queued behind
 * this thread's share of the concurrency cap; the queueing shows as send − sched.
 */
export const CTRL_NEXT = 0;
export const CTRL_STOP = 1;
export const CTRL_DONE = 2;
export const CTRL_FAILED = 3;
export const CTRL_SLOTS = 4;

export interface DriveSpec {
  readonly origin: string;
  readonly transport: Transport;
  readonly target: RequestTemplate;
  readonly workerId: number;
  readonly phase: RequestRecord['phase'];
  /** Closed loop: the whole list (claimed through ctrl). Open loop: this thread's share. */
  readonly requests: readonly PreparedRequest[];
  /** Open loop: the intended send time of each request of `requests`, seconds from origin. */
  readonly arrivalsS: readonly number[] | null;
  /** Closed loop: streams on this thread; open loop: this thread's in-flight cap (0 = none). */
  readonly streams: number;
  readonly originNs: string;
  /** Seconds from origin at which this phase starts. */
  readonly startS: number;
  /** Seconds from origin after which nothing new is sent. */
  readonly deadlineS: number;
  readonly ctrl: SharedArrayBuffer;
  /** Bodies serialized by the caller, one per request of `requests` (else drive serializes them). */
  readonly bodies?: readonly string[] | undefined;
}

export interface DriveResult {
  readonly records: RequestRecord[];
  readonly maxLoopLagMs: number;
  readonly p99LoopLagMs: number;
}

/** Connections an open loop opens before its first send (more open as requests in flight need them). */
export const OPEN_LOOP_WARM = 2;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Until `atS`, never before it (a trace's schedule is kept, not anticipated): a timer to within
 * WAKE_AHEAD_S (timers fire a millisecond or so late, never early), then turns of the event loop, each
 * letting I/O run, until the clock reaches it. The spin costs at most WAKE_AHEAD_S of CPU per send.
 */
const WAKE_AHEAD_S = 0.0015;
async function waitUntil(atS: number, nowS: () => number): Promise<void> {
  const wait = atS - nowS();
  if (wait > WAKE_AHEAD_S) await sleep((wait - WAKE_AHEAD_S) * 1000);
  while (nowS() < atS) await nextTurn();
}

export async function drive(spec: DriveSpec, signal?: AbortSignal): Promise<DriveResult> {
  const nowS = clockFrom(BigInt(spec.originNs));
  const ctrl = new Int32Array(spec.ctrl);
  const lag = startLagMonitor();
  const open = spec.arrivalsS !== null;
  const connections = open ? (spec.streams > 0 ? spec.streams : null) : spec.streams;
  const pool = createH1Pool({ origin: spec.origin, transport: spec.transport, connections, nowS });
  const stopped = (): boolean => Atomics.load(ctrl, CTRL_STOP) !== 0 || signal?.aborted === true;
  const inFlight = new Set<InFlight>();
  const unwatch = watchInFlight(inFlight, nowS, stopped);
  const records: RequestRecord[] = [];
  // Bodies are serialized before the clock starts, so a burst of sends costs only the sends.
  const bodies = new Map<number, string>();
  spec.requests.forEach((r, i) => bodies.set(r.index, spec.bodies?.[i] ?? requestBody(spec.target, r)));
  const one = async (req: PreparedRequest, schedS: number, enqueueS: number): Promise<void> => {
    const rec = await sendRequest({ pool, target: spec.target, nowS, inFlight }, req, {
      requestId: `${spec.phase === 'warmup' ? 'w' : 'r'}${req.index}`,
      schedS,
      enqueueS,
      phase: spec.phase,
      workerId: spec.workerId,
      loopLagMs: lag.currentMs(),
    }, bodies.get(req.index));
    records.push(rec);
    Atomics.add(ctrl, rec.error_kind === null ? CTRL_DONE : CTRL_FAILED, 1);
  };
  try {
    // Connections open before the clock starts, so the first wave does not time TCP (and TLS) set-up:
    // a closed loop's streams all send at once; an open loop gets a small warm pool and opens more as
    // requests in flight need them. Idle connections ahead of the load are not free: a server with a
    // thread per connection (llama.cpp) gives each one a thread until it times out, and real requests
    // queue behind them.
    await pool.preconnect(open ? Math.min(spec.requests.length, OPEN_LOOP_WARM, spec.streams > 0 ? spec.streams : OPEN_LOOP_WARM) : spec.streams);
    await sleep((spec.startS - nowS()) * 1000);
    if (!open) {
      const stream = async (): Promise<void> => {
        let freedS = Math.max(spec.startS, nowS());
        for (;;) {
          if (stopped() || nowS() >= spec.deadlineS) return;
          const i = Atomics.add(ctrl, CTRL_NEXT, 1);
          const req = spec.requests[i];
          if (req === undefined) return;
          await one(req, freedS, freedS);
          freedS = nowS();
        }
      };
      await Promise.all(Array.from({ length: spec.streams }, stream));
    } else {
      const arrivals = spec.arrivalsS;
      const cap = spec.streams > 0 ? spec.streams : Number.POSITIVE_INFINITY;
      let inFlight = 0;
      const waiters: (() => void)[] = [];
      const pending: Promise<void>[] = [];
      for (let k = 0; k < spec.requests.length; k++) {
        const schedS = arrivals[k] as number;
        await waitUntil(schedS, nowS);
        if (stopped() || schedS >= spec.deadlineS) break;
        const enqueueS = Math.max(schedS, nowS());
        while (inFlight >= cap) await new Promise<void>((r) => waiters.push(r));
        if (stopped()) break;
        inFlight++;
        pending.push(
          one(spec.requests[k] as PreparedRequest, schedS, enqueueS).then(() => {
            inFlight--;
            waiters.shift()?.();
          }),
        );
      }
      await Promise.all(pending);
    }
  } finally {
    unwatch();
    lag.stop();
    await pool.close().catch(() => pool.destroy());
  }
  return { records, maxLoopLagMs: lag.maxMs(), p99LoopLagMs: lag.p99Ms() };
}
