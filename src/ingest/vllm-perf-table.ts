import { z } from 'zod';
import { RawNum, VLLM_RATES, buildResult, newDraft, parseRaw, put } from './draft.js';
import { rejected } from './json-text.js';
import type { ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * vLLM's 2025 performance-benchmark table, `benchmark_results.json` of `.buildkite/nightly-benchmarks`
 * (scripts/convert-results-json-to-markdown.py): one list of rows renamed for display, latency rows
 * ("Mean latency (ms)"), offline throughput rows ("Elapsed time (s)") and serving rows — the only ones
 * with serving figures — where "# of req." is vLLM's `completed`, "Tput (req/s)" its
 * `request_throughput`, then output and total token throughput, token totals (later versions),
 * mean/median/P99 of TTFT, TPOT (an older mapping names the TPOT median and P99 just "Median" and
 * "P99") and ITL. Test names carry TP, PP and QPS: `serving_llama8B_tp1_sharegpt_qps_16`,
 * `tp8_pp1_qps_16`, `tp4_pp2_no_IB_qps_01`. Std deviations and p90/p95 are not in the table.
 */
const opt = RawNum.nullable().optional();
export const PerfRow = z.looseObject({
  'Test name': z.string(),
  GPU: z.string().optional(),
  '# of req.': z.int().nonnegative(),
  'Tput (req/s)': RawNum,
  'Output Tput (tok/s)': RawNum,
  'Total Token Tput (tok/s)': opt,
  'Total Tput (tok/s)': opt,
  'Total input tokens': z.int().nonnegative().nullable().optional(),
  'Total output tokens': z.int().nonnegative().nullable().optional(),
  'Mean TTFT (ms)': RawNum,
  'Median TTFT (ms)': opt,
  'P99 TTFT (ms)': opt,
  'Std TTFT (ms)': opt,
  'Mean TPOT (ms)': opt,
  'Median TPOT (ms)': opt,
  'P99 TPOT (ms)': opt,
  Median: opt,
  P99: opt,
  'Mean ITL (ms)': opt,
  'Median ITL (ms)': opt,
  'P99 ITL (ms)': opt,
});

export function isPerfTable(v: unknown): v is unknown[] {
  return Array.isArray(v) && v.length > 0 && v.every((r) => isObject(r) && 'Test name' in r && !('Successful req.' in r)) && v.some((r) => isObject(r) && '# of req.' in r);
}

const QPS = /_qps_(inf|\d+(?:\.\d+)?)$/i;

export function parsePerfTable(rows: unknown[], warnings: string[]): ParsedRun[] {
  const runs: ParsedRun[] = [];
  for (const [i, raw] of rows.entries()) {
    const label = `rows[${i}]`;
    if (!isObject(raw) || !('Mean TTFT (ms)' in raw)) {
      const kind = isObject(raw) && 'Mean latency (ms)' in raw ? 'latency' : 'offline throughput';
      warnings.push(`${label}: ${kind} test "${isObject(raw) ? String(raw['Test name']) : '?'}" skipped: not a serving benchmark`);
      continue;
    }
    runs.push(parseRow(raw, label));
  }
  return runs;
}

function parseRow(raw: Record<string, unknown>, label: string): ParsedRun {
  const r = parseRaw(PerfRow, raw, label);
  const name = r['Test name'];
  const tp = Number(/(?:^|_)tp(\d+)(?=_|$)/i.exec(name)?.[1] ?? NaN);
  const pp = Number(/(?:^|_)pp(\d+)(?=_|$)/i.exec(name)?.[1] ?? 1);
  const qps = QPS.exec(name)?.[1];
  if (!Number.isInteger(tp) || tp < 1) throw rejected(`${label}: test name "${name}" has no tp<N>: the tensor-parallel size is unknown`);
  if (pp > 1) {
    // lm-bench's configs have no pipeline-parallel knob; stored as TP-only the run would teach wrong costs.
    throw rejected(`${label}: test "${name}" ran pipeline parallel ${pp}, which lm-bench's server config cannot express`);
  }
  const d = newDraft('linear', label);
  d.backend = 'vllm';
  d.endpoint_type = 'vllm';
  d.label = name;
  if (qps !== undefined) {
    d.request_rate = qps.toLowerCase() === 'inf' ? Infinity : Number(qps);
    // The suite sends Poisson arrivals (vLLM's default burstiness 1).
    d.burstiness = 1;
  }
  d.max_concurrency = null;
  // The rows are `vllm bench serve` results renamed (convert-results-json-to-markdown.py): the rates share one duration.
  d.rateDefinitions = {
    tool: 'vLLM',
    rates: VLLM_RATES,
    fileNames: {
      completed: '# of req.',
      request_throughput: 'Tput (req/s)',
      output_throughput: 'Output Tput (tok/s)',
      total_token_throughput: r['Total Token Tput (tok/s)'] !== undefined && r['Total Token Tput (tok/s)'] !== null ? 'Total Token Tput (tok/s)' : 'Total Tput (tok/s)',
      total_input_tokens: 'Total input tokens',
      total_output_tokens: 'Total output tokens',
    },
  };
  put(d, 'completed', r['# of req.']);
  put(d, 'request_throughput', r['Tput (req/s)']);
  put(d, 'output_throughput', r['Output Tput (tok/s)']);
  put(d, 'total_token_throughput', r['Total Token Tput (tok/s)'] ?? r['Total Tput (tok/s)'] ?? undefined);
  put(d, 'total_input_tokens', r['Total input tokens'] ?? undefined);
  put(d, 'total_output_tokens', r['Total output tokens'] ?? undefined);
  put(d, 'mean_ttft_ms', r['Mean TTFT (ms)']);
  put(d, 'median_ttft_ms', r['Median TTFT (ms)'] ?? undefined);
  put(d, 'p99_ttft_ms', r['P99 TTFT (ms)'] ?? undefined);
  put(d, 'std_ttft_ms', r['Std TTFT (ms)'] ?? undefined);
  put(d, 'mean_tpot_ms', r['Mean TPOT (ms)'] ?? undefined);
  put(d, 'median_tpot_ms', r['Median TPOT (ms)'] ?? r.Median ?? undefined);
  put(d, 'p99_tpot_ms', r['P99 TPOT (ms)'] ?? r.P99 ?? undefined);
  put(d, 'mean_itl_ms', r['Mean ITL (ms)'] ?? undefined);
  put(d, 'median_itl_ms', r['Median ITL (ms)'] ?? undefined);
  put(d, 'p99_itl_ms', r['P99 ITL (ms)'] ?? undefined);
  d.notes.push('vLLM performance-benchmark table (2025): failures, std deviations and p90/p95 are not in the table');
  // "serving_<model>_tp…": the model as the suite wrote it (an HF name with "/" turned into "-").
  const model = /^serving_(.+?)_tp\d+/i.exec(name)?.[1];
  d.model_id = model;
  const { result, meta } = buildResult(d);
  meta.notes.push('server config: tensor_parallel_size from the test name; other knobs from the flags or a sidecar');
  // "8xNVIDIA H100 80GB HBM3": the script prefixes the GPU count of the node.
  const gpu = r.GPU === undefined ? undefined : r.GPU.replace(/^\d+x/, '').trim();
  return {
    label,
    record: raw,
    result,
    meta,
    hints: { serverConfig: { tensor_parallel_size: tp }, gpuCount: tp, ...(gpu ? { gpu } : {}), ...(model ? { model } : {}) },
  };
}
