import type { KnobValue, ServerConfig } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import type { FeatureContext, KnobEncoder } from '../surrogate/features.js';
import type { SearchSpace } from '../space/index.js';
import type { Rng } from '../util/rng.js';
import type { CandidateSource } from './samplers.js';

/**
 * Binds the search space to one context as the optimizer's candidate source and encoder.
 *
 * Candidates come from sequential rejection over the bound space's grid: knobs are drawn in file
 * order and, as soon as every knob a constraint rule reads has a value, that rule is checked (a
 * table lookup after its first evaluation) and the knob redrawn on failure. Drawing whole points
 * and rejecting them wastes ~96% of draws on 1 GPU (TP × DP ≤ 1 alone keeps 1 in 16); this keeps
 * 100k feasible candidates to a fraction of a second. The result is not exactly uniform over the
 * feasible set (early knobs are drawn before later rules are known), which candidates do not need.
 * Memory rules are left to the physics stage; everything else the space prunes is pruned here.
 */
export function spaceEncoder(space: SearchSpace): KnobEncoder {
  const knobs = space.knobs.filter((k) => k.when === undefined).map((k) => k.name);
  return {
    featureNames: space.featureNames(),
    // A config missing some knob (a partial history record, the vLLM defaults {}) is completed
    // with the context's defaults first, so the same effective config always encodes the same way.
    encode: (config: ServerConfig, ctx?: FeatureContext) => {
      const c = config as Record<string, unknown>;
      const full = ctx !== undefined && knobs.some((k) => c[k] === undefined) ? space.complete(config, ctx) : config;
      return space.encode(full);
    },
  };
}

export interface SourceOptions {
  /** Knobs held at one value (e.g. `SearchSpace.precisionPins()` for --keep-precision). */
  readonly pins?: ServerConfig | undefined;
}

export function spaceSource(space: SearchSpace, ctx: FeatureContext, opts: SourceOptions = {}): CandidateSource {
  const b = space.bind(ctx);
  const n = b.options.length;
  const pinned = new Array<number>(n).fill(-1);
  for (const [name, value] of Object.entries(opts.pins ?? {}) as [string, KnobValue][]) {
    const k = space.knobs.findIndex((x) => x.name === name);
    const at = k < 0 ? -1 : (b.options[k] ?? []).indexOf(value);
    if (at < 0) throw new LmBenchError('LMB_ERR_SPACE_EMPTY', `cannot pin ${name}=${String(value)}: the search space has no such value`, { details: { field: name } });
    pinned[k] = at;
  }
  // Rules grouped by the last knob position they read: checked once that knob is drawn.
  const byLast: (typeof b.tables)[number][][] = Array.from({ length: n }, () => []);
  for (const t of b.tables) {
    // Memory rules (C12–C14) read most knobs, so their tables rarely hit; candidates are checked
    // against the simulator's memory model directly in the physics stage (candidates.ts) instead.
    if (t.rule.kind === 'memory') continue;
    const last = Math.max(0, ...t.reads);
    byLast[Math.min(n - 1, last)]?.push(t);
  }
  const sizes = b.options.map((o) => o.length);
  const conditional = b.conditional.map((c) => c === true);
  const drawPoint = (rng: Rng): number[] | null => {
    const point = new Array<number>(n).fill(0);
    for (let k = 0; k < n; k++) {
      const size = sizes[k] ?? 1;
      const cond = conditional[k] === true;
      const active = !cond || b.isActive(k, point);
      const rules = byLast[k] ?? [];
      let ok = false;
      const pin = pinned[k] ?? -1;
      for (let attempt = 0; attempt < 24 && !ok; attempt++) {
        point[k] = !active ? 0 : pin >= 0 ? pin : cond ? 1 + rng.int(size - 1) : rng.int(size);
        ok = true;
        for (let r = 0; r < rules.length && ok; r++) ok = b.passes(rules[r] as (typeof rules)[number], point);
        if (!active || pin >= 0) break;
      }
      if (!ok) return null;
    }
    return point;
  };
  const encoder = spaceEncoder(space);
  return {
    sample(count: number, rng: Rng): ServerConfig[] {
      const out: ServerConfig[] = [];
      // Mixed-radix index of the point: exact in a double for spaces below 2^53 points.
      const seen = new Set<number>();
      let misses = 0;
      while (out.length < count && misses < count * 4 + 1000) {
        const p = drawPoint(rng);
        let key = 0;
        if (p !== null) for (let k = 0; k < n; k++) key = key * (sizes[k] ?? 1) + (p[k] ?? 0);
        if (p === null || seen.has(key)) {
          misses++;
          continue;
        }
        seen.add(key);
        out.push(b.configOf(p));
      }
      return out;
    },
    startable: (configs) => Array.from(space.feasibleMask(configs, ctx), (v) => v === 1),
    mutate: (config, rng) => ({ ...space.mutate(config, rng, ctx), ...opts.pins }),
    neighbours: (config) => {
      const pins = Object.entries(opts.pins ?? {});
      return space.neighbours(config, ctx).filter((c) => pins.every(([k, v]) => (c as Record<string, unknown>)[k] === v));
    },
    enumerate: function* () {
      const pins = Object.entries(opts.pins ?? {});
      for (const c of space.enumerate(ctx)) if (pins.every(([k, v]) => (c as Record<string, unknown>)[k] === v)) yield c;
    },
    encode: (config) => Array.from(encoder.encode(config, ctx)),
  };
}
