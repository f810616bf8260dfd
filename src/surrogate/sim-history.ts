import type { Catalog } from '../catalog/index.js';
import type { HardwareRef, ServerConfig, Workload } from '../domain/index.js';
import { simulate } from '../sim/index.js';
import type { Rng } from '../util/rng.js';
import type { Observation } from './dataset.js';

/**
 * History generated with the simulator (noisy runs: step-time noise and host stalls, a fresh seed per
 * run), for the accuracy benchmark, tests and demos. Launch failures come back with `result: null`,
 * as a failed trial would; run-time failures with `brokeUnderLoad` too, as a trial that crashed would.
 */
export interface SimHistoryCell {
  readonly hardware: HardwareRef;
  readonly model: string;
  readonly workload: Workload;
  /** Configurations to run in this cell. */
  readonly configs: readonly ServerConfig[];
}

export function simulateHistory(cells: readonly SimHistoryCell[], catalog: Catalog, rng: Rng): Observation[] {
  const out: Observation[] = [];
  cells.forEach((cell, ci) => {
    cell.configs.forEach((config, k) => {
      const seed = rng.fork(`${ci}-${k}`).int(2 ** 31);
      const sim = simulate({ config, hardware: cell.hardware, model: cell.model, workload: cell.workload, seed, catalog, keepRecords: false });
      // A run-time failure (an OOM under load) started, as the sim target says of it: the sustain model's to learn.
      const broke = !sim.ok && sim.failure.phase === 'runtime';
      out.push({ config, hardware: cell.hardware, model: cell.model, workload: cell.workload, result: sim.ok ? sim.result : null, ...(broke ? { brokeUnderLoad: true } : {}) });
    });
  });
  return out;
}

/** A workload with another closed-loop concurrency or Poisson rate (for variety across runs). */
export function withLoad(w: Workload, load: { readonly concurrency?: number; readonly rateRps?: number }): Workload {
  if (load.concurrency !== undefined) return { ...w, name: `${w.name}-c${load.concurrency}`, arrival: { kind: 'closed', concurrency: load.concurrency } };
  if (load.rateRps !== undefined) return { ...w, name: `${w.name}-r${load.rateRps}`, arrival: { kind: 'poisson', rate_rps: load.rateRps } };
  return w;
}
