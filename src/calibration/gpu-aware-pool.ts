import { atKernelRate, releaseProfile, type ProfileParam } from '../domain/index.js';
import type { SimulateInput, SimSummary } from '../sim/index.js';
import type { SimPool } from './sim-pool.js';

/** Per-GPU `sim:` overrides by catalog id (data/hardware.yaml's, or the ones a calibration run just fitted). */
export type OverridesByGpu = Readonly<Record<string, Partial<Record<ProfileParam, number | undefined>> | undefined>>;

/**
 * A simulator pool that prices each point's GPU as the simulator does without an explicit profile
 * (`catalog.profileFor`): the profile asked for, with that GPU's `sim:` overrides on top, then its
 * `sim_recent` ones where the point's vLLM release is recent (domain/vllm-release.ts). So the
 * calibration page's figures for an A100 row are what `lm-bench sim predict` gives for it, while the
 * H100 rows of the fit set's releases (no overrides) see the profile unchanged.
 */
export function gpuAwarePool(pool: SimPool, overrides: () => OverridesByGpu, recent: () => OverridesByGpu = () => ({})): SimPool {
  return {
    threads: pool.threads,
    close: () => pool.close(),
    async summaries(points, profiles) {
      // Points priced alike go together: one GPU, on one side of the release boundary (any of its releases stands for the group).
      const groups = new Map<string, { gpu: string; vllmVersion: string | undefined; idx: number[] }>();
      points.forEach((p, i) => {
        const key = `${p.hardware.gpu}|${atKernelRate(p.vllmVersion)}`;
        const g = groups.get(key) ?? { gpu: p.hardware.gpu, vllmVersion: p.vllmVersion, idx: [] };
        g.idx.push(i);
        groups.set(key, g);
      });
      const out: (SimSummary | null)[][] = profiles.map(() => new Array<SimSummary | null>(points.length).fill(null));
      const o = overrides();
      const later = recent();
      await Promise.all(
        [...groups.values()].map(async ({ gpu, vllmVersion, idx }) => {
          const ps = profiles.map((p) => releaseProfile(p, { sim: o[gpu], sim_recent: later[gpu] }, vllmVersion));
          const sums = await pool.summaries(idx.map((i) => points[i] as Omit<SimulateInput, 'catalog'>), ps);
          sums.forEach((row, pi) => idx.forEach((i, j) => ((out[pi] as (SimSummary | null)[])[i] = row[j] ?? null)));
        }),
      );
      return out;
    },
  };
}
