import { Workload, type Arrival, type BenchmarkResult } from '../domain/index.js';
import type { RunMeta } from '../store/index.js';

/**
 * A Workload reconstructed from a foreign result, for runs whose file and sidecar give none (the
 * dataset builder needs one to learn from a run). What is exact: the mean prompt and output lengths
 * (token totals / completed), the arrival process (request_rate, burstiness, max_concurrency) and the
 * request count. What is not known: the length distributions, so lengths are `fixed` at the means,
 * and whether EOS was ignored. The run's notes say so (prefix "workload derived"). Null when the
 * totals, the count or the request rate are unavailable.
 */
export function deriveWorkload(result: BenchmarkResult, meta: RunMeta, name: string): Workload | null {
  const missing = (k: string) => meta.unavailable.includes(k);
  if (['completed', 'total_input_tokens', 'total_output_tokens', 'request_rate'].some(missing) || result.completed === 0) return null;
  const inLen = Math.max(1, Math.round(result.total_input_tokens / result.completed));
  const outLen = Math.max(1, Math.round(result.total_output_tokens / result.completed));
  const cap = result.max_concurrency ?? undefined;
  let arrival: Arrival;
  if (result.request_rate === 'inf') {
    arrival = cap === undefined ? { kind: 'burst' } : { kind: 'closed', concurrency: cap };
  } else {
    const rate = result.request_rate;
    const b = result.burstiness;
    const capped = cap === undefined ? {} : { max_concurrency: cap };
    if (b === 'inf') arrival = { kind: 'constant', rate_rps: rate, ...capped };
    else if (b === 1 || missing('burstiness')) arrival = { kind: 'poisson', rate_rps: rate, ...capped };
    else arrival = { kind: 'gamma', rate_rps: rate, burstiness: b, ...capped };
  }
  const parsed = Workload.safeParse({
    name,
    description: 'reconstructed on ingest: fixed lengths at the measured means, arrival from the result',
    api: /chat/i.test(result.endpoint_type) ? 'chat' : 'completions',
    input_len: { dist: 'fixed', value: inLen },
    output_len: { dist: 'fixed', value: outLen },
    arrival,
    num_prompts: Math.min(1_000_000, Math.max(1, result.num_prompts || result.completed)),
    ignore_eos: true,
  });
  if (!parsed.success) return null;
  meta.notes.push(`workload derived: fixed lengths ${inLen}/${outLen} tokens (the means; distributions unknown), arrival ${arrival.kind}`);
  return parsed.data;
}
