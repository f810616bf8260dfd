import type { ServerConfig } from '../domain/index.js';
import type { Rng } from '../util/rng.js';
import { configKey, type KeyDeployment, type Proposal, type Sampler, type SamplerContext } from './sampler.js';

/**
 * The search space as samplers see it, bound to one study's hardware, model and workload by the
 * composition layer (so this folder does not depend on how the space resolves its context).
 * `sample` returns configurations that survive the space's constraint rules (the pruned space).
 */
export interface CandidateSource {
  sample(n: number, rng: Rng): ServerConfig[];
  /** A neighbour: one or two knobs moved one grid step (feasible, or the input unchanged). */
  mutate(config: ServerConfig, rng: Rng): ServerConfig;
  /** Every feasible configuration one knob one grid step away (a local search's moves). */
  neighbours?(config: ServerConfig): ServerConfig[];
  /** Every configuration of the pruned grid, in a fixed order (grid sampler only). */
  enumerate?(): Iterable<ServerConfig>;
  /** The one encoder's vector, for distances between configurations. */
  encode(config: ServerConfig): readonly number[];
  /**
   * Which of these pass every rule, the memory rules (C12–C14) included. `sample` skips the memory rules
   * for speed (the surrogate's physics stage screens its candidates instead); samplers without a model
   * filter with this so they do not spend trials on configurations the memory model already refuses.
   */
  startable?(configs: readonly ServerConfig[]): boolean[];
}

/** `sample`, kept to what the memory model lets start (over-drawing to make up for what it drops). */
export function sampleStartable(source: CandidateSource, n: number, rng: Rng): ServerConfig[] {
  const first = source.sample(n, rng);
  if (source.startable === undefined) return first;
  const keep = source.startable(first);
  const out = first.filter((_, i) => keep[i] === true);
  for (let round = 0; out.length < n && round < 4; round++) {
    const more = source.sample(Math.max(n, 64) * 2, rng.fork(`startable-${round}`));
    const ok = source.startable(more);
    out.push(...more.filter((_, i) => ok[i] === true));
  }
  return out.slice(0, n);
}

function seen(ctx: SamplerContext): Set<string> {
  return new Set(ctx.trials.map((t) => configKey(t.config, ctx.deployment)));
}

/** Uniform over the pruned space, skipping configurations already tried or pending. */
export function randomSampler(source: CandidateSource): Sampler {
  return {
    name: 'random',
    propose(ctx: SamplerContext, n: number): Promise<Proposal[]> {
      const taken = seen(ctx);
      const out: Proposal[] = [];
      for (const config of sampleStartable(source, n * 4 + 8, ctx.rng)) {
        const k = configKey(config, ctx.deployment);
        if (taken.has(k)) continue;
        taken.add(k);
        out.push({ config, origin: 'random' });
        if (out.length === n) break;
      }
      return Promise.resolve(out);
    },
  };
}

/** The pruned grid in order, resuming after the configurations the study already holds. */
export function gridSampler(source: CandidateSource): Sampler {
  return {
    name: 'grid',
    propose(ctx: SamplerContext, n: number): Promise<Proposal[]> {
      if (source.enumerate === undefined) return Promise.resolve([]);
      const taken = seen(ctx);
      const out: Proposal[] = [];
      for (const config of source.enumerate()) {
        if (out.length === n) break;
        if (!taken.has(configKey(config, ctx.deployment))) out.push({ config, origin: 'grid' });
      }
      return Promise.resolve(out);
    },
  };
}

/**
 * Greedy maximin design: from a random pool, repeatedly take the point farthest (encoded space, each
 * dimension scaled to [0, 1] over the pool) from everything already chosen or tried (told apart as
 * resolved on `deployment` when given: `configKey`).
 */
export function spaceFilling(source: CandidateSource, existing: readonly ServerConfig[], n: number, rng: Rng, opts: { readonly poolSize?: number; readonly deployment?: KeyDeployment } = {}): ServerConfig[] {
  const key = (c: ServerConfig): string => configKey(c, opts.deployment);
  const poolSize = opts.poolSize ?? 2000;
  const pool = sampleStartable(source, poolSize, rng);
  if (pool.length === 0) return [];
  const enc = pool.map((c) => source.encode(c));
  const old = existing.map((c) => source.encode(c));
  const dims = enc[0]?.length ?? 0;
  const lo = new Array<number>(dims).fill(Number.POSITIVE_INFINITY);
  const hi = new Array<number>(dims).fill(Number.NEGATIVE_INFINITY);
  for (const v of [...enc, ...old]) {
    for (let j = 0; j < dims; j++) {
      lo[j] = Math.min(lo[j] ?? 0, v[j] ?? 0);
      hi[j] = Math.max(hi[j] ?? 0, v[j] ?? 0);
    }
  }
  const scale = (v: readonly number[]): number[] => v.map((x, j) => ((hi[j] ?? 0) > (lo[j] ?? 0) ? (x - (lo[j] ?? 0)) / ((hi[j] ?? 0) - (lo[j] ?? 0)) : 0));
  const pts = enc.map(scale);
  const minD = pts.map(() => Number.POSITIVE_INFINITY);
  const d2 = (a: readonly number[], b: readonly number[]): number => a.reduce((s, x, j) => s + (x - (b[j] ?? 0)) ** 2, 0);
  for (const o of old.map(scale)) pts.forEach((p, i) => (minD[i] = Math.min(minD[i] ?? 0, d2(p, o))));
  const out: ServerConfig[] = [];
  const taken = new Set(existing.map(key));
  for (let k = 0; k < n; k++) {
    let best = -1;
    let bestD = -1;
    pts.forEach((_, i) => {
      const c = pool[i];
      if (c === undefined || taken.has(key(c))) return;
      if ((minD[i] ?? 0) > bestD) {
        bestD = minD[i] ?? 0;
        best = i;
      }
    });
    const chosen = pool[best];
    const p = pts[best];
    if (chosen === undefined || p === undefined) break;
    out.push(chosen);
    taken.add(key(chosen));
    pts.forEach((q, i) => (minD[i] = Math.min(minD[i] ?? 0, d2(p, q))));
  }
  return out;
}

/**
 * A source that never offers a configuration `excluded` names (learned failure rules): samples are
 * over-drawn and filtered, a mutation that lands in an excluded region is retried from the start
 * point, and `startable` says false for it. The predicate is read on every call, so rules learned
 * mid-study apply from the next proposal on.
 */
export function restrictSource(source: CandidateSource, excluded: (config: ServerConfig) => boolean): CandidateSource {
  const keep = (cs: readonly ServerConfig[]): ServerConfig[] => cs.filter((c) => !excluded(c));
  return {
    sample(n, rng) {
      const first = source.sample(n, rng);
      const out = keep(first);
      // Refill only what the rules removed, and never with a configuration already drawn (a space
      // smaller than n would otherwise come back several times over).
      if (out.length < first.length) {
        const seen = new Set(first.map((c) => configKey(c)));
        for (let round = 0; out.length < n && round < 3; round++) {
          const fresh = source.sample(n, rng.fork(`restricted-${round}`)).filter((c) => !seen.has(configKey(c)));
          if (fresh.length === 0) break;
          for (const c of fresh) seen.add(configKey(c));
          out.push(...keep(fresh));
        }
      }
      return out.slice(0, n);
    },
    mutate(config, rng) {
      for (let attempt = 0; attempt < 8; attempt++) {
        const next = source.mutate(config, rng);
        if (!excluded(next)) return next;
      }
      return config;
    },
    ...(source.enumerate === undefined
      ? {}
      : {
          enumerate: function* () {
            for (const c of source.enumerate?.() ?? []) if (!excluded(c)) yield c;
          },
        }),
    encode: (config) => source.encode(config),
    startable: (configs) => {
      const base = source.startable?.(configs) ?? configs.map(() => true);
      return configs.map((c, i) => base[i] === true && !excluded(c));
    },
  };
}
