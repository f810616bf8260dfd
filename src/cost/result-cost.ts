import type { Catalog } from '../catalog/index.js';
import type { BenchmarkResult, Cost } from '../domain/index.js';
import { deploymentCost, type Prices } from './prices.js';

/**
 * A run's cost at the goodput it measured (issue 25): the GPUs' hourly price, and that price over the
 * output tokens of the requests that met the SLOs (`request_goodput` / `request_throughput` of the
 * output throughput; all of it when the run had no per-request SLO). A result without hardware (a
 * `run` against an endpoint whose GPUs it was not told) or on a GPU without a price gets none.
 */
export function goodputOutputTokS(r: BenchmarkResult): number {
  if (r.request_goodput === null || !(r.request_throughput > 0)) return r.output_throughput;
  return r.output_throughput * Math.min(1, r.request_goodput / r.request_throughput);
}

export function resultCost(r: BenchmarkResult, prices: Prices, catalog: Catalog): Cost | null {
  if (r.hardware === null) return null;
  const hw = catalog.findGpu(r.hardware.gpu);
  if (hw === null) return null;
  return deploymentCost(prices, hw, r.hardware.count, goodputOutputTokS(r));
}

/** The result with its `cost` block (replaced when it had one). */
export function withCost(r: BenchmarkResult, prices: Prices, catalog: Catalog): BenchmarkResult {
  return { ...r, cost: resultCost(r, prices, catalog) };
}
