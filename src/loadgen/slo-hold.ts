import type { BenchmarkResult, RequestRecord, ServerConfig, Slo, SloKey, Workload } from '../domain/index.js';
import { isSuccess, sloField } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { computeMetrics, percentileSorted } from '../metrics/index.js';
import { createRng } from '../util/rng.js';
import { requestBody, sendRequest, watchInFlight, type InFlight } from './client.js';
import { clockFrom, nowNs, startLagMonitor } from './clock.js';
import { connectTarget } from './connect.js';
import { promptRing } from './prompts.js';
import { sampleRequests, trafficStreams } from '../workload/sample.js';
import { controlStep, DEFAULT_CONTROLLER, draining, initialState, type ControlPhase, type ControllerSettings } from './rate-controller.js';
import { buildResult } from './result.js';
import { outputLengths, outputLengthsWarning } from './output-lengths.js';
import { startScraper } from './scrape.js';
import { metricsPathsOf } from './routes.js';
import { clientEvidence, serverEvidenceFromScrapes } from '../diagnose/evidence.js';
import { createH1Pool } from './http1.js';
import { watchServerGone } from './server-gone.js';
import type { Transport } from './transport.js';

/**
 * `lm-bench run --mode slo-hold`: an open loop whose Poisson arrival rate a feedback controller
 * (rate-controller.ts) sets every `periodS` from one latency percentile over the requests that
 * finished in the last `windowS`, until the rate has settled and held for a window (the answer) or
 * `durationS` runs out (no answer, said so), or the server goes away (requests in a row that find no
 * server, server-gone.ts: no answer, said so, the records kept). The in-flight cap follows Little's
 * law at the current rate with room to spare, so an overloaded server is not buried under a queue the
 * client keeps growing. One thread: the rates this mode finds are far below what one thread sends (bench/loadgen.md).
 */
export interface SloHoldOptions {
  readonly endpoint: string;
  readonly model?: string | undefined;
  readonly workload: Workload;
  readonly seed: number;
  /** The controlled percentile and its limit (ttft_p95_ms = 400). */
  readonly control: { readonly key: SloKey; readonly limitMs: number };
  /** Every SLO of the run, checked on the settled window's result. */
  readonly slo?: Slo | undefined;
  readonly durationS?: number | undefined;
  readonly windowS?: number | undefined;
  readonly periodS?: number | undefined;
  readonly startRps?: number | undefined;
  readonly timeoutMs?: number | undefined;
  readonly transport?: Partial<Transport> | undefined;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly onTarget?: ((line: string) => void) | undefined;
  readonly onTick?: ((p: RatePoint) => void) | undefined;
  readonly controller?: Partial<Omit<ControllerSettings, 'limitMs'>> | undefined;
  /** Knob values the server runs with, when known: the settled window's diagnosis reads them. */
  readonly knownConfig?: ServerConfig | undefined;
  /** Salts the prompts' words (`promptWriter`); the result records it. */
  readonly promptSalt?: string | undefined;
  /**
   * Called, and awaited, with what was measured when the run is stopped part-way (`signal` aborted, as
   * Ctrl-C does) after sending requests, just before `runSloHold` throws LMB_ERR_INTERRUPTED: the answer
   * is unreliable, its first reason says where it stopped, and its records are every request sent (those
   * cut short by the stop marked `aborted`). Minutes of load the server did are not lost to the throw.
   */
  readonly onStopped?: ((measured: SloHoldOutcome & { records: RequestRecord[] }, err: LmBenchError) => Promise<void> | void) | undefined;
}

export interface RatePoint {
  readonly t_s: number;
  /** The arrival rate during the period that just ended. */
  readonly offered_rps: number;
  /** Requests that finished successfully in that period, per second. */
  readonly achieved_rps: number;
  /** First tokens per second over the control window (the rate the server took requests in), when known. */
  readonly admitted_rps: number | null;
  /**
   * How the controller read the period: `judged` (the value moved the rate), `no_news` (too few new
   * observations since its last step: held), `draining` (over the aim while an earlier backlog drained:
   * held). A period with no value is `no_news` too.
   */
  readonly reading: 'judged' | 'no_news' | 'draining';
  /** The controlled percentile over the window, ms (null: too few requests yet). */
  readonly value_ms: number | null;
  readonly phase: ControlPhase;
  readonly in_flight: number;
}

export interface SloHoldOutcome {
  readonly mode: 'slo-hold';
  readonly controlled: { readonly key: SloKey; readonly limit_ms: number };
  /** The completion rate over the settled window; null when the answer is unreliable. */
  readonly max_sustainable_rps: number | null;
  readonly reliable: boolean;
  readonly unreliable_reasons: readonly string[];
  readonly settled_at_s: number | null;
  readonly window_s: { readonly from: number; readonly to: number };
  /** The metrics of the requests that finished in that window. */
  readonly result: BenchmarkResult;
  readonly rate_timeline: readonly RatePoint[];
}

const MIN_SAMPLES = 20;
/** Requests at the current rate a ramp step needs. */
const RAMP_SAMPLES = 5;
/** Bound on requests sent, whatever the rate and duration. */
const MAX_REQUESTS = 200_000;

/** The controlled value over records (vLLM's metric definitions), or null with too few of them. */
export function windowValue(records: readonly RequestRecord[], key: SloKey, minSamples = MIN_SAMPLES): number | null {
  const ok = records.filter(isSuccess);
  if (ok.length < minSamples) return null;
  const m = computeMetrics(ok) as unknown as Record<string, number>;
  const v = m[sloField(key).field];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * The controlled percentile as of `nowS`, over what was observed since `sinceS`. TTFT is observed
 * when the first token arrives, E2EL when the request ends, so the window does not wait for slow
 * requests to finish; and a request still waiting past the limit counts as a breach at its current
 * age (a censored observation). Without that, a server building a queue looks fine until its queue
 * drains: only the requests that got through are ever measured.
 */
export function observedValue(o: {
  readonly key: SloKey;
  readonly records: readonly RequestRecord[];
  readonly live: readonly { readonly sendS: number; readonly firstS: number | null }[];
  readonly nowS: number;
  readonly sinceS: number;
  readonly limitMs: number;
  readonly minSamples: number;
  /** Observations older than this many seconds are never used, however few the recent ones. */
  readonly horizonS: number;
  /** Requests sent before this were sent into a backlog since drained: their latencies are not the rate's. */
  readonly sentSinceS?: number;
}): number | null {
  const { metric, stat } = sloField(o.key);
  if (metric !== 'ttft' && metric !== 'e2el') {
    return windowValue(o.records.filter((r) => (r.done_time_s ?? r.send_time_s) >= o.sinceS), o.key, o.minSamples);
  }
  // Each observation with when it was made; the window is what was seen since `sinceS`, or the last
  // `minSamples` observations when that is more (at a low rate a short window holds too few), but
  // never one older than the horizon: a breach from a queue long drained says nothing of the rate now,
  // and too few recent observations is "cannot judge" (null), never a breach.
  const seen: { at: number; ms: number }[] = [];
  const sentSinceS = o.sentSinceS ?? Number.NEGATIVE_INFINITY;
  for (const r of o.records) {
    if (!isSuccess(r) || r.send_time_s < sentSinceS) continue;
    const first = r.chunk_times_s[0] as number;
    const at = metric === 'ttft' ? first : (r.done_time_s ?? first);
    seen.push({ at, ms: (at - r.send_time_s) * 1000 });
  }
  for (const f of o.live) {
    if (f.sendS < sentSinceS) continue;
    if (metric === 'ttft' && f.firstS !== null) {
      seen.push({ at: f.firstS, ms: (f.firstS - f.sendS) * 1000 });
      continue;
    }
    const ageMs = (o.nowS - f.sendS) * 1000;
    if (ageMs > o.limitMs) seen.push({ at: o.nowS, ms: ageMs });
  }
  const fresh = seen.filter((x) => x.at >= o.nowS - o.horizonS).sort((a, b) => a.at - b.at);
  const since = fresh.filter((x) => x.at >= o.sinceS);
  const values = (since.length >= o.minSamples ? since : fresh.slice(-o.minSamples)).map((x) => x.ms);
  if (values.length < o.minSamples) return null;
  values.sort((a, b) => a - b);
  if (stat === 'mean') return values.reduce((a, b) => a + b, 0) / values.length;
  return percentileSorted(values, Number(stat.slice(1)));
}

/**
 * How far back the controller may look and how many observations it needs, at `rateRps`: long enough
 * to expect MIN_SAMPLES at that rate, between the control window and three answer windows; and as many
 * observations as half of what that span is expected to hold, between RAMP_SAMPLES and MIN_SAMPLES.
 * A server that sustains under 1 req/s gives 20 observations only over half a minute: with a fixed
 * count the window would reach back to a queue long drained, and with a fixed span never fill.
 */
export function observationWindow(rateRps: number, controlWindowS: number, windowS: number, ramp: boolean): { horizonS: number; minSamples: number } {
  const horizonS = Math.min(3 * windowS, Math.max(controlWindowS, MIN_SAMPLES / Math.max(1e-6, rateRps)));
  if (ramp) return { horizonS, minSamples: RAMP_SAMPLES };
  return { horizonS, minSamples: Math.min(MIN_SAMPLES, Math.max(RAMP_SAMPLES, Math.floor(0.5 * rateRps * horizonS))) };
}

export async function runSloHold(opts: SloHoldOptions): Promise<SloHoldOutcome & { records: RequestRecord[] }> {
  const durationS = opts.durationS ?? 120;
  const windowS = opts.windowS ?? 10;
  const periodS = opts.periodS ?? 2;
  // The controller looks at a short recent window (a long one lags the rate it controls and makes the
  // loop oscillate); the answer is read over the longer `windowS` once settled.
  const controlWindowS = Math.min(windowS, 2 * periodS);
  const timeoutMs = opts.timeoutMs ?? 600_000;
  const cfg: ControllerSettings = { ...DEFAULT_CONTROLLER, ...opts.controller, limitMs: opts.control.limitMs };
  // A ring of request lengths drawn from the seed, reused with fresh indices (`promptRing`: each pass in words of its own).
  const specs = sampleRequests({ ...opts.workload, num_prompts: Math.min(4096, Math.max(256, opts.workload.num_prompts)) }, trafficStreams(opts.seed).requests);
  if (specs.length === 0) throw new LmBenchError('LMB_ERR_WORKLOAD_INVALID', 'the workload has no requests');
  const promptAt = promptRing(specs, opts.seed, opts.promptSalt);
  const { ep, transport, target, model, api } = await connectTarget({
    endpoint: opts.endpoint, model: opts.model, workload: opts.workload, timeoutMs, transport: opts.transport, env: opts.env,
    onTarget: opts.onTarget, signal: opts.signal, bounds: { prompts: MAX_REQUESTS, durationS },
  });
  const originNs = nowNs();
  const startEpochMs = Date.now();
  const nowS = clockFrom(originNs);
  const rng = createRng(opts.seed).fork('slo-hold-arrivals');
  const pool = createH1Pool({ origin: ep.origin, transport, connections: null, nowS });
  const lag = startLagMonitor();
  const inFlightSet = new Set<InFlight>();
  // Sending stops when the answer is in; requests already in flight finish (within their time-out),
  // and only the caller's abort cuts them short.
  let stop = false;
  // A server that went away (every request refused) ends the run: the rest would only be failures.
  const goneWatch = watchServerGone();
  const stopped = (): boolean => stop || opts.signal?.aborted === true || goneWatch.gone() !== null;
  const unwatch = watchInFlight(inFlightSet, nowS, () => opts.signal?.aborted === true);
  const scraper = await startScraper(ep.origin, transport, undefined, metricsPathsOf(ep.path));
  const records: RequestRecord[] = [];
  const pending = new Set<Promise<void>>();
  let state = initialState(opts.startRps ?? 2);
  let cap = 64;
  let sent = 0;
  let settledAtS: number | null = null;
  const timeline: RatePoint[] = [];

  /** Requests in flight: when each left, and when its first token came (null: not yet). */
  const live = new Map<number, { sendS: number; firstS: number | null }>();
  /** `enqueueS`: when the send loop reached the arrival (past it, a wait for the in-flight cap, the server's doing). */
  const sendOne = (k: number, schedS: number, enqueueS: number): void => {
    const req = promptAt(k);
    const entry = { sendS: nowS(), firstS: null as number | null };
    live.set(k, entry);
    const meta = { requestId: `r${k}`, schedS, enqueueS, phase: 'measure' as const, workerId: 0, loopLagMs: lag.currentMs(), onFirstToken: (t: number) => (entry.firstS = t) };
    const p = sendRequest({ pool, target, nowS, inFlight: inFlightSet }, req, meta, requestBody(target, req)).then((rec) => {
      live.delete(k);
      records.push(rec);
      goneWatch.see(rec);
    });
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  let rateSetAtS = 0;
  let drainedAtS = Number.NEGATIVE_INFINITY;
  let lastStepAtS = 0;
  /** Sent and finished counts at each control tick of the walk (the backlog's growth is their difference). */
  const ticks: { t: number; sent: number; finished: number }[] = [];
  const backlog = (t: number): { grew: number; sent: number; meanInFlight: number } | null => {
    // Over the last windowS of walking (not the ramp: its overshoot is the past rate's backlog).
    const then = ticks.find((k) => k.t >= t - windowS - 1e-6);
    if (state.phase === 'ramp' || then === undefined || t - then.t < 2 * periodS) return null;
    const inFlightThen = then.sent - then.finished;
    const inFlightNow = sent - records.length;
    return { grew: inFlightNow - inFlightThen, sent: sent - then.sent, meanInFlight: (inFlightNow + inFlightThen) / 2 };
  };
  const control = (): boolean => {
    const t = nowS();
    const doneAt = (r: RequestRecord): number => r.done_time_s ?? r.send_time_s;
    const recent = records.filter((r) => doneAt(r) >= t - windowS);
    const inPeriod = recent.filter((r) => doneAt(r) >= t - periodS && isSuccess(r));
    // While ramping, judge only requests sent at the current rate (earlier ones were sent slower
    // and make the server look idler than it is); afterwards, the last windowS.
    const sinceS = state.phase === 'ramp' ? rateSetAtS : t - controlWindowS;
    const { horizonS, minSamples } = observationWindow(state.rateRps, controlWindowS, windowS, state.phase === 'ramp');
    const value = observedValue({ key: opts.control.key, records, live: [...live.values()], nowS: t, sinceS, limitMs: opts.control.limitMs, minSamples, horizonS, sentSinceS: drainedAtS });
    // First tokens per second over the control window: the rate the server takes requests in.
    // Over the walk, long enough to expect MIN_SAMPLES first tokens at the current rate (within the
    // horizon): at 0.5 req/s a few seconds hold two or three, and the cap on a step up, the saturation
    // test and the drain test would read noise.
    const walkSpanS = Math.max(Math.min(windowS / 2, t - rateSetAtS + controlWindowS), Math.min(horizonS, MIN_SAMPLES / Math.max(1e-6, state.rateRps)));
    const spanS = Math.min(t, state.phase === 'ramp' ? Math.min(controlWindowS, t - sinceS) : walkSpanS);
    // Each step of the walk also needs news: at a low rate the window holds the same few answers for
    // many periods, and stepping on each of them walks the rate five times on one piece of evidence.
    // One pass over the first tokens counts both.
    let firsts = 0;
    let news = 0;
    const countFirst = (atS: number): void => {
      if (atS >= t - spanS) firsts++;
      if (atS >= lastStepAtS) news++;
    };
    for (const r of records) if (isSuccess(r)) countFirst(r.chunk_times_s[0] as number);
    for (const f of live.values()) if (f.firstS !== null) countFirst(f.firstS);
    const admittedRps = spanS >= periodS ? firsts / spanS : null;
    const offered = state.rateRps;
    const failedNow = recent.filter((r) => !isSuccess(r)).length;
    const stale = state.phase !== 'ramp' && failedNow === 0 && news < Math.max(2, Math.ceil(minSamples / 4));
    const obs = { valueMs: stale ? null : value, failed: failedNow, admittedRps, admittedSpanS: spanS, backlog: backlog(t) };
    // While a backlog drains the rate is held; once it has drained, what was sent into it is not judged again.
    const drainNow = state.phase !== 'ramp' && value !== null && value > cfg.limitMs * (1 - cfg.margin) && draining(obs, state.rateRps, cfg);
    if (drainNow) drainedAtS = t;
    const reading: RatePoint['reading'] = obs.valueMs === null ? 'no_news' : drainNow ? 'draining' : 'judged';
    if (obs.valueMs !== null) lastStepAtS = t;
    state = controlStep(state, obs, cfg);
    if (state.phase === 'ramp') ticks.length = 0;
    else ticks.push({ t, sent, finished: records.length });
    if (state.rateRps !== offered) rateSetAtS = t;
    // Little's law at the new rate, with twice the window's mean time in the system and a floor.
    const ok = recent.filter(isSuccess);
    const meanS = ok.length === 0 ? 10 : ok.reduce((sum, r) => sum + (doneAt(r) - r.send_time_s), 0) / ok.length;
    cap = Math.min(10_000, Math.max(16, Math.ceil(state.rateRps * meanS * 2)));
    const point: RatePoint = { t_s: t, offered_rps: offered, achieved_rps: inPeriod.length / periodS, admitted_rps: admittedRps, reading, value_ms: value, phase: state.phase, in_flight: pending.size };
    timeline.push(point);
    opts.onTick?.(point);
    if (state.phase === 'settled') settledAtS ??= t;
    else settledAtS = null;
    // Done once settled and held for a window; or out of time.
    return (settledAtS !== null && t - settledAtS >= windowS) || t >= durationS;
  };

  let endS = 0;
  try {
    let nextControlS = periodS;
    let nextSendS = 0;
    let reachedS: number | null = null;
    // Set by a wait at the in-flight cap until the loop has caught up with the schedule: arrivals that
    // fell due meanwhile were held by the cap (the server's doing), so they count as reached on time.
    let capBlocked = false;
    for (;;) {
      if (stopped()) break;
      const t = nowS();
      if (t >= nextControlS) {
        nextControlS += periodS;
        if (control()) break;
        continue;
      }
      if (sent >= MAX_REQUESTS) {
        await new Promise((r) => setTimeout(r, (nextControlS - t) * 1000));
        continue;
      }
      if (t < nextSendS) {
        await new Promise((r) => setTimeout(r, Math.max(0, Math.min(nextSendS, nextControlS) - t) * 1000));
        continue;
      }
      reachedS ??= capBlocked ? nextSendS : Math.max(nextSendS, t);
      if (pending.size >= cap) {
        // At the cap: the arrival waits (its queueing shows as send − enqueue).
        capBlocked = true;
        await Promise.race([...pending, new Promise((r) => setTimeout(r, Math.max(1, (nextControlS - t) * 1000)))]);
        continue;
      }
      sendOne(sent++, nextSendS, reachedS);
      reachedS = null;
      // Poisson arrivals at the current rate: exponential gaps from the seed.
      nextSendS += -Math.log(1 - rng.next()) / state.rateRps;
      if (nextSendS < t - 1) nextSendS = t; // never a backlog of arrivals after a slow period
      if (nextSendS > t) capBlocked = false;
    }
    endS = nowS();
    stop = true;
  } finally {
    stop = true;
    await Promise.allSettled([...pending]);
    unwatch();
    lag.stop();
    await pool.close().catch(() => pool.destroy());
  }
  const scraped = await scraper.stop();
  const interrupted = opts.signal?.aborted === true ? new LmBenchError('LMB_ERR_INTERRUPTED', 'the run was aborted') : null;
  if (interrupted !== null && records.length === 0) throw interrupted;

  // The answer's window: the requests sent in the last windowS (by send time: completions come in
  // bursts when a server batches, arrivals do not), and the server as it was over that window.
  const from = Math.max(0, endS - windowS);
  // A request the stop cut short (`aborted`: only the caller aborts) is not an answer the server failed.
  const windowRecords = records.filter((r) => r.send_time_s >= from && r.send_time_s <= endS && r.error_kind !== 'aborted').sort((a, b) => a.send_time_s - b.send_time_s);
  const clockOffsetMs = nowS() * 1000 - performance.now();
  const windowScrapes = scraped.scrapes.filter((_, i) => {
    const atS = ((scraped.timesMs[i] as number) + clockOffsetMs) / 1000;
    return atS >= from && atS <= endS + 1;
  });
  const evidence = {
    server: serverEvidenceFromScrapes(windowScrapes, opts.knownConfig ?? {}),
    client: clientEvidence(windowRecords, { loopLagP99Ms: lag.p99Ms(), loopLagMaxMs: lag.maxMs(), cpuMs: null, wallMs: (endS - from) * 1000, threads: 1 }, true),
    metrics: scraped.metrics,
  };
  const result = buildResult(windowRecords, { workload: opts.workload, model, api, slo: opts.slo, serverMetrics: scraped.serverMetrics, maxLoopLagMs: lag.maxMs(), startEpochMs, evidence, known: opts.knownConfig, promptSalt: opts.promptSalt });
  const reasons: string[] = [];
  const gone = goneWatch.gone();
  if (interrupted !== null) reasons.push(`the run stopped at ${endS.toFixed(0)} s: ${interrupted.message}`);
  else if (gone !== null) reasons.push(`the server went away: the ${gone.requests} requests sent since ${gone.sinceS.toFixed(0)} s found no server (${gone.error}), so the run stopped at ${endS.toFixed(0)} s`);
  // (A stopped run's first reason says why it did not settle.)
  else if (settledAtS === null || endS - settledAtS < windowS) reasons.push(`the rate never settled within ${durationS} s (last ${timeline.at(-1)?.offered_rps.toFixed(2) ?? '?'} req/s, ${opts.control.key} ${timeline.at(-1)?.value_ms?.toFixed(0) ?? '?'} ms)`);
  const failed = windowRecords.filter((r) => !isSuccess(r)).length;
  if (failed > 0) reasons.push(`the server failed ${failed} of ${windowRecords.length} requests in the settled window`);
  // The client's health over the window, by the diagnosis's own test (event-loop lag p99, late sends).
  if (result.diagnosis?.bottleneck === 'client') reasons.push(`the client itself was the bottleneck, so the rate is its own, not the server's: ${result.diagnosis.summary}`);
  // A rate found on shorter (or longer) answers than the workload's is not the workload's rate.
  const lengths = outputLengths(windowRecords, (r) => specs[Number(r.request_id.slice(1)) % specs.length]?.outputTokens, opts.workload.ignore_eos);
  if (lengths !== null) reasons.push(outputLengthsWarning(lengths));
  const completed = windowRecords.filter(isSuccess).length;
  // Sustained means served as fast as sent: the completions over the settled span, drain excluded.
  const settledFrom = settledAtS ?? endS;
  const servedRps = records.filter((r) => isSuccess(r) && (r.done_time_s ?? 0) >= settledFrom && (r.done_time_s ?? 0) <= endS).length / Math.max(1e-9, endS - settledFrom);
  const sentRps = completed / Math.max(1e-9, endS - from);
  if (settledAtS !== null && servedRps < sentRps * 0.9) reasons.push(`the server completed ${servedRps.toFixed(2)} req/s while it was sent ${sentRps.toFixed(2)}: a queue was building, so the rate is not sustainable`);
  const outcome = {
    mode: 'slo-hold' as const,
    controlled: { key: opts.control.key, limit_ms: opts.control.limitMs },
    max_sustainable_rps: reasons.length === 0 ? Math.min(sentRps, servedRps) : null,
    reliable: reasons.length === 0,
    unreliable_reasons: reasons,
    settled_at_s: settledAtS,
    window_s: { from, to: endS },
    result,
    rate_timeline: timeline,
    records,
  };
  if (interrupted !== null) {
    await opts.onStopped?.(outcome, interrupted);
    throw interrupted;
  }
  return outcome;
}
