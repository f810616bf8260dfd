import type { Saturation, Workload } from '../domain/index.js';
import { leastSquares } from './stats.js';

/**
 * Whether an open-loop run kept up with its arrivals (pure), from each request's arrival, first-token
 * and finish times: the simulator's runs (sim/saturation.ts) and the load runner's against a real
 * server (loadgen/result.ts) are judged by the same test. A server offered more than it
 * sustains has a queue that grows for as long as the arrivals go on: its latency percentiles then
 * measure how long the run was, not the server, and must not be read as a steady state.
 *
 * The test is on the **waiting backlog**, requests that have arrived (their intended send time, so a
 * client-side queue behind a concurrency cap counts too) but have no first token yet, sampled at
 * `SAMPLES` instants over the second half of the sending span (the first half holds the batch filling
 * up). Its least-squares slope is how fast the backlog grows. The run is saturated when that slope is
 *
 * 1. at least `REL_GROWTH` (5%) of the arrival rate in that half: the server admits under ~95% of what it
 *    is offered, so the rate is past what it sustains, not a queue that a Poisson clump left behind; and
 * 2. larger than noise, or the server's pace under half the arrivals (`SUSTAIN_SHARE`, the
 *    `sustainedRps` below: the two agree where an overloaded backlog is lumpy or its own size raised the
 *    √mean bar). Larger than noise: the backlog's fitted rise over the half exceeds `MIN_GROWTH` requests, `NOISE_Z`
 *    standard deviations of a steady backlog of that mean size (√(1 + mean) for Poisson-like traffic,
 *    the rule the rate controller applies to a real server, src/loadgen/rate-controller.ts), and
 *    `NOISE_Z` times the samples' own spread about the fitted line. Near capacity a queue that keeps up
 *    swings by more than √mean (a prefill-heavy 70B at 90% of its burst throughput rose by 7 requests
 *    over 40 s with a spread of 2.5, and kept up over the next seeds); a queue that does not keep up
 *    rises along its line, with little spread about it.
 *
 * Checked on catalog cases (`scripts/saturation-check.ts`, docs/sim-predict.md "Saturated runs": 8B
 * and Qwen3-14B on an H100, Mixtral on 2, 70B on 4; six seeds each): no run up to 1.7 times the
 * throughput of a 600-request burst is flagged (that burst is not the servers' capacity: Mixtral and
 * the 70B sustain twice it), every one at 3 times it is; Qwen3-14B's code runs that fall up to 27% behind
 * inside their batch, which does not turn over within the run, are undecided where their pace is under
 * 0.9 of the arrivals (15 of 24) and read as kept up at 0.91–0.98. The 8B case of issue 28 (1,035-token prompts, 1,448-token answers,
 * max_num_seqs 128 on one H100) is flagged at 12 req/s, where it sustains about 4 req/s (at the 4 req/s it keeps up,
 * with room on a current vLLM and just on 0.12: docs/sim-predict.md).
 *
 * The waiting backlog first, not the in-flight count (arrived − completed): in-flight grows in every run
 * for as long as the batch fills (about one end-to-end latency, which is 30 s for 1,500-token answers),
 * so until the batch has turned over it cannot tell a server filling its batch from one falling behind;
 * the waiting backlog of a server that keeps up stays near zero throughout. A server that falls behind
 * without a queue (its batch grows past what it finishes, below max_num_seqs and the KV cache's limit)
 * is caught by the in-flight count once the batch has turned over (`fallsBehindInBatch`); a run too
 * short for that, with the same signs, is `undecided` (an 8B on one H100 sent 300 requests of
 * 1,000/1,500 tokens at 20 req/s: nothing finishes while they arrive).
 *
 * Closed loops (a fixed number of users) cannot fall behind in this sense: callers judge open-loop runs
 * only. Bursts (everything sent at once: no rate to keep up with) and runs with fewer than
 * `MIN_REQUESTS` requests get null.
 */
export interface RunSaturation {
  readonly saturated: boolean;
  /**
   * Not saturated by any test, yet not shown to keep up either: the server's pace is under
   * `IN_BATCH_PACE` of its arrivals and the requests in the system grow above noise, but the run ended
   * before its batch turned over, so a batch still filling with long answers cannot be told from one
   * falling behind. A longer run decides it.
   */
  readonly undecided: boolean;
  /** Arrivals per second over the second half of the sending span. */
  readonly offeredRps: number;
  /**
   * Requests per second the server worked through from the middle of the sending until its waiting
   * queue emptied (or the last arrival, if later) and half its batch then had finished: the output
   * tokens it emitted per second then, ÷ the mean answer. For a saturated run, the rate it sustains; for
   * one that kept up, about the offered rate.
   */
  readonly sustainedRps: number;
  /** The waiting backlog's growth over the second half of the sending, requests/s (least squares). */
  readonly backlogGrowthRps: number;
  /** The second half of the sending span the test read, in run seconds. */
  readonly windowStartS: number;
  readonly windowEndS: number;
}

/** Samples of the backlog over the window. */
const SAMPLES = 64;
/** Growth, as a share of the arrival rate, below which the backlog is a queue the load left, not a trend. */
const REL_GROWTH = 0.05;
/** Growth over the window (requests) that noise alone does not give. */
const MIN_GROWTH = 5;
const NOISE_Z = 3;
/**
 * A backlog that grows (by more than `MIN_GROWTH`, at over `REL_GROWTH` of the arrivals) while the server
 * works through under this share of the arrival rate is saturated, whatever the noise bars say: a
 * 20 req/s run against max_num_seqs 4 (offered 14.8, sustained 4.4) rose by 16 over its half, under the
 * √(1 + mean) bar of 18 that its own overload had raised.
 */
const SUSTAIN_SHARE = 0.5;
/**
 * A server falling behind inside its batch works through under this share of its arrivals: the pace of
 * runs that kept up reads 0.96–1.14 of the offered rate on catalog cases (the pace is counted in output
 * tokens, and a run's answers are not all equally long).
 */
const IN_BATCH_PACE = 0.9;
/** Fewer requests than this say nothing about a trend. */
const MIN_REQUESTS = 20;

/** Entries of a sorted array ≤ x (binary search). */
function countAtMost(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One request of an open-loop run, as the test reads it (run seconds). */
export interface RequestTimes {
  /** When it was due to be sent (its arrival: a client-side queue behind a concurrency cap counts as waiting). */
  readonly arrivedS: number;
  /** Its first token; Infinity when the run ended before one. */
  readonly firstTokenS: number;
  /** Its last token. */
  readonly lastTokenS: number;
  /** Whether it finished (its last token is its end). */
  readonly finished: boolean;
  readonly outputTokens: number;
}

/** Output tokens emitted in [t0, t1]: each request's first token at its time, the rest spread evenly to its last. */
function tokensIn(requests: readonly RequestTimes[], t0: number, t1: number): number {
  let tokens = 0;
  for (const r of requests) {
    if (r.outputTokens === 0 || !Number.isFinite(r.firstTokenS)) continue;
    if (r.firstTokenS >= t0 && r.firstTokenS <= t1) tokens++;
    const span = r.lastTokenS - r.firstTokenS;
    if (span <= 0) continue;
    const overlap = Math.min(t1, r.lastTokenS) - Math.max(t0, r.firstTokenS);
    if (overlap > 0) tokens += (overlap / span) * (r.outputTokens - 1);
  }
  return tokens;
}

/** A workload's rate stages as [start, end) in run seconds, back to back from 0 (none without stages). */
export function stageSpansS(w: Pick<Workload, 'arrival'>): [number, number][] {
  if (w.arrival.kind !== 'poisson' || w.arrival.stages === undefined) return [];
  let t = 0;
  return w.arrival.stages.map((st) => {
    const span: [number, number] = [t, t + st.duration_s];
    t += st.duration_s;
    return span;
  });
}

/** The run's arrival, first-token and finish times, sorted, and its mean answer. */
interface Timeline {
  readonly requests: readonly RequestTimes[];
  readonly a: Float64Array;
  readonly f: Float64Array;
  readonly c: Float64Array;
  readonly meanOutput: number;
}

/** A count's trend over the window, judged by the tests of the module's comment. */
interface CountTrend {
  /** Its least-squares slope, per second. */
  readonly slope: number;
  /** It grows: at over `REL_GROWTH` of the arrivals, by more than `MIN_GROWTH` over the window. */
  readonly grows: boolean;
  /** Its rise clears both noise bars: `NOISE_Z` × √(1 + its mean) and `NOISE_Z` × its spread about the line. */
  readonly aboveNoise: boolean;
}

/**
 * How many of `into` (sorted times) have no matching `outOf` time yet, sampled at SAMPLES instants across
 * [tm, t1], and how it trends against `offeredRps` arrivals a second.
 */
function countTrend(into: Float64Array, outOf: Float64Array, window: { readonly tm: number; readonly t1: number }, offeredRps: number): CountTrend {
  const { tm, t1 } = window;
  const ts = new Float64Array(SAMPLES);
  const qs = new Float64Array(SAMPLES);
  for (let i = 0; i < SAMPLES; i++) {
    const t = tm + ((t1 - tm) * i) / (SAMPLES - 1);
    ts[i] = t;
    qs[i] = countAtMost(into, t) - countAtMost(outOf, t);
  }
  const { slope, mean, residualSd } = leastSquares(ts, qs);
  const growth = slope * (t1 - tm);
  return { slope, grows: slope > REL_GROWTH * offeredRps && growth > MIN_GROWTH, aboveNoise: growth > Math.max(NOISE_Z * Math.sqrt(1 + mean), NOISE_Z * residualSd) };
}

/**
 * The verdict on the sending window [tm, t1] (the second half of a span of arrivals): the waiting
 * backlog's trend over it, and the pace the server kept from tm until its queue emptied.
 */
function verdictIn(tl: Timeline, t0: number, tm: number, t1: number): RunSaturation {
  const { a, f, c, requests, meanOutput } = tl;
  const spanS = t1 - tm;
  const offeredRps = (countAtMost(a, t1) - countAtMost(a, tm)) / spanS;
  // The waiting backlog (arrived, no first token) across [tm, t1].
  const backlog = countTrend(a, f, { tm, t1 }, offeredRps);
  // The busy span: from the middle of the sending until the waiting queue is empty again and then
  // until half the requests then in flight have finished (for a saturated run, the span its batch sat
  // at or near its limit). Its output tokens per second, in requests (÷ the mean answer), are the
  // completions per second at that pace: counted as tokens, not completions, because a batch that took
  // 600 requests in at once finishes them all together seconds later, and completions in any span
  // shorter than that say nothing of the pace.
  const lastAdmitted = f[countAtMost(a, t1) - 1] ?? t1;
  const drained = Math.max(t1, Number.isFinite(lastAdmitted) ? lastAdmitted : t1);
  const doneThen = countAtMost(c, drained);
  const inFlight = countAtMost(a, drained) - doneThen;
  const s1 = Math.max(drained, c[Math.min(c.length - 1, doneThen + Math.ceil(inFlight / 2) - 1)] ?? drained);
  const sustainedRps = Number.isFinite(s1) && s1 > tm ? tokensIn(requests, tm, s1) / (s1 - tm) / meanOutput : 0;
  // Above noise, or (a lumpy backlog, or one whose overload lifts the √mean bar) with the server's pace
  // under half the arrivals: two signals that agree. A pace alone is no verdict: a short run of long
  // answers that keeps up finishes little before the arrivals stop, and its backlog stays near zero.
  const queued = backlog.grows && (backlog.aboveNoise || sustainedRps < SUSTAIN_SHARE * offeredRps);
  const inBatch = queued ? 'saturated' : fallsBehindInBatch(tl, { t0, tm, t1 }, { offeredRps, sustainedRps });
  return { saturated: inBatch === 'saturated', undecided: inBatch === 'undecided', offeredRps, sustainedRps, backlogGrowthRps: Math.max(0, backlog.slope), windowStartS: tm, windowEndS: t1 };
}

/**
 * A server that falls behind with room in its batch: the waiting backlog stays near zero while the
 * requests in the system (arrived, not finished) pile up in the running batch. Once the batch has
 * turned over (every request that arrived in the span's first quarter finished before the window),
 * a server that keeps up holds about rate × latency in the system, so that count levels off; one that
 * falls behind adds to it for as long as the arrivals go on. Saturated when the count grows over the
 * window by the waiting backlog's own tests (`REL_GROWTH` of the arrivals, above `MIN_GROWTH` and both
 * noise bars) and the server's pace is under `IN_BATCH_PACE` of the arrivals. Before the batch turns over
 * (a short run of long answers) the two cannot be told apart: the same signs then make the run
 * `undecided`, not one that kept up.
 */
function fallsBehindInBatch(tl: Timeline, span: { readonly t0: number; readonly tm: number; readonly t1: number }, pace: { readonly offeredRps: number; readonly sustainedRps: number }): 'saturated' | 'kept_up' | 'undecided' {
  const { a, c, requests } = tl;
  const { t0, tm, t1 } = span;
  const { offeredRps, sustainedRps } = pace;
  if (sustainedRps > IN_BATCH_PACE * offeredRps) return 'kept_up';
  // The requests in the system (arrived, not finished) across [tm, t1].
  const inSystem = countTrend(a, c, { tm, t1 }, offeredRps);
  if (!(inSystem.grows && inSystem.aboveNoise)) return 'kept_up';
  const quarter = t0 + (tm - t0) / 2;
  const early = requests.filter((r) => r.arrivedS >= t0 && r.arrivedS <= quarter);
  // Every one of them, not half: the count in the system levels off at rate × the mean latency, and a
  // long tail of answers (lognormal lengths) keeps it rising on a server with room long after the
  // typical request has finished.
  const turnedOver = early.length > 0 && early.every((r) => r.finished && r.lastTokenS <= tm);
  return turnedOver ? 'saturated' : 'undecided';
}

/**
 * The verdict on an open-loop run's requests: those the server had to keep up with, as the caller counts
 * them (the simulator leaves out the ones refused for their length; the load runner keeps the ones that
 * timed out or were shed, waiting for ever). `stageSpansS`: the run's rate stages as [start, end) in run seconds
 * (none: one rate throughout). With stages each is judged on the second half of its own arrivals as well
 * as the run on the second half of all of them, so a stage that fell behind is not hidden by a calmer
 * one after it (20 then 8 req/s: the backlog drains in the second stage); the verdict is the first stage
 * that fell behind, else the run's if it fell behind, else the first stage too short to tell, else the
 * run's. Null for runs of fewer than `MIN_REQUESTS` requests or no output.
 */
export function saturationOf(requests: readonly RequestTimes[], stageSpansS: readonly (readonly [number, number])[] = []): RunSaturation | null {
  if (requests.length < MIN_REQUESTS) return null;
  let outputTokens = 0;
  let answered = 0;
  for (const r of requests) {
    outputTokens += r.outputTokens;
    if (r.outputTokens > 0) answered++;
  }
  if (outputTokens === 0) return null;
  const tl: Timeline = {
    requests,
    a: Float64Array.from(requests, (r) => r.arrivedS).sort(),
    f: Float64Array.from(requests, (r) => (r.outputTokens > 0 ? r.firstTokenS : Number.POSITIVE_INFINITY)).sort(),
    c: Float64Array.from(requests, (r) => (r.finished ? r.lastTokenS : Number.POSITIVE_INFINITY)).sort(),
    // The answers the server gave: a request shed before its first token says nothing of their length.
    meanOutput: outputTokens / answered,
  };
  const t0 = tl.a[0] as number;
  const t1 = tl.a[tl.a.length - 1] as number;
  if (!(t1 > t0)) return null;
  const stages: RunSaturation[] = [];
  if (stageSpansS.length > 1) {
    for (const [start, end] of stageSpansS) {
      const first = countAtMost(tl.a, start - 1e-9);
      const last = countAtMost(tl.a, end - 1e-9) - 1;
      if (last - first + 1 < MIN_REQUESTS) continue;
      const s0 = tl.a[first] as number;
      const s1 = tl.a[last] as number;
      if (!(s1 > s0)) continue;
      stages.push(verdictIn(tl, s0, (s0 + s1) / 2, s1));
    }
  }
  const run = verdictIn(tl, t0, (t0 + t1) / 2, t1);
  // A stage that fell behind first, then the run's own verdict, then a stage too short to tell.
  return stages.find((v) => v.saturated) ?? (run.saturated ? run : (stages.find((v) => v.undecided) ?? run));
}

/** The result's `saturation` block (snake_case, as results are stored). */
export function saturationBlock(s: RunSaturation | null): Saturation | null {
  if (s === null) return null;
  return {
    saturated: s.saturated,
    ...(s.undecided ? { undecided: true } : {}),
    offered_rps: s.offeredRps,
    sustained_rps: s.sustainedRps,
    backlog_growth_rps: s.backlogGrowthRps,
    window_start_s: s.windowStartS,
    window_end_s: s.windowEndS,
  };
}
