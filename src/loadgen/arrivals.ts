import type { Arrival } from '../domain/index.js';
import type { Rng } from '../util/rng.js';
import { arrivalTimes } from '../workload/sample.js';
import type { RampUp } from './config.js';

/**
 * Intended send times. Without ramp-up they come from the shared `arrivalTimes`: on the stream
 * `trafficStreams(seed).arrivals` (traffic.ts passes it) they are the times the simulator draws from
 * that seed, so both offer the same traffic. With ramp-up (the runner's alone), as vLLM: request i's rate
 * is start + (end − start)·i/(N − 1) (linear) or start·(end/start)^(i/(N − 1)) (exponential), its gap
 * gamma-distributed with shape = burstiness at that rate, accumulated without rescaling.
 */
export function scheduleTimes(arrival: Arrival, n: number, rng: Rng, rampUp?: RampUp, burstiness = 1): Float64Array | null {
  if (rampUp === undefined) return arrivalTimes(arrival, n, rng);
  const t = new Float64Array(n);
  let acc = 0;
  for (let i = 0; i < n; i++) {
    const f = n > 1 ? i / (n - 1) : 1;
    const rate =
      rampUp.strategy === 'linear'
        ? rampUp.start_rps + (rampUp.end_rps - rampUp.start_rps) * f
        : rampUp.start_rps * (rampUp.end_rps / rampUp.start_rps) ** f;
    t[i] = acc;
    const shape = Number.isFinite(burstiness) ? burstiness : 0;
    acc += shape > 0 ? (rng.gamma(shape) / shape) / rate : 1 / rate;
  }
  return t;
}
