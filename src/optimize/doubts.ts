import type { Recommendation, RecommendedConfig, ServerConfig } from '../domain/index.js';
import type { PriorRun, PriorSimulator, RuntimeOomRisk } from '../calibration/prior-simulator.js';
import { configKey } from './sampler.js';

/**
 * What the simulator holds against a configuration a user is told to deploy. The surrogate that picks
 * it learned from runs that started and finished, and a study measures a few hundred requests, so
 * neither sees a configuration that does not start here or runs out of memory now and then; the
 * simulator's memory model does (docs/calibration-runtime-oom.md).
 */

/** A configuration whose chance of a run-time CUDA OOM in 1,000 requests is at least this is doubted. */
export const RUNTIME_OOM_DOUBT_PER_RUN = 0.01;

/** 0.9996 → "≥99.9%", 0.97 → "97%", 0.044 → "4.4%", 1e-9 → "<0.1%": never "100%", which reads as certain. */
export function percentText(p: number): string {
  const pct = p * 100;
  if (pct >= 99.9) return '≥99.9%';
  if (pct < 0.1) return '<0.1%';
  return `${pct >= 10 ? pct.toFixed(0) : pct.toPrecision(2)}%`;
}

/** The memory model's run-time OOM risk, in words, with what to do about it. */
export function oomRiskText(risk: RuntimeOomRisk): string {
  return `gpu_memory_utilization=${risk.gpuMemoryUtilization} leaves ${risk.headroomGib.toFixed(2)} GiB outside vLLM's pool: a ${percentText(risk.perRun)} chance of a run-time CUDA OOM in 1,000 requests by the memory model (docs/calibration-runtime-oom.md); measure it, or lower gpu_memory_utilization`;
}

/** An undecided simulated run (metrics/saturation.ts), in words: its pace and why it could not tell. */
export function undecidedRunText(s: { readonly offered_rps: number; readonly sustained_rps: number }, requests: number): string {
  return `its simulated run of ${requests} requests was too short to tell whether it keeps up with the load: it worked through ${s.sustained_rps.toFixed(1)} req/s of ${s.offered_rps.toFixed(1)} offered, the requests in it still growing before its batch had turned over; measure it over a longer run`;
}

/**
 * Why the simulator doubts a configuration, given its simulated `run`: it does not start, or its run
 * died, or its run was too short to tell whether it keeps up (its latencies may be a batch still
 * filling), or its memory leaves so little outside vLLM's pool that a run-time OOM is likely. Empty
 * when it has no doubt.
 */
export function simulatorDoubts(config: ServerConfig, run: PriorRun, simulator: PriorSimulator): string[] {
  const doubts: string[] = [];
  if (!run.ok) {
    const f = run.failure;
    if (f.phase !== 'runtime') return [`the simulated server does not start with it: ${f.message}`];
    doubts.push(`the simulated run on this workload died after ${f.atRequest} requests of a run-time CUDA out-of-memory error`);
  } else {
    const s = run.result.saturation;
    if (s !== null && s !== undefined && !s.saturated && s.undecided === true) doubts.push(undecidedRunText(s, run.result.completed + run.result.failed));
  }
  const risk = simulator.runtimeOomRisk(config);
  if (risk !== null && (risk.perRun >= RUNTIME_OOM_DOUBT_PER_RUN || !run.ok)) doubts.push(oomRiskText(risk));
  return doubts;
}

/**
 * The answer's trust with the simulator's doubts about the pick (its `doubts`): thin, saying why, and
 * the pick measured first; unchanged when there are none.
 */
export function withDoubts(trust: Recommendation['trust'], pick: Pick<RecommendedConfig, 'config' | 'doubts'>): Recommendation['trust'] {
  const doubts = pick.doubts ?? [];
  if (doubts.length === 0) return trust;
  // The same server whatever order its flags were written in.
  const key = configKey(pick.config);
  return { level: 'thin', reasons: [...trust.reasons, ...doubts.map((d) => `the pick: ${d}`)], run_next: [pick.config, ...trust.run_next.filter((c) => configKey(c) !== key)] };
}
