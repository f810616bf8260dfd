import type { Arrival, LengthDist, TraceRequests, Workload } from '../domain/index.js';
import type { Rng } from '../util/rng.js';

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
  const out: RequestSpec[] = [];
  for (let i = 0; i < w.num_prompts; i++) {
    const inPrefix = sp !== undefined && prefixRng.next() < sp.fraction;
    const group = inPrefix ? prefixRng.int(sp.groups) : null;
    out.push({
      index: i,
      inputTokens: inLen(),
      outputTokens: outLen(),
      prefixGroup: group,
      prefixTokens: group === null ? 0 : sp?.length ?? 0,
    });
  }
  return out;
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
 * Intended send times (seconds from start) of a workload's first `n` requests: a trace's own times
 * (÷ its speed) when the workload carries them, else drawn from its arrival process.
 */
export function workloadArrivals(w: Workload, n: number, rng: Rng): Float64Array | null {
  const t = w.trace;
  if (t?.data === undefined) return arrivalTimes(w.arrival, n, rng);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = (t.data.arrival_ms[i] as number) / 1000 / t.speed;
  return out;
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

/** vLLM's `request_rate` field: "inf" for closed loop and bursts. */
export function requestRateField(arrival: Arrival): number | 'inf' {
  return arrival.kind === 'closed' || arrival.kind === 'burst' ? 'inf' : arrival.rate_rps;
}
