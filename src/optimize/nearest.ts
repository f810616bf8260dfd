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

/** The `k` configurations nearest to meeting the SLOs, distinct in what they would meet, nearest first. */
export function nearestMisses(items: readonly { readonly config: ServerConfig; readonly values: TargetValues }[], slo: Slo, k = 3): NearMiss[] {
  const ranked = items
    .map((it) => nearMiss(it.config, it.values, slo))
    .filter((m): m is NearMiss => m !== null && m.misses.length > 0)
    .sort((a, b) => a.worst_ratio - b.worst_ratio || (b.values.output_throughput_per_gpu ?? 0) - (a.values.output_throughput_per_gpu ?? 0));
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
