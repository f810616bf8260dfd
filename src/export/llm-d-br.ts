import { stringify } from 'yaml';
import type { ResultMetric } from '../domain/index.js';
import { burstiness, figure, goodput, meanPerCompleted, requestRate, stat, startEpochMs, text } from './figures.js';
import { shortId, subjectLabel } from './ids.js';
import { energyBlock, serverMetricsBlock } from './lm-bench-blocks.js';
import { compact, ENGINE_LABEL, scenario } from './llm-d-br-scenario.js';
import type { ExportItem } from './types.js';

/**
 * One stored run or trial → an llm-d Benchmark Report v0.2 (llm-d/llm-d-benchmark
 * `llmdbenchmark/analysis/benchmark_report/br_v0_2_json_schema.json`), as YAML like llm-d's harness
 * writes it. Pure. Latencies keep lm-bench's milliseconds (units `ms`, `ms/token`: the schema allows
 * them, and a figure that is not converted is the stored one exactly). A statistic whose mean
 * lm-bench lacks cannot be a Statistics block (the schema requires a mean): its percentiles go to
 * `results.observability.lm_bench_latency` instead; other missing figures are left out. What the schema
 * has no exact field for (the stored duration, counts and token totals, goodput, burstiness, peaks, the
 * date, energy, server peaks) goes under `results.observability.lm_bench_*`, which the schema's
 * Observability allows, so lm-bench's ingest reads the run back exactly; `run.uid` of a stored run is its
 * dedupe key, so ingesting the report into the history it came from adds nothing.
 */
export const BR_VERSION = '0.2';

type Json = Record<string, unknown>;

export function benchmarkReport(item: ExportItem): Json {
  return compact({ version: BR_VERSION, run: run(item), scenario: scenario(item), results: results(item) });
}

/** The report as YAML text. */
export function benchmarkReportYaml(item: ExportItem): string {
  return stringify(benchmarkReport(item));
}

function run(item: ExportItem): Json {
  const s = item.subject;
  const sim = item.result.lmb.source === 'sim';
  const where = s.kind === 'run' ? `${subjectLabel(s)}, ${s.source_format}` : subjectLabel(s);
  return compact({
    // A run's uid is its dedupe key in the history, whole, so lm-bench's ingest knows the report for the run.
    uid: s.kind === 'run' ? s.content_hash : (s.content_hash ?? shortId({ lm_bench: 'trial', study: s.study, study_id: s.study_id, trial_id: s.trial_id })),
    // A study is an experiment: its trials share the id; a run of the history stands alone.
    eid: s.kind === 'trial' ? shortId({ lm_bench: 'study', study: s.study, study_id: s.study_id }) : null,
    time: runTime(item),
    // llm-d-prism shows `description` as the run's label: `<model> [<experiment>]`, as llm-d writes it.
    description: `${item.model_name} [lm-bench ${where}${sim ? ', simulated' : ''}]`,
    keywords: ['lm-bench', item.result.lmb.source],
  });
}

/** The load window: from when the first request went out, for the run's duration. */
function runTime(item: ExportItem): Json | null {
  const start = startEpochMs(item);
  const duration = figure(item, 'duration');
  if (start === null) return null;
  return compact({
    start: new Date(start).toISOString(),
    end: duration === null ? null : new Date(start + duration * 1000).toISOString(),
    duration: duration === null ? null : `PT${duration}S`,
  });
}

function results(item: ExportItem): Json {
  const aggregate = compact({ requests: requests(item), latency: latency(item), throughput: throughput(item) });
  return compact({ request_performance: { aggregate }, observability: observability(item) });
}

function requests(item: ExportItem): Json | null {
  const completed = figure(item, 'completed');
  const failed = figure(item, 'failed');
  if (completed === null || failed === null) return null;
  const mean = (key: 'total_input_tokens' | 'total_output_tokens'): Json | null => {
    const m = meanPerCompleted(item, key);
    return m === null ? null : { units: 'count', mean: m };
  };
  return compact({ total: completed + failed, failures: failed, input_length: mean('total_input_tokens'), output_length: mean('total_output_tokens') });
}

/** The report's latency blocks: llm-d's name, lm-bench's metric, the units. */
const LATENCIES: readonly (readonly [string, ResultMetric, string])[] = [
  ['time_to_first_token', 'ttft', 'ms'],
  ['time_per_output_token', 'tpot', 'ms/token'],
  ['inter_token_latency', 'itl', 'ms/token'],
  ['request_latency', 'e2el', 'ms'],
];

/**
 * vLLM's stats of one metric as a Statistics block (median is p50), with its mean or, `withMean` false,
 * for a metric whose source recorded percentiles but no mean; null when it has no such figure.
 */
function statistics(item: ExportItem, metric: ResultMetric, units: string, withMean: boolean): Json | null {
  const mean = stat(item, 'mean', metric);
  if ((mean !== null) !== withMean) return null;
  const s = compact({
    units,
    mean,
    stddev: stat(item, 'std', metric),
    p50: stat(item, 'p50', metric),
    p90: stat(item, 'p90', metric),
    p95: stat(item, 'p95', metric),
    p99: stat(item, 'p99', metric),
  });
  return Object.keys(s).length > 1 ? s : null;
}

function latencyBlocks(item: ExportItem, withMean: boolean): Json | null {
  const l = compact(Object.fromEntries(LATENCIES.map(([name, metric, units]) => [name, statistics(item, metric, units, withMean)])));
  return Object.keys(l).length === 0 ? null : l;
}

/** The report's latencies: a statistic without a mean cannot be one (the schema requires it). */
function latency(item: ExportItem): Json | null {
  return latencyBlocks(item, true);
}

function throughput(item: ExportItem): Json | null {
  const rate = (units: string, mean: number | null, max: number | null = null): Json | null => (mean === null ? null : compact({ units, mean, max }));
  const t = compact({
    // The input tokens' rate over the run (vLLM reports the total, not the rate): what a reader of the
    // report multiplies back by the run's length to recover the total.
    input_token_rate: rate('tokens/s', inputTokenRate(item)),
    // vLLM's peak output tokens per second is the maximum of the output rate over the run.
    output_token_rate: rate('tokens/s', figure(item, 'output_throughput'), figure(item, 'max_output_tokens_per_s')),
    total_token_rate: rate('tokens/s', figure(item, 'total_token_throughput')),
    request_rate: rate('queries/s', figure(item, 'request_throughput')),
  });
  return Object.keys(t).length === 0 ? null : t;
}

/** total_input_tokens ÷ duration, as output_throughput is total_output_tokens ÷ duration; null without both. */
function inputTokenRate(item: ExportItem): number | null {
  const total = figure(item, 'total_input_tokens');
  const duration = figure(item, 'duration');
  return total === null || duration === null || duration <= 0 ? null : total / duration;
}

/**
 * Power as the engine's `power_consumption` (all its GPUs together); energy and the server's peaks,
 * which have no field of their own, as ad-hoc entries (the schema's Observability takes extra keys,
 * as llm-d's own per-metric entries do).
 */
function observability(item: ExportItem): Json | null {
  const power = item.result.energy?.avg_power_w ?? null;
  const o = compact({
    components: power === null ? null : [{ component_label: ENGINE_LABEL, aggregate: { power_consumption: { units: 'Watts', mean: power } } }],
    lm_bench_energy: energyBlock(item),
    lm_bench_server_metrics: serverMetricsBlock(item),
    // Percentiles whose mean the source did not record (ML.ENERGY's ITL, SGLang's median TTFT): the
    // report's Statistics require a mean, so they sit here, with the same names and units, not lost.
    lm_bench_latency: latencyBlocks(item, false),
    lm_bench_figures: figuresBlock(item),
  });
  return Object.keys(o).length === 0 ? null : o;
}

/**
 * The run's figures the report has no field for, or only a rounded or derived one (its duration and
 * token totals are otherwise rates × completed ÷ request rate): each the stored one, gated like every
 * figure, so the run comes back exactly.
 */
function figuresBlock(item: ExportItem): Json | null {
  const lmb = item.result.lmb;
  const f = compact({
    // The counts too: the report states them only as a total with its failures, so without a failure
    // count a source's completed requests would not come back.
    completed: figure(item, 'completed'),
    failed: figure(item, 'failed'),
    num_prompts: figure(item, 'num_prompts'),
    duration: figure(item, 'duration'),
    total_input_tokens: figure(item, 'total_input_tokens'),
    total_output_tokens: figure(item, 'total_output_tokens'),
    max_output_tokens_per_s: figure(item, 'max_output_tokens_per_s'),
    max_concurrent_requests: figure(item, 'max_concurrent_requests'),
    request_goodput: goodput(item),
    request_rate: requestRate(item),
    burstiness: burstiness(item),
    max_concurrency: item.result.max_concurrency,
    date: text(item, 'date'),
    mean_client_queue_ms: item.unavailable.includes('lmb.mean_client_queue_ms') ? null : lmb.mean_client_queue_ms,
    p99_client_queue_ms: item.unavailable.includes('lmb.p99_client_queue_ms') ? null : lmb.p99_client_queue_ms,
  });
  return Object.keys(f).length === 0 ? null : f;
}
