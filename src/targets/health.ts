import { request } from 'undici';

/** One GET; true on HTTP 200. Never throws (a refused connection is simply "not yet"). */
export async function isHealthy(url: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const res = await request(url, { method: 'GET', headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

export type HealthWait = { readonly ok: true } | { readonly ok: false; readonly why: 'exited' | 'timeout' | 'aborted'; readonly exitCode?: number };

/**
 * Polls `url` until it answers 200, the process exits, the deadline passes or the signal aborts —
 * whichever comes first. An early exit is seen within one poll interval, not after a long health
 * timeout (vLLM's auto_tune used to wait out 10 minutes for a server that had already died).
 */
export async function waitForHealth(opts: {
  readonly url: string;
  readonly exited: Promise<number>;
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  readonly signal?: AbortSignal | undefined;
}): Promise<HealthWait> {
  let exitCode: number | undefined;
  void opts.exited.then((c) => {
    exitCode = c;
  });
  const deadline = Date.now() + opts.timeoutMs;
  const interval = opts.intervalMs ?? 200;
  for (;;) {
    if (exitCode !== undefined) return { ok: false, why: 'exited', exitCode };
    if (opts.signal?.aborted === true) return { ok: false, why: 'aborted' };
    if (await isHealthy(opts.url, Math.min(2000, interval * 5))) return { ok: true };
    if (exitCode !== undefined) return { ok: false, why: 'exited', exitCode };
    if (Date.now() >= deadline) return { ok: false, why: 'timeout' };
    await new Promise((r) => setTimeout(r, interval));
  }
}
