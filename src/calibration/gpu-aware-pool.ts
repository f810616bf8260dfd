import { withOverrides, type ProfileParam } from '../domain/index.js';
import type { SimulateInput, SimSummary } from '../sim/index.js';
import type { SimPool } from './sim-pool.js';

/** Per-GPU `sim:` overrides by catalog id (data/hardware.yaml's, or the ones a calibration run just fitted). */
export type OverridesByGpu = Readonly<Record<string, Partial<Record<ProfileParam, number | undefined>> | undefined>>;

/**
 * A simulator pool that prices each point's GPU as the simulator does without an explicit profile
 * (`catalog.profileFor`): the profile asked for, with that GPU's `sim:` overrides on top. So the
 * calibration page's figures for an A100 row are what `lm-bench sim predict` gives for it, while the
 * H100 rows (no overrides) see the profile unchanged.
 */
export function gpuAwarePool(pool: SimPool, overrides: () => OverridesByGpu): SimPool {
  return {
    threads: pool.threads,
    close: () => pool.close(),
    async summaries(points, profiles) {
      const byGpu = new Map<string, number[]>();
      points.forEach((p, i) => byGpu.set(p.hardware.gpu, [...(byGpu.get(p.hardware.gpu) ?? []), i]));
      const out: (SimSummary | null)[][] = profiles.map(() => new Array<SimSummary | null>(points.length).fill(null));
      const o = overrides();
      await Promise.all(
        [...byGpu].map(async ([gpu, idx]) => {
          const own = o[gpu];
          const ps = own === undefined ? profiles : profiles.map((p) => withOverrides(p, own));
          const sums = await pool.summaries(idx.map((i) => points[i] as Omit<SimulateInput, 'catalog'>), ps);
          sums.forEach((row, pi) => idx.forEach((i, j) => ((out[pi] as (SimSummary | null)[])[i] = row[j] ?? null)));
        }),
      );
      return out;
    },
  };
}
