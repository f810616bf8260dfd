/**
 * The feedback law of `lm-bench run --mode slo-hold` (pure; docs/load-modes.md). Each control period
 * it sees the controlled percentile over a short window of recent requests and sets the next arrival
 * rate:
 *
 * - ramp: ×`rampFactor` per period while the percentile is under half the aim and the server admits
 *   what it is offered (slow start: the order of magnitude in a few steps). The first breach goes back
 *   to the last rate that held and starts tracking there.
 * - track: an up/down walk on the log of the rate whose step halves at each reversal of direction,
 *   from `initialStep` down to `minStep` — a stochastic approximation of the rate at which the
 *   percentile equals the aim. A server's latency is flat until its batch is full and then rises
 *   without bound (the queue's relaxation time diverges near capacity), so a proportional law on the
 *   latency either crawls or oscillates; shrinking steps converge whatever the slope, and the noise of
 *   a short window only makes the walk reverse sooner. Steps up never pass `maxUp` × the rate the
 *   server admitted (first tokens per second).
 * - settled: the step is down to `minStep` and the last `settlePeriods` windows were at or under the
 *   limit without saturation. The walk keeps running; a breach of the limit unsettles it.
 *
 * The aim is (1 − margin) × the limit, so noise around the settled point stays inside the SLO.
 */
export interface ControllerSettings {
  readonly limitMs: number;
  readonly margin: number;
  readonly rampFactor: number;
  readonly initialStep: number;
  readonly minStep: number;
  readonly maxUp: number;
  readonly settlePeriods: number;
  /** Admitted below this fraction of the offered rate (or a backlog grown by more than the rest) counts as saturation. */
  readonly saturation: number;
  readonly minRps: number;
  readonly maxRps: number;
  /**
   * A breach while the server admits more than this × the offered rate is a backlog from an earlier,
   * higher rate draining: the rate is held, not cut again (cutting on every period of a drain winds
   * the rate down to its floor while the server works through a queue the cuts cannot shorten).
   */
  readonly drainFactor: number;
}

export const DEFAULT_CONTROLLER: Omit<ControllerSettings, 'limitMs'> = {
  margin: 0.1,
  rampFactor: 2,
  initialStep: 0.2,
  minStep: 0.025,
  maxUp: 1.15,
  settlePeriods: 3,
  saturation: 0.9,
  minRps: 0.05,
  maxRps: 100_000,
  drainFactor: 1.25,
};

export type ControlPhase = 'ramp' | 'track' | 'settled';

export interface ControlState {
  readonly phase: ControlPhase;
  readonly rateRps: number;
  /** The walk's step on the log of the rate (track and settled). */
  readonly step: number;
  /** The direction of the last step: +1 up, −1 down, 0 none yet. */
  readonly lastDir: -1 | 0 | 1;
  /** Windows in a row at or under the limit. */
  readonly held: number;
}

export interface Observation {
  /** The controlled percentile over the window, ms; null when the window has too few requests. */
  readonly valueMs: number | null;
  /**
   * The rate at which the server took requests in (first tokens per second) over the window, when
   * known. An increase never goes past `maxUp` × this: a server's latency stays flat until its batch
   * is full and then jumps, so the latency alone would let the rate run past what the server admits.
   */
  readonly admittedRps?: number | null;
  /**
   * The span `admittedRps` was counted over, s. With it, "admits less than it is offered" must stand
   * out of the count's Poisson noise (two standard deviations): at 0.5 req/s a few seconds hold two or
   * three first tokens, and a bare ratio would call the server saturated half the time.
   */
  readonly admittedSpanS?: number | null;
  /** Requests that failed in the window. */
  readonly failed: number;
  /**
   * How the requests in the system changed over the last stretch of steady walking: `grew` (in flight
   * now − then), of `sent` sent in that stretch, with `meanInFlight`. A server can take requests in as
   * fast as it is offered them (its batch grows) while finishing fewer: then first tokens and TTFT look
   * fine and only the growing backlog says the rate is past what it sustains.
   */
  readonly backlog?: { readonly grew: number; readonly sent: number; readonly meanInFlight: number } | null;
}

export function initialState(startRps: number): ControlState {
  return { phase: 'ramp', rateRps: startRps, step: 0, lastDir: 0, held: 0 };
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/** The server takes requests in well over the offered rate without failing them: an earlier backlog draining. */
export function draining(obs: Observation, rateRps: number, cfg: ControllerSettings): boolean {
  const admitted = obs.admittedRps ?? null;
  return obs.failed === 0 && admitted !== null && admitted > rateRps * cfg.drainFactor;
}

export function controlStep(s: ControlState, obs: Observation, cfg: ControllerSettings): ControlState {
  const bound = (r: number): number => clamp(r, cfg.minRps, cfg.maxRps);
  const aim = cfg.limitMs * (1 - cfg.margin);
  const admitted = obs.admittedRps ?? null;
  // Errors mean the server is past what it takes (or refusing): a breach.
  const value = obs.failed > 0 ? Number.POSITIVE_INFINITY : obs.valueMs;
  // Too few requests finished in the window to say anything: hold (the next periods fill it).
  if (value === null) return s;
  if (s.phase === 'ramp') {
    if (value < aim / 2 && (admitted === null || admitted >= s.rateRps * 0.5)) return { ...s, rateRps: bound(s.rateRps * cfg.rampFactor) };
    // The first sign of load: back to the last ramp rate that held, and walk from there.
    if (value > aim) return { phase: 'track', rateRps: bound(s.rateRps / cfg.rampFactor), step: cfg.initialStep, lastDir: -1, held: 0 };
    return { phase: 'track', rateRps: s.rateRps, step: cfg.initialStep, lastDir: 0, held: value <= cfg.limitMs ? 1 : 0 };
  }
  // Latency under the aim but the server admitting clearly less than it is offered, or finishing
  // clearly less than it admits (its backlog grew by more than the same share of what was sent, and by
  // more than three standard deviations of a steady in-flight count, √mean for Poisson traffic): a
  // queue is building that the window's latency does not show yet. That is a breach too.
  const b = obs.backlog ?? null;
  const backlogGrew = b !== null && b.grew > Math.max((1 - cfg.saturation) * b.sent, 3 * Math.sqrt(Math.max(1, b.meanInFlight)));
  const spanS = obs.admittedSpanS ?? null;
  const expected = spanS === null ? null : s.rateRps * spanS;
  const admittedShort =
    admitted !== null && (expected === null || spanS === null ? admitted < s.rateRps * cfg.saturation : admitted * spanS < cfg.saturation * expected - 2 * Math.sqrt(expected));
  const saturated = admittedShort || backlogGrew;
  const dir: -1 | 1 = value > aim || saturated ? -1 : 1;
  if (dir < 0 && draining(obs, s.rateRps, cfg)) return { ...s, held: 0 };
  const step = s.lastDir !== 0 && dir !== s.lastDir ? Math.max(cfg.minStep, s.step / 2) : s.step;
  let rateRps = s.rateRps * (1 + step) ** dir;
  if (dir > 0 && admitted !== null) rateRps = Math.max(s.rateRps, Math.min(rateRps, admitted * cfg.maxUp));
  // Once settled, only the limit (or a failure) unsettles: the backlog near capacity is noisy (its
  // variance diverges there), so while settled it steers the walk but the answer's own check, served
  // against sent over the whole settled window (slo-hold.ts), judges it over a longer span.
  const held = value <= cfg.limitMs && (!saturated || s.phase === 'settled') ? s.held + 1 : 0;
  const settled = step <= cfg.minStep && held >= cfg.settlePeriods;
  return { phase: settled ? 'settled' : 'track', rateRps: bound(rateRps), step, lastDir: dir, held };
}
