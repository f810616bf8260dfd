import { COARSE_CLOCK_FORMATS, stageRequestCount, type Arrival, type LengthDist, type RateStage, type Sessions, type TraceRequests, type Workload } from '../domain/index.js';
import { createRng, type Rng } from '../util/rng.js';
import { clockTickMs, spreadOverTick } from '../util/clock-tick.js';

/**
 * Pure sampling of a workload: the requests (lengths, shared-prefix group) and the arrival schedule.
 * The simulator and the load runner both draw from here, so a seed means the same traffic in both.
 */
export interface RequestSpec {
  readonly index: number;
  /** Unique prompt tokens after the shared prefix. */
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Shared-prefix group, or null for a request without one. */
  readonly prefixGroup: number | null;
  readonly prefixTokens: number;
  /** A trace request's prompt blocks (its whole prompt is `inputTokens`); absent for sampled requests. */
  readonly blocks?: PromptBlocks | undefined;
  /**
   * The prompt-pool entry this request re-sends (`prompt_pool`): requests with the same id send the
   * same prompt, word for word, so a prefix cache can serve it whole. Absent without a pool.
   */
  readonly promptId?: number | undefined;
}

/**
 * A prompt as a trace describes it: the ids of its blocks of `tokens` tokens each, in order. Equal
 * ids hold equal content, so two prompts share exactly as many leading tokens as their lists agree
 * on (the last block may be cut short by the prompt's length).
 */
export interface PromptBlocks {
  readonly ids: readonly number[];
  readonly tokens: number;
}

function clip(x: number, min: number, max: number | undefined): number {
  const r = Math.round(x);
  return Math.max(min, max === undefined ? r : Math.min(max, r));
}

/** Zipf over k = min … max with exponent s, by inverse CDF on a precomputed table. */
function zipfTable(d: Extract<LengthDist, { dist: 'zipf' }>): Float64Array {
  const n = d.max - d.min + 1;
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let i = 0; i < n; i++) {
    acc += (d.min + i) ** -d.s;
    cdf[i] = acc;
  }
  for (let i = 0; i < n; i++) cdf[i] = (cdf[i] as number) / acc;
  return cdf;
}

export function lengthSampler(d: LengthDist, rng: Rng): () => number {
  switch (d.dist) {
    case 'fixed':
      return () => d.value;
    case 'uniform':
      return () => d.min + rng.int(d.max - d.min + 1);
    case 'normal':
      return () => clip(d.mean + d.std * rng.normal(), d.min, d.max);
    case 'lognormal': {
      // Parameters of the underlying normal from the target mean and std of the lengths.
      const sigma2 = Math.log(1 + (d.std * d.std) / (d.mean * d.mean));
      const mu = Math.log(d.mean) - sigma2 / 2;
      const sigma = Math.sqrt(sigma2);
      return () => clip(Math.exp(mu + sigma * rng.normal()), d.min, d.max);
    }
    case 'zipf': {
      const cdf = zipfTable(d);
      return () => {
        const u = rng.next();
        let lo = 0;
        let hi = cdf.length - 1;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if ((cdf[mid] as number) < u) lo = mid + 1;
          else hi = mid;
        }
        return d.min + lo;
      };
    }
  }
}

/** A trace workload's requests, the first `num_prompts` of them, exactly as the trace has them. */
function traceRequests(w: Workload, data: TraceRequests): RequestSpec[] {
  const blockTokens = w.trace?.block_tokens;
  const out: RequestSpec[] = [];
  for (let i = 0; i < w.num_prompts; i++) {
    const ids = data.hash_ids?.[i];
    out.push({
      index: i,
      inputTokens: data.input_tokens[i] as number,
      outputTokens: data.output_tokens[i] as number,
      prefixGroup: null,
      prefixTokens: 0,
      ...(ids === undefined || blockTokens === undefined || ids.length === 0 ? {} : { blocks: { ids, tokens: blockTokens } }),
    });
  }
  return out;
}

/**
 * The requests of a workload: a trace's own when the workload carries them (w.trace.data), else
 * drawn from its distributions.
 */
export function sampleRequests(w: Workload, rng: Rng): RequestSpec[] {
  const data = w.trace?.data;
  if (data !== undefined) return traceRequests(w, data);
  const inLen = lengthSampler(w.input_len, rng.fork('input'));
  const outLen = lengthSampler(w.output_len, rng.fork('output'));
  const prefixRng = rng.fork('prefix');
  const sp = w.shared_prefix;
  const pool = w.prompt_pool?.size;
  if (w.sessions !== undefined) return sessionRequests(w, w.sessions, inLen, outLen, prefixRng);
  const out: RequestSpec[] = [];
  for (let i = 0; i < w.num_prompts; i++) {
    // A pool's entry k is drawn once, as request k, and re-sent unchanged by requests k + size, k + 2·size, …
    const first = pool === undefined || i < pool ? undefined : (out[i % pool] as RequestSpec);
    if (first !== undefined) {
      out.push({ ...first, index: i });
      continue;
    }
    const inPrefix = sp !== undefined && prefixRng.next() < sp.fraction;
    const group = inPrefix ? prefixRng.int(sp.groups) : null;
    out.push({
      index: i,
      inputTokens: inLen(),
      outputTokens: outLen(),
      prefixGroup: group,
      prefixTokens: group === null ? 0 : sp?.length ?? 0,
      ...(pool === undefined ? {} : { promptId: i }),
    });
  }
  return out;
}

interface Conversation {
  readonly prefixGroup: number | null;
  /** Tokens of every message and answer so far, after the shared prefix. */
  historyTokens: number;
}

/**
 * Multi-turn requests: conversation c's turn k carries its history (earlier messages and answers)
 * before a new message; all turns of a conversation share its `promptId`, whose text (and cache
 * blocks) is one stream the turns read ever further into.
 */
function sessionRequests(w: Workload, s: Sessions, inLen: () => number, outLen: () => number, prefixRng: Rng): RequestSpec[] {
  const sp = w.shared_prefix;
  const perWave = s.concurrent * s.turns;
  const conversations = new Map<number, Conversation>();
  const out: RequestSpec[] = [];
  for (let i = 0; i < w.num_prompts; i++) {
    const j = i % perWave;
    const id = Math.floor(i / perWave) * s.concurrent + (j % s.concurrent);
    let c = conversations.get(id);
    if (c === undefined) {
      const inPrefix = sp !== undefined && prefixRng.next() < sp.fraction;
      c = { prefixGroup: inPrefix ? prefixRng.int(sp.groups) : null, historyTokens: 0 };
      conversations.set(id, c);
    }
    const message = inLen();
    const answer = outLen();
    out.push({
      index: i,
      inputTokens: c.historyTokens + message,
      outputTokens: answer,
      prefixGroup: c.prefixGroup,
      prefixTokens: c.prefixGroup === null ? 0 : sp?.length ?? 0,
      promptId: id,
    });
    c.historyTokens += message + answer;
    // The last turn closes the conversation; its id is not used again.
    if (Math.floor(j / s.concurrent) === s.turns - 1) conversations.delete(id);
  }
  return out;
}

/**
 * Pool requests with their prompt as cache blocks of `blockTokens` (the server's block size), for the
 * simulator's prefix cache: a block wholly inside a shared prefix gets the id of (group, block), every
 * later one the id of (pool entry, block). Equal ids mean equal content up to that block's end, so
 * a re-sent prompt hits every block the cache still holds, and different prompts of one prefix group
 * still share the prefix. Other requests are returned as they are (the cache keys them already).
 */
export function withPoolBlocks(specs: readonly RequestSpec[], blockTokens: number): RequestSpec[] {
  let maxBlocks = 1;
  let groups = 0;
  for (const s of specs) {
    if (s.promptId === undefined) continue;
    maxBlocks = Math.max(maxBlocks, Math.ceil((s.prefixTokens + s.inputTokens) / blockTokens) + 1);
    if (s.prefixGroup !== null) groups = Math.max(groups, s.prefixGroup + 1);
  }
  // One id list per prompt stream, grown as a conversation's turns reach further into it.
  const idsOf = new Map<number, number[]>();
  return specs.map((s) => {
    const p = s.promptId;
    if (p === undefined) return s;
    const full = Math.floor((s.prefixTokens + s.inputTokens) / blockTokens);
    let ids = idsOf.get(p);
    if (ids === undefined) {
      ids = [];
      idsOf.set(p, ids);
    }
    for (let b = ids.length; b < full; b++) {
      const inPrefix = s.prefixGroup !== null && (b + 1) * blockTokens <= s.prefixTokens;
      ids.push(inPrefix ? s.prefixGroup * maxBlocks + b : (groups + p) * maxBlocks + b);
    }
    // A copy: a later turn grows the stream's list, and this request's blocks must not grow with it.
    return { ...s, blocks: { ids: ids.slice(0, full), tokens: blockTokens } };
  });
}

/**
 * Intended send times (seconds from start) for an open-loop arrival process, or null for closed
 * loop. As vLLM does, gamma inter-arrivals (shape = burstiness, mean 1/rate) are accumulated and
 * rescaled so the last arrival lands exactly at N/rate, removing seed-to-seed drift in the offered load.
 */
export function arrivalTimes(arrival: Arrival, n: number, rng: Rng): Float64Array | null {
  switch (arrival.kind) {
    case 'closed':
      return null;
    case 'burst':
      return new Float64Array(n);
    case 'constant': {
      const t = new Float64Array(n);
      for (let i = 0; i < n; i++) t[i] = i / arrival.rate_rps;
      return t;
    }
    case 'poisson':
    case 'gamma': {
      if (arrival.kind === 'poisson' && arrival.stages !== undefined) return stagedTimes(arrival.stages, n, rng);
      const shape = arrival.kind === 'poisson' ? 1 : arrival.burstiness;
      const scale = 1 / (arrival.rate_rps * shape);
      const t = new Float64Array(n);
      let acc = 0;
      for (let i = 0; i < n; i++) {
        acc += rng.gamma(shape) * scale;
        t[i] = acc;
      }
      const target = n / arrival.rate_rps;
      const k = acc > 0 ? target / acc : 1;
      for (let i = 0; i < n; i++) t[i] = (t[i] as number) * k;
      return t;
    }
  }
}

/**
 * Rate stages back to back: stage k's round(rate × duration_s) arrivals spread over its span as Poisson
 * arrivals given their count (exponential gaps rescaled so the last lands at the stage's end, as a
 * single-rate run's last lands at N/rate). The whole schedule is drawn whatever `n`, then its first
 * `n` kept, so lowering num_prompts ends the same run early. Past the stages (a caller asking for more
 * than they hold) arrivals go on at the last positive rate.
 */
function stagedTimes(stages: readonly RateStage[], n: number, rng: Rng): Float64Array {
  const t = new Float64Array(n);
  let i = 0;
  let startS = 0;
  let lastRate = 0;
  for (const stage of stages) {
    const count = stageRequestCount(stage);
    if (stage.rate_rps > 0) lastRate = stage.rate_rps;
    const gaps = new Float64Array(count);
    let acc = 0;
    for (let k = 0; k < count; k++) {
      acc += rng.gamma(1);
      gaps[k] = acc;
    }
    const scale = acc > 0 ? stage.duration_s / acc : 0;
    for (let k = 0; k < count && i < n; k++) t[i++] = startS + (gaps[k] as number) * scale;
    startS += stage.duration_s;
  }
  let acc = startS;
  for (; i < n; i++) {
    acc += rng.gamma(1) / lastRate;
    t[i] = acc;
  }
  return t;
}

/**
 * Intended send times (seconds from start) of a workload's first `n` requests: a trace's own times
 * (÷ its speed) when the workload carries them, else drawn from its arrival process. Times a format
 * cuts to a tick coarser than the ms (BurstGPT's whole seconds) are spread over their tick with `rng`
 * (util/clock-tick.ts), the whole trace at once so that a lower `n` ends the same schedule early;
 * other formats' times (lm-bench's own JSONL, where whole seconds may be meant) are sent as written.
 */
export function workloadArrivals(w: Workload, n: number, rng: Rng): Float64Array | null {
  const t = w.trace;
  if (t?.data === undefined) return arrivalTimes(w.arrival, n, rng);
  const ms = t.data.arrival_ms;
  const tick = COARSE_CLOCK_FORMATS.has(t.format) ? clockTickMs(ms) : null;
  const times = tick === null ? ms : spreadOverTick(ms, tick, () => rng.next());
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = (times[i] as number) / 1000 / t.speed;
  return out;
}

/**
 * The two streams a workload's traffic is drawn from by one seed: its requests (lengths, shared-prefix
 * groups, pool entries, conversations) and its arrival times. The labels are the simulator's own
 * (every benchmark doc was measured with its draws); the load runner reads the same two, so one seed
 * offers the same traffic in both. Anything only one side draws (the runner's words, salts and
 * warm-up, the simulator's engine noise) forks a stream of its own, never one of these.
 */
export function trafficStreams(seed: number): { readonly requests: Rng; readonly arrivals: Rng } {
  const root = createRng(seed);
  return { requests: root.fork('requests'), arrivals: root.fork('arrivals') };
}

/** The concurrency cap an arrival process imposes, if any. */
export function concurrencyCap(arrival: Arrival): number | null {
  switch (arrival.kind) {
    case 'closed':
      return arrival.concurrency;
    case 'burst':
    case 'poisson':
    case 'gamma':
    case 'constant':
      return arrival.max_concurrency ?? null;
  }
}

/**
 * vLLM's `request_rate` field as the arrival process names it: "inf" for closed loop and bursts, else
 * `rate_rps` (with rate stages, their time-weighted mean, pauses included). That is the rate of the
 * whole schedule; a run that sends only part of it, or whose stages start with a pause, offered
 * another: a result reports `offeredRate`.
 */
export function requestRateField(arrival: Arrival): number | 'inf' {
  return arrival.kind === 'closed' || arrival.kind === 'burst' ? 'inf' : arrival.rate_rps;
}

/**
 * A result's `request_rate`: the rate at which the schedule offered the `scheduled` requests it sent
 * (its first `scheduled`), i.e. those requests ÷ the schedule time they fill. "inf" for closed loop
 * and bursts. Without rate stages that is the arrival's `rate_rps`. With stages, each stage the
 * requests reach counts for its span, the last one reached for the share of its requests they are
 * (num_prompts below the stages' count ends the run inside it); a pause holds no request and counts
 * for nothing, wherever it is. So 200 requests of an 8 req/s first stage report 8 (not the stages'
 * mean), `0:50,5:4` reports 5 (not 20 / 54 s), and a whole schedule without pauses its mean rate.
 * Requests past the stages (`stagedTimes` runs on at the last positive rate) count at that rate.
 */
export function offeredRate(arrival: Arrival, scheduled: number): number | 'inf' {
  if (arrival.kind === 'closed' || arrival.kind === 'burst') return 'inf';
  if (arrival.kind !== 'poisson' || arrival.stages === undefined || scheduled <= 0) return arrival.rate_rps;
  let left = scheduled;
  let spanS = 0;
  let lastRate = arrival.rate_rps;
  for (const stage of arrival.stages) {
    if (left <= 0) break;
    if (stage.rate_rps > 0) lastRate = stage.rate_rps;
    const count = stageRequestCount(stage);
    if (count === 0) continue;
    const taken = Math.min(left, count);
    spanS += (stage.duration_s * taken) / count;
    left -= taken;
  }
  spanS += left / lastRate;
  return spanS > 0 ? scheduled / spanS : arrival.rate_rps;
}
