import type { ResolvedServerConfig, ServerEvidence } from '../domain/index.js';
import type { DesOutput } from './engine.js';

/**
 * A simulated run's evidence, in the shape a measured run's scrapes give (diagnose/evidence.ts): the
 * engine's queue, batch and KV cache integrated over virtual time (no sampling gaps), and vLLM's
 * request phases averaged over the requests that finished: queue (reached the engine → first
 * scheduled), prefill (→ first token) and decode (first → last token).
 */
export function simEvidence(des: DesOutput, resolved: ResolvedServerConfig): ServerEvidence {
  const t = des.trace;
  const span = t.durationS;
  const shareOf = (x: number): number | null => (span > 0 ? Math.min(1, x / span) : null);
  let queue = 0;
  let prefill = 0;
  let decode = 0;
  let n = 0;
  for (const r of des.requests) {
    const sim = r.sim;
    if (sim === null || !sim.finished || Number.isNaN(sim.scheduledS)) continue;
    queue += sim.scheduledS - sim.arrivalS;
    prefill += sim.firstTokenS - sim.scheduledS;
    decode += sim.lastTokenS - sim.firstTokenS;
    n++;
  }
  let steps = 0;
  let tokens = 0;
  let preemptions = 0;
  for (const rep of des.replicas) {
    steps += rep.steps;
    tokens += rep.scheduledTokens;
    preemptions += rep.preemptions;
  }
  return {
    source: 'simulator',
    engine: 'vllm',
    samples: steps,
    running_mean: span > 0 ? t.runningIntegral / span : null,
    running_peak: des.runningPeak,
    waiting_mean: span > 0 ? t.waitingIntegral / span : null,
    waiting_peak: des.waitingPeak,
    waiting_share: shareOf(t.waitingS),
    capped_share: shareOf(t.cappedS),
    running_limit: resolved.max_num_seqs * resolved.data_parallel_size,
    running_limit_known: true,
    kv_usage_mean: span > 0 ? Math.min(1, t.kvIntegral / span) : null,
    kv_usage_peak: Math.min(1, t.kvPeak),
    kv_full_share: shareOf(t.kvFullS),
    preemptions,
    queue_ms_mean: n === 0 ? null : (queue / n) * 1000,
    prefill_ms_mean: n === 0 ? null : (prefill / n) * 1000,
    decode_ms_mean: n === 0 ? null : (decode / n) * 1000,
    step_tokens_mean: steps === 0 ? null : tokens / steps,
  };
}
