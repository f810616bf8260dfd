import type { ServerConfig } from '../domain/index.js';
import { configKey } from '../optimize/sampler.js';
import { diversePicks, simulatedSearch, type SimSearch, type SimSearchOptions } from '../optimize/sim-search.js';

/** The initial design of a study: one simulated search, then diverse picks from it not yet tried. */
export function simulatorDesign(opts: Omit<SimSearchOptions, 'exclude'>): (k: number, taken: ReadonlySet<string>) => Promise<ServerConfig[]> {
  let search: SimSearch | null = null;
  return (k, taken) => {
    search ??= simulatedSearch(opts);
    // Over-pick by what is taken, so the spread is the same one a fresh study would get.
    const picks = diversePicks(search, k + taken.size).filter((c) => !taken.has(configKey(c.config)));
    return Promise.resolve(picks.slice(0, k).map((c) => c.config));
  };
}
