import { stringify } from 'yaml';
import type { ResultMetric } from '../domain/index.js';
import { figure, meanPerCompleted, stat, startEpochMs } from './figures.js';
import { shortId, subjectLabel } from './ids.js';
import { compact, ENGINE_LABEL, scenario } from './llm-d-br-scenario.js';
import type { ExportItem } from './types.js';

/**
 * One stored run or trial → an llm-d Benchmark Report v0.2 (llm-d/llm-d-benchmark
 * `llmdbenchmark/analysis/benchmark_report/br_v0_2_json_schema.json`), as YAML like llm-d's harness
 * writes it. Pure. Latencies keep lm-bench's milliseconds (units `ms`, `ms/token`: the schema allows
 * them, and a figure that is not converted is the stored one exactly). A statistic whose mean
 * lm-bench lacks is left out whole (the schema requires a mean); other missing figures are left out.
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
    uid: s.kind === 'run' ? s.content_hash.slice(0, 32) : shortId({ lm_bench: 'trial', study: s.study, study_id: s.study_id, trial_id: s.trial_id }),
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

/** vLLM's stats of one metric as a Statistics block (median is p50); null without a mean. */
function statistics(item: ExportItem, metric: ResultMetric, units: string): Json | null {
  const mean = stat(item, 'mean', metric);
  if (mean === null) return null;
  return compact({
    units,
    mean,
    stddev: stat(item, 'std', metric),
    p50: stat(item, 'p50', metric),
    p90: stat(item, 'p90', metric),
    p95: stat(item, 'p95', metric),
    p99: stat(item, 'p99', metric),
  });
}

function latency(item: ExportItem): Json | null {
  const l = compact({
    time_to_first_token: statistics(item, 'ttft', 'ms'),
    time_per_output_token: statistics(item, 'tpot', 'ms/token'),
    inter_token_latency: statistics(item, 'itl', 'ms/token'),
    request_latency: statistics(item, 'e2el', 'ms'),
  });
  return Object.keys(l).length === 0 ? null : l;
}

function throughput(item: ExportItem): Json | null {
  const rate = (units: string, mean: number | null, max: number | null = null): Json | null => (mean === null ? null : compact({ units, mean, max }));
  const t = compact({
    // vLLM's peak output tokens per second is the maximum of the output rate over the run.
    output_token_rate: rate('tokens/s', figure(item, 'output_throughput'), figure(item, 'max_output_tokens_per_s')),
    total_token_rate: rate('tokens/s', figure(item, 'total_token_throughput')),
    request_rate: rate('queries/s', figure(item, 'request_throughput')),
  });
  return Object.keys(t).length === 0 ? null : t;
}

/**
 * Power as the engine's `power_consumption` (all its GPUs together); energy and the server's peaks,
 * which have no field of their own, as ad-hoc entries (the schema's Observability takes extra keys,
 * as llm-d's own per-metric entries do).
 */
function observability(item: ExportItem): Json | null {
  const e = item.result.energy ?? null;
  const power = e?.avg_power_w ?? null;
  const energy =
    e === null || e.energy_j === null
      ? null
      : compact({
          source: e.source,
          gpus: e.gpus,
          window: e.window,
          avg_power_w: e.avg_power_w,
          energy_j: e.energy_j,
          energy_per_output_token_j: e.energy_per_output_token_j,
          output_tokens_per_joule: e.output_tokens_per_joule,
        });
  const peaks = item.result.server_metrics === null ? {} : compact({ ...item.result.server_metrics });
  const o = compact({
    components: power === null ? null : [{ component_label: ENGINE_LABEL, aggregate: { power_consumption: { units: 'Watts', mean: power } } }],
    lm_bench_energy: energy,
    lm_bench_server_metrics: Object.keys(peaks).length === 0 ? null : peaks,
  });
  return Object.keys(o).length === 0 ? null : o;
}
