import type { Workload } from '../domain/index.js';
import { trafficStreams, workloadArrivals } from '../workload/sample.js';
import { scheduleTimes } from './arrivals.js';
import type { RampUp } from './config.js';
import { syntheticRequests, type PreparedRequest } from './prompts.js';

/**
 * What the load runner will send: the requests and their intended send times. A synthetic workload's
 * lengths, sharing and arrivals come from `trafficStreams` (src/workload/sample.ts), the simulator's
 * own streams, so `run --seed S` sends what `sim run --seed S` simulates. The words (and their salt),
 * a file dataset's shuffle and the warm-up are the runner's alone and draw from streams of their own.
 */
export interface LoadTraffic {
  /** Every prepared request; the first `n` are sent. */
  readonly requests: readonly PreparedRequest[];
  readonly n: number;
  /** Seconds from the schedule's start, one per sent request; null for a closed loop. */
  readonly arrivals: Float64Array | null;
}

export interface LoadTrafficOptions {
  /** Prompts from a file dataset, instead of the workload's synthetic ones. */
  readonly requests?: readonly PreparedRequest[] | undefined;
  readonly promptSalt?: string | undefined;
  /** A ramp (the runner's alone): its times from the same arrival stream, by vLLM's ramp rule. */
  readonly rampUp?: RampUp | undefined;
  readonly burstiness?: number | undefined;
}

export function loadTraffic(w: Workload, seed: number, opts: LoadTrafficOptions = {}): LoadTraffic {
  const requests = opts.requests ?? syntheticRequests(w, seed, opts.promptSalt);
  const n = Math.min(requests.length, w.num_prompts);
  const rng = trafficStreams(seed).arrivals;
  // A trace brings its own send times (÷ its speed); else the arrival process, or the ramp, draws them.
  const arrivals = w.trace?.data !== undefined || opts.rampUp === undefined ? workloadArrivals(w, n, rng) : scheduleTimes(w.arrival, n, rng, opts.rampUp, opts.burstiness ?? 1);
  return { requests, n, arrivals };
}
