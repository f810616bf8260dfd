import type { Catalog } from '../catalog/index.js';
import { loadPrices, type Prices } from '../cost/prices.js';
import { withCost } from '../cost/result-cost.js';
import type { TrialOutcome } from './types.js';

/**
 * A measured trial's result with its `cost` block (issue 25 §3): the GPUs' hourly price from
 * data/prices.yaml (or the datasheet's own) and, at the goodput it measured, the price of a million
 * output tokens. Priced where the trial ran, so every target (worker thread, Slurm job) prices alike.
 */
let prices: Prices | null = null;

export function costedOutcome(outcome: TrialOutcome, catalog: Catalog): TrialOutcome {
  if (outcome.status !== 'ok') return outcome;
  prices ??= loadPrices(catalog);
  return { ...outcome, result: withCost(outcome.result, prices, catalog) };
}
