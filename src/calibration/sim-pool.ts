import { availableParallelism } from 'node:os';
import { datasheetToCarry } from '../catalog/gpu-file.js';
import { defaultCatalog } from '../catalog/index.js';
import type { Hardware, SimProfile } from '../domain/index.js';
import type { SimSummary, SimulateInput } from '../sim/index.js';
import { createWorkerPool, workerEntry } from '../workers/pool.js';
import type { SimBatchResult, SimBatchTask } from './sim-batch.worker.js';

/**
 * A pool of simulator threads for calibration: `summaries(points, profiles)` simulates every point
 * under every profile, the points split evenly over the threads, and returns summaries[profile][point]
 * (null where a point does not start). Deterministic: the points carry their seeds.
 */
export interface SimPool {
  summaries(points: readonly Omit<SimulateInput, 'catalog'>[], profiles: readonly SimProfile[]): Promise<(SimSummary | null)[][]>;
  readonly threads: number;
  close(): Promise<void>;
}

/**
 * A point names its model by id; a worker thread's catalog knows only data/models.yaml, so a model
 * this process registered (derived from a config.json, stored in the history) crosses as its spec.
 */
function portable(p: Omit<SimulateInput, 'catalog'>): Omit<SimulateInput, 'catalog'> {
  if (typeof p.model !== 'string') return p;
  const catalog = defaultCatalog();
  return catalog.findOwn(p.model) === null ? { ...p, model: catalog.model(p.model) } : p;
}

/**
 * The datasheets of the points' GPUs the catalog lacks (a `--gpu` YAML): a worker thread knows only
 * data/hardware.yaml. A GPU nobody knows stays unknown: its points come back null, as before.
 */
function datasheets(points: readonly Omit<SimulateInput, 'catalog'>[]): Hardware[] {
  const catalog = defaultCatalog();
  return [...new Set(points.map((p) => p.hardware.gpu))].flatMap((id) => {
    const hw = catalog.findGpu(id);
    return hw === null ? [] : (datasheetToCarry(hw, catalog) ?? []);
  });
}

export function createSimPool(threads = Math.max(1, availableParallelism())): SimPool {
  const pool = createWorkerPool<SimBatchTask, SimBatchResult>({ entry: workerEntry(import.meta.url, 'sim-batch'), what: 'simulator', minThreads: threads, maxThreads: threads, idleTimeoutMs: 60_000 });
  return {
    threads,
    async summaries(points, profiles) {
      // Interleaved split: neighbouring rows (similar cost) land on different threads.
      const parts = Array.from({ length: Math.min(threads, Math.max(1, points.length)) }, (_, k) => points.map((_, i) => i).filter((i) => i % threads === k));
      const gpus = datasheets(points);
      const outs = await Promise.all(parts.map((idx) => pool.run({ points: idx.map((i) => portable(points[i] as Omit<SimulateInput, 'catalog'>)), profiles, gpus })));
      return profiles.map((_, pi) => {
        const row: (SimSummary | null)[] = new Array<SimSummary | null>(points.length).fill(null);
        parts.forEach((idx, k) => idx.forEach((i, j) => (row[i] = outs[k]?.[pi]?.[j] ?? null)));
        return row;
      });
    },
    close: () => pool.destroy(),
  };
}
