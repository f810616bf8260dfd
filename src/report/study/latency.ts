import type { Catalog } from '../../catalog/index.js';
import type { BenchmarkResult, SimProfile, StudySpec, Trial } from '../../domain/index.js';
import { latencies } from '../../metrics/index.js';
import { simulate } from '../../sim/index.js';
import { trialInputOf } from '../../tune/study-runner.js';
import type { LatencySeries } from './types.js';

/**
 * Latency distributions of the top candidates. A sim study is deterministic per trial (seeded from the
 * study's seed and the trial number, trialInputOf), so re-simulating a trial gives back exactly the
 * per-request records it was measured with: the CDFs are the real ones. Other targets keep no records
 * in the store, so their CDF is drawn through the percentiles the measured result carries (p50, p90,
 * p95, p99), and the report says so.
 */
const MAX_POINTS = 200;

/** Empirical CDF of sorted samples, thinned to at most MAX_POINTS points (first and last kept). */
export function cdfPoints(valuesMs: readonly number[]): { ms: number; q: number }[] {
  const sorted = [...valuesMs].filter(Number.isFinite).sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return [];
  const step = Math.max(1, Math.ceil(n / MAX_POINTS));
  const out: { ms: number; q: number }[] = [];
  for (let i = 0; i < n; i += step) out.push({ ms: sorted[i] ?? 0, q: (i + 1) / n });
  if ((out[out.length - 1]?.q ?? 0) < 1) out.push({ ms: sorted[n - 1] ?? 0, q: 1 });
  return out;
}

export function statsPoints(r: BenchmarkResult, metric: 'ttft' | 'itl'): { ms: number; q: number }[] {
  return [
    { ms: r[`p50_${metric}_ms`], q: 0.5 },
    { ms: r[`p90_${metric}_ms`], q: 0.9 },
    { ms: r[`p95_${metric}_ms`], q: 0.95 },
    { ms: r[`p99_${metric}_ms`], q: 0.99 },
  ];
}

export function latencySeries(opts: {
  readonly spec: StudySpec;
  readonly targetKind: string;
  readonly candidates: readonly { readonly label: string; readonly trial: Trial }[];
  readonly catalog: Catalog;
  /** The sim study's bound profile (absent: the catalog's). */
  readonly profile?: SimProfile | undefined;
  /** The release an unbound sim target imitated (domain/vllm-release.ts). */
  readonly vllmVersion?: string | undefined;
}): LatencySeries[] {
  const out: LatencySeries[] = [];
  for (const { label, trial } of opts.candidates) {
    const r = trial.result;
    if (r === null) continue;
    if (opts.targetKind === 'sim') {
      const input = trialInputOf(opts.spec, trial);
      const sim = simulate({
        config: trial.config,
        hardware: input.hardware,
        model: input.model,
        // A max-rate trial's result carries the rate it was measured at.
        workload: r.workload ?? input.workload,
        seed: input.seed,
        slo: input.slo,
        catalog: opts.catalog,
        profile: opts.profile,
        vllmVersion: opts.vllmVersion,
      });
      if (sim.ok) {
        const lat = latencies(sim.records);
        out.push({ label, trial: trial.number, source: 'sim_records', ttft: cdfPoints(lat.ttftS.map((s) => s * 1000)), itl: cdfPoints(lat.itlS.map((s) => s * 1000)) });
        continue;
      }
    }
    out.push({ label, trial: trial.number, source: 'result_stats', ttft: statsPoints(r, 'ttft'), itl: statsPoints(r, 'itl') });
  }
  return out;
}
