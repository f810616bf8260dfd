import type { ServerConfig, Slo } from '../domain/index.js';
import type { SloKey } from '../domain/slo.js';
import type { TargetValues } from '../surrogate/targets.js';
import { sloConstraints } from './objectives.js';

/**
 * When nothing meets the SLOs, the configurations that come nearest (issue 30): ranked by how far
 * their worst latency is past its limit (the largest predicted ÷ limit), each with every limit it
 * misses and the SLO it would meet (its own figures, rounded up). A user then sees what the
 * deployment can promise instead of a bare "no".
 */
export interface SloMiss {
  readonly slo: SloKey;
  readonly predicted: number;
  readonly limit: number;
}

export interface NearMiss {
  readonly config: ServerConfig;
  readonly values: TargetValues;
  /** The largest predicted ÷ limit over the SLOs (1 would just meet them). */
  readonly worst_ratio: number;
  readonly misses: SloMiss[];
  /** The SLO this configuration would meet: each limit raised to its figure, rounded up. */
  readonly would_meet: Slo;
}

/** A latency limit rounded up to a figure a person would write: two significant digits. */
export function roundUpLimit(ms: number): number {
  if (!(ms > 0)) return 1;
  const step = 10 ** Math.max(0, Math.floor(Math.log10(ms)) - 1);
  return Math.ceil(ms / step - 1e-9) * step;
}

export function nearMiss(config: ServerConfig, values: TargetValues, slo: Slo): NearMiss | null {
  const cs = sloConstraints(slo);
  let worst = 0;
  const misses: SloMiss[] = [];
  const wouldMeet: Record<string, number> = {};
  for (const c of cs) {
    const v = values[c.target];
    if (v === undefined) return null;
    worst = Math.max(worst, v / c.limitMs);
    if (v > c.limitMs) misses.push({ slo: c.key, predicted: v, limit: c.limitMs });
    wouldMeet[c.key] = v > c.limitMs ? roundUpLimit(v) : c.limitMs;
  }
  return { config, values, worst_ratio: worst, misses, would_meet: wouldMeet };
}

/**
 * Whether the answer's rule counts a configuration as meeting `slo`: its figures under the limits is
 * not enough where the rule asks a probability of meeting them (P ≥ 0.9 under the surrogate's spread,
 * ≥ 0.5 under the simulator's error).
 */
export type MeetsRule = (config: ServerConfig, values: TargetValues, slo: Slo) => boolean;

/** How many near misses, nearest on their figures, are tried against the rule for the few it keeps. */
const RULE_POOL = 24;
/**
 * Steps a limit may be raised (by about 5% each, so up to some 30 times the figure) before a
 * configuration counts as no near miss: a thin history's spread can ask that much margin, and the
 * answer should say so rather than offer a limit the rule then refuses.
 */
const MAX_RAISES = 70;

/**
 * The SLO at which the rule counts this configuration as meeting it: from the limits its figures
 * would meet, the limit its figure is nearest (or furthest past) raised a step at a time, or null
 * when no reasonable relaxation does it.
 */
function ruleLimits(m: NearMiss, slo: Slo, meets: MeetsRule): Slo | null {
  const cs = sloConstraints(slo);
  const limits: Record<string, number> = Object.fromEntries(cs.map((c) => [c.key, m.would_meet[c.key] ?? c.limitMs]));
  for (let i = 0; i <= MAX_RAISES; i++) {
    const asked: Slo = { ...slo, ...limits };
    if (meets(m.config, m.values, asked)) return asked;
    let tightest: (typeof cs)[number] | undefined;
    let worst = -Infinity;
    for (const c of cs) {
      const ratio = (m.values[c.target] ?? 0) / (limits[c.key] ?? c.limitMs);
      if (ratio > worst) [worst, tightest] = [ratio, c];
    }
    if (tightest === undefined) return null;
    const cur = limits[tightest.key] ?? tightest.limitMs;
    limits[tightest.key] = Math.max(roundUpLimit(cur * 1.05), cur + 1);
  }
  return null;
}

/**
 * The `k` configurations nearest to meeting the SLOs, distinct in what they would meet, nearest first.
 * With the answer's rule (`meets`), what each "would meet" is an SLO the rule counts it as meeting, so
 * a user who relaxes the SLO to it gets that configuration back rather than another "nothing meets";
 * configurations whose figures meet the limits but not surely enough for the rule are near misses too.
 */
export function nearestMisses(items: readonly { readonly config: ServerConfig; readonly values: TargetValues }[], slo: Slo, k = 3, meets?: MeetsRule): NearMiss[] {
  const byFigures = items
    .map((it) => nearMiss(it.config, it.values, slo))
    .filter((m): m is NearMiss => m !== null && (m.misses.length > 0 || meets !== undefined))
    .sort((a, b) => a.worst_ratio - b.worst_ratio || (b.values.output_throughput_per_gpu ?? 0) - (a.values.output_throughput_per_gpu ?? 0));
  const cs = sloConstraints(slo);
  // How far the SLO must move for it: the largest relaxed ÷ asked limit.
  const stretch = (m: NearMiss): number => Math.max(1, ...cs.map((c) => (m.would_meet[c.key] ?? c.limitMs) / c.limitMs));
  const ranked =
    meets === undefined
      ? byFigures
      : byFigures
          .slice(0, RULE_POOL)
          .flatMap((m) => {
            const asked = ruleLimits(m, slo, meets);
            if (asked === null) return [];
            const wouldMeet: Record<string, number> = {};
            for (const c of cs) wouldMeet[c.key] = asked[c.key] ?? c.limitMs;
            // One the rule already counts as meeting the SLO asked is no miss (the caller found none).
            return cs.every((c) => wouldMeet[c.key] === c.limitMs) ? [] : [{ ...m, would_meet: wouldMeet }];
          })
          .sort((a, b) => stretch(a) - stretch(b) || a.worst_ratio - b.worst_ratio || (b.values.output_throughput_per_gpu ?? 0) - (a.values.output_throughput_per_gpu ?? 0));
  const out: NearMiss[] = [];
  const seen = new Set<string>();
  for (const m of ranked) {
    // Two configurations that would meet the same SLO say the same thing: keep the nearer one.
    const key = JSON.stringify(m.would_meet);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(m);
    if (out.length >= k) break;
  }
  return out;
}
