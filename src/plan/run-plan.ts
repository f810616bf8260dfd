import type { Catalog } from '../catalog/index.js';
import type { Prices } from '../cost/prices.js';
import { simulate } from '../sim/index.js';
import { defaultPowerProfile } from '../sim/power-profile.js';
import type { Store } from '../store/index.js';
import { historyCorrection, type HistoryCorrection, type RunPair } from './history.js';
import { plan, type SimRun } from './plan.js';
import type { PlanAnswer, PlanQuestion } from './types.js';

/**
 * The planner at its edge: the embedded simulator as its load runner (no run-time crashes drawn: a
 * plan sizes a deployment, it does not gamble on one run), the prices, and, when there is a history,
 * each GPU's correction from the user's own measured runs of this model (simulator runs in the history
 * are not evidence about the simulator, so they are left out).
 */
export interface RunPlanOptions {
  readonly catalog: Catalog;
  readonly prices: Prices;
  readonly store: Store | null;
  readonly onGpu?: (gpu: string, index: number, of: number) => void;
}

/** The simulator as the planner's load runner, imitating `vllmVersion` (undefined: a current vLLM). */
export const simRun =
  (catalog: Catalog, vllmVersion?: string): SimRun =>
  ({ config, gpu, gpus, model, workload, seed }) => {
    // Only the result is read: no token's time is kept (the same figures, test/sim/lean-metrics.test.ts).
    const out = simulate({ config, hardware: { gpu, count: gpus }, model, workload, seed, catalog, vllmVersion, runtimeFailures: false, keepRecords: false });
    return out.ok ? { result: out.result, failure: null } : { result: null, failure: `${out.failure.rule}: ${out.failure.message}` };
  };

/** The newest measured runs a correction re-simulates (each costs a simulation). */
const MAX_MEASURED_RUNS = 50;
/** Runs read from the history at a time while looking for measured ones. */
const PAGE = 200;

/**
 * The correction measured runs of `modelId` on `gpu` make to the simulator, or null with fewer than two.
 * The runs are re-simulated under the release the plan imitates, so the correction is of that simulator.
 */
export function correctionFromStore(store: Store, catalog: Catalog, modelId: string, gpu: string, vllmVersion?: string): HistoryCorrection | null {
  const sim = simRun(catalog, vllmVersion);
  const model = catalog.model(modelId);
  const pairs: RunPair[] = [];
  // The newest MEASURED runs, paged: a sim study's trials are stored as runs too, and fifty of them
  // stored after the user's measurements once hid every one of those (the plan fell back to
  // "estimated" with the measured runs still in the history).
  let measured = 0;
  for (let offset = 0; measured < MAX_MEASURED_RUNS; offset += PAGE) {
    const page = store.listRuns({ model: model.id, gpu, limit: PAGE, offset });
    for (const run of page) {
      if (run.result.lmb.source === 'sim' || run.workload === null) continue;
      if (measured === MAX_MEASURED_RUNS) break;
      measured++;
      const again = sim({ config: run.server_config, gpu, gpus: run.hardware.count, model, workload: run.workload, seed: 1 });
      if (again.result !== null) pairs.push({ measured: run.result, simulated: again.result });
    }
    if (page.length < PAGE) break;
  }
  return historyCorrection(pairs);
}

export function runPlan(q: PlanQuestion, o: RunPlanOptions): PlanAnswer {
  const cache = new Map<string, HistoryCorrection | null>();
  const correction = (gpu: string): HistoryCorrection | null => {
    if (o.store === null) return null;
    if (!cache.has(gpu)) cache.set(gpu, correctionFromStore(o.store, o.catalog, q.model, gpu, q.vllmVersion));
    return cache.get(gpu) ?? null;
  };
  const idleTdpFrac = defaultPowerProfile()?.idle_tdp_frac ?? null;
  return plan(q, { catalog: o.catalog, simulate: simRun(o.catalog, q.vllmVersion), prices: o.prices, correction, idleTdpFrac, ...(o.onGpu === undefined ? {} : { onGpu: o.onGpu }) });
}
