import { z } from 'zod';
import { BenchmarkResult, Energy, ServerMetrics, STAT_KEYS, type ErrorSample } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';
import { buildResult, newDraft, put, RawNum } from '../ingest/draft.js';
import type { TrialInput } from './types.js';

/**
 * The command-target protocol's result file → a full BenchmarkResult. A harness writes at least the
 * throughput and the TTFT, TPOT, ITL and E2EL figures under vLLM's key names (any one stat of each
 * metric), `server_metrics` when it has them; a complete lm-bench or `vllm bench serve` result is
 * accepted as it is. Missing stats are not invented: the ingest normaliser fills them with vLLM's
 * empty-sample 0 only where the harness gave none of that metric (then the file is rejected).
 *
 * What the run lost is kept, since the tuner judges a trial by it (tune/lost-requests.ts): `failed`, or,
 * when a harness gives `completed` without it, the workload's prompts that did not complete; and the
 * error texts of `vllm bench serve`'s per-request `errors` list (or an lm-bench result's own samples).
 * A harness that measured power writes lm-bench's `energy` block; one that does not match the schema is
 * left out rather than costing the trial its measurement.
 */
const Harness = z.looseObject({
  output_throughput: RawNum,
  server_metrics: ServerMetrics.partial().optional(),
});

const REQUIRED_METRICS = ['ttft', 'tpot', 'itl', 'e2el'] as const;

export function normalizeHarnessResult(raw: unknown, input: TrialInput): BenchmarkResult {
  const full = BenchmarkResult.safeParse(raw);
  const attach = (r: BenchmarkResult): BenchmarkResult => ({
    ...r,
    server_config: input.config,
    hardware: input.hardware,
    model: input.model,
    workload: input.workload,
    slo: input.slo,
  });
  if (full.success) return attach(full.data);
  const h = Harness.safeParse(raw);
  if (!h.success) {
    throw new LmBenchError('LMB_ERR_COMMAND_FAILED', `result file: ${formatZodIssues(h.error.issues)}: need at least output_throughput and the ttft, tpot, itl and e2el figures`);
  }
  const obj = raw as Record<string, unknown>;
  const missing = REQUIRED_METRICS.filter((m) => !STAT_KEYS.some((k) => k.endsWith(`_${m}_ms`) && typeof obj[k] === 'number'));
  if (missing.length > 0) {
    throw new LmBenchError('LMB_ERR_COMMAND_FAILED', `result file has no figure for ${missing.join(', ')} (e.g. p99_${missing[0] ?? 'ttft'}_ms)`);
  }
  const d = newDraft('linear');
  if (typeof obj['failed'] !== 'number' && typeof obj['completed'] === 'number' && obj['completed'] < input.workload.num_prompts) {
    put(d, 'failed', input.workload.num_prompts - obj['completed']);
  }
  for (const key of ['duration', 'completed', 'failed', 'total_input_tokens', 'total_output_tokens', 'request_throughput', 'output_throughput', 'total_token_throughput', 'max_output_tokens_per_s', 'max_concurrent_requests', ...STAT_KEYS] as const) {
    const v = obj[key];
    if (typeof v === 'number') put(d, key, v);
  }
  d.backend = 'command';
  d.model_id = input.model;
  d.num_prompts = input.workload.num_prompts;
  const { result } = buildResult(d);
  const sm = h.data.server_metrics;
  const serverMetrics =
    sm === undefined
      ? null
      : ServerMetrics.parse({
          kv_cache_usage_peak: null,
          kv_cache_peak_gib: null,
          kv_cache_capacity_tokens: null,
          gpu_memory_reserved_gib: null,
          num_preemptions: null,
          num_requests_running_peak: null,
          num_requests_waiting_peak: null,
          prefix_cache_hit_rate: null,
          ...sm,
        });
  const samples = errorSamplesOf(obj['errors']);
  const energy = Energy.safeParse(obj['energy']);
  return attach({
    ...result,
    server_metrics: serverMetrics,
    ...(energy.success ? { energy: energy.data } : {}),
    lmb: { ...result.lmb, source: 'loadgen', ...(samples.length === 0 ? {} : { error_samples: samples }) },
  });
}

/**
 * `vllm bench serve`'s per-request `errors` (an empty string for a request that succeeded) as error
 * samples: one per distinct message, numbers aside, most frequent first, at most five.
 */
function errorSamplesOf(raw: unknown): ErrorSample[] {
  if (!Array.isArray(raw)) return [];
  const groups = new Map<string, ErrorSample>();
  for (const e of raw) {
    if (typeof e !== 'string' || e.trim() === '') continue;
    const message = e.trim().slice(0, 500);
    const key = message.replace(/\d+(?:\.\d+)?/g, '#');
    const g = groups.get(key);
    groups.set(key, { status: null, message: g?.message ?? message, count: (g?.count ?? 0) + 1 });
  }
  return [...groups.values()].sort((a, b) => b.count - a.count).slice(0, 5);
}
