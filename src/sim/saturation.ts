import type { DesOutput } from './engine.js';
import { saturationOf, type RequestTimes, type RunSaturation } from '../metrics/saturation.js';

export { saturationBlock, stageSpansS } from '../metrics/saturation.js';
export type SimSaturation = RunSaturation;

/**
 * Whether an open-loop simulated run kept up with its arrivals (metrics/saturation.ts has the test).
 * Each request's arrival is its scheduled time, so a client-side queue behind a concurrency cap counts
 * as waiting; requests the server refused (too long for max_model_len) are not ones it had to keep up
 * with; one the run ended on before its first token (it does not: the DES drains) waits to the end.
 * Closed loops cannot fall behind in this sense and get null.
 */
export function detectSaturation(des: DesOutput, stageSpansS: readonly (readonly [number, number])[] = []): SimSaturation | null {
  if (!des.openLoop) return null;
  const requests: RequestTimes[] = [];
  for (const r of des.requests) {
    const sim = r.sim;
    if (r.rejected || sim === null) continue;
    requests.push({ arrivedS: r.schedS, firstTokenS: sim.numOutput > 0 ? sim.firstTokenS : Number.POSITIVE_INFINITY, lastTokenS: sim.lastTokenS, finished: sim.finished, outputTokens: sim.numOutput });
  }
  return saturationOf(requests, stageSpansS);
}
