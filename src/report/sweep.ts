import type { BenchmarkResult } from '../domain/index.js';
import { meanLength } from '../domain/index.js';
import { bottleneckLabel, evidenceText, hasBottleneck, adviceText } from '../diagnose/text.js';
import { chartSection, htmlPage, type Cell, type Section } from './html.js';
import type { VlSpec } from './render.js';

/**
 * The HTML summary of a load-runner sweep: one table row per point and plots of throughput, TTFT and
 * ITL percentiles against concurrency and against input length. Pure apart from SVG rendering.
 */
export interface SweepRow {
  readonly point: number;
  readonly concurrency: number | null;
  readonly request_rate: number | null;
  readonly input_len: number | null;
  readonly output_len: number | null;
  readonly result: BenchmarkResult;
}

export function sweepRows(results: readonly BenchmarkResult[]): SweepRow[] {
  return results.map((r, i) => {
    const w = r.workload;
    return {
      point: i + 1,
      concurrency: r.max_concurrency,
      request_rate: typeof r.request_rate === 'number' ? r.request_rate : null,
      input_len: w === null ? null : Math.round(meanLength(w.input_len) + (w.shared_prefix?.length ?? 0)),
      output_len: w === null ? null : Math.round(meanLength(w.output_len)),
      result: r,
    };
  });
}

type Datum = Record<string, number | string | null>;

function lineSpec(data: Datum[], x: { field: string; title: string; log?: boolean }, y: { field: string; title: string }, color: { field: string; title: string }, dash?: string): VlSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 460,
    height: 260,
    data: { values: data },
    mark: { type: 'line', point: true, tooltip: true },
    encoding: {
      x: { field: x.field, type: 'quantitative', title: x.title, scale: x.log === true ? { type: 'log', base: 2 } : { zero: false } },
      y: { field: y.field, type: 'quantitative', title: y.title },
      color: { field: color.field, type: 'nominal', title: color.title },
      ...(dash === undefined ? {} : { strokeDash: { field: dash, type: 'nominal', title: 'percentile' } }),
    },
  };
}

/** Long format for percentile plots: one datum per point × percentile. */
function percentileData(rows: readonly SweepRow[], metric: 'ttft' | 'itl' | 'tpot'): Datum[] {
  return rows.flatMap((r) =>
    (['p50', 'p99'] as const).map((p) => ({
      concurrency: r.concurrency,
      input_len: r.input_len,
      percentile: p,
      value: r.result[`${p}_${metric}_ms`],
      series: `${p} · in ${r.input_len ?? '?'}`,
      series_c: `${p} · c ${r.concurrency ?? '?'}`,
    })),
  );
}

export async function sweepSections(results: readonly BenchmarkResult[]): Promise<Section[]> {
  const rows = sweepRows(results);
  const columns = ['#', 'concurrency', 'rate (req/s)', 'input len', 'output len', 'completed', 'failed', 'req/s', 'output tok/s', 'total tok/s', 'TTFT p50 (ms)', 'TTFT p99 (ms)', 'TPOT p50 (ms)', 'ITL p50 (ms)', 'ITL p99 (ms)', 'E2EL p99 (ms)', 'steady out tok/s', 'bottleneck'];
  const table: Cell[][] = rows.map((r) => [
    r.point, r.concurrency, r.request_rate, r.input_len, r.output_len, r.result.completed, r.result.failed,
    r.result.request_throughput, r.result.output_throughput, r.result.total_token_throughput,
    r.result.median_ttft_ms, r.result.p99_ttft_ms, r.result.median_tpot_ms, r.result.median_itl_ms, r.result.p99_itl_ms, r.result.p99_e2el_ms,
    r.result.steady_state?.output_throughput ?? null, r.result.diagnosis === undefined ? null : bottleneckLabel(r.result.diagnosis),
  ]);
  const sections: Section[] = [{ kind: 'table', title: 'Sweep points', columns, rows: table }, ...whySections(rows)];
  const byConc = rows.filter((r) => r.concurrency !== null);
  const tput: Datum[] = rows.map((r) => ({ concurrency: r.concurrency, input_len: r.input_len, output_throughput: r.result.output_throughput, in: `in ${r.input_len}`, c: `c ${r.concurrency}` }));
  const distinct = (k: 'concurrency' | 'input_len'): number => new Set(rows.map((r) => r[k])).size;
  if (byConc.length > 0 && distinct('concurrency') > 1) {
    sections.push(await chartSection('Output throughput vs concurrency', lineSpec(tput, { field: 'concurrency', title: 'concurrency', log: true }, { field: 'output_throughput', title: 'output tokens/s' }, { field: 'in', title: 'input length' })));
    sections.push(await chartSection('TTFT vs concurrency', lineSpec(percentileData(byConc, 'ttft'), { field: 'concurrency', title: 'concurrency', log: true }, { field: 'value', title: 'TTFT (ms)' }, { field: 'input_len', title: 'input length' }, 'percentile')));
    sections.push(await chartSection('ITL vs concurrency', lineSpec(percentileData(byConc, 'itl'), { field: 'concurrency', title: 'concurrency', log: true }, { field: 'value', title: 'ITL (ms)' }, { field: 'input_len', title: 'input length' }, 'percentile')));
  }
  if (distinct('input_len') > 1) {
    sections.push(await chartSection('Output throughput vs input length', lineSpec(tput, { field: 'input_len', title: 'input length (tokens)', log: true }, { field: 'output_throughput', title: 'output tokens/s' }, { field: 'c', title: 'concurrency' })));
    sections.push(await chartSection('TTFT vs input length', lineSpec(percentileData(rows, 'ttft'), { field: 'input_len', title: 'input length (tokens)', log: true }, { field: 'value', title: 'TTFT (ms)' }, { field: 'concurrency', title: 'concurrency' }, 'percentile')));
    sections.push(await chartSection('ITL vs input length', lineSpec(percentileData(rows, 'itl'), { field: 'input_len', title: 'input length (tokens)', log: true }, { field: 'value', title: 'ITL (ms)' }, { field: 'concurrency', title: 'concurrency' }, 'percentile')));
  }
  const errors = rows.filter((r) => r.result.failed > 0);
  if (errors.length > 0) {
    sections.push({
      kind: 'table',
      title: 'Errors by kind',
      columns: ['#', 'failed', 'kinds'],
      rows: errors.map((r) => [r.point, r.result.failed, Object.entries(r.result.lmb.errors_by_kind).map(([k, v]) => `${k}: ${v}`).join(', ')]),
    });
  }
  return sections;
}

/** Why each point that missed its SLOs or saturated did: the bottleneck, its numbers, the knobs to try. */
function whySections(rows: readonly SweepRow[]): Section[] {
  const failedSome = (d: BenchmarkResult['diagnosis']): boolean => (d?.failures ?? null) !== null;
  const short = rows.filter((r) => failedSome(r.result.diagnosis) || hasBottleneck(r.result.diagnosis));
  if (short.length === 0) return [];
  return [
    {
      kind: 'table',
      title: 'Why points missed their SLOs or saturated',
      columns: ['#', 'bottleneck', 'missed', 'evidence (seen during the run)', 'try'],
      rows: short.map((r) => {
        const d = r.result.diagnosis as NonNullable<BenchmarkResult['diagnosis']>;
        return [r.point, bottleneckLabel(d), d.missed.length === 0 ? 'saturated' : d.missed.join(', '), evidenceText(d).join('; '), adviceText(d) === '' ? d.summary : adviceText(d)];
      }),
    },
  ];
}

/** One control period of `run --mode slo-hold` (loadgen/slo-hold.ts RatePoint), as the plot reads it. */
export interface RateTimelinePoint {
  readonly t_s: number;
  readonly offered_rps: number;
  readonly achieved_rps: number;
  readonly value_ms: number | null;
}

/** The settle of an slo-hold run: offered and achieved rate, and the held percentile against its limit. */
export function rateTimelineSpecs(points: readonly RateTimelinePoint[], limitMs: number | null, label: string): { rates: VlSpec; values: VlSpec } {
  const rates: Datum[] = points.flatMap((p) => [
    { t: p.t_s, rps: p.offered_rps, series: 'offered' },
    { t: p.t_s, rps: p.achieved_rps, series: 'completed' },
  ]);
  const values: Datum[] = points.filter((p) => p.value_ms !== null).map((p) => ({ t: p.t_s, value: p.value_ms, series: label }));
  if (limitMs !== null) for (const p of points) values.push({ t: p.t_s, value: limitMs, series: 'limit' });
  return {
    rates: lineSpec(rates, { field: 't', title: 'time (s)' }, { field: 'rps', title: 'requests/s' }, { field: 'series', title: 'rate' }),
    values: lineSpec(values, { field: 't', title: 'time (s)' }, { field: 'value', title: `${label} (ms)` }, { field: 'series', title: '' }),
  };
}

async function timelineSections(points: readonly RateTimelinePoint[], limitMs: number | null, label: string): Promise<Section[]> {
  const specs = rateTimelineSpecs(points, limitMs, label);
  return [await chartSection('Request rate over time', specs.rates), await chartSection(`${label} over time (control window)`, specs.values)];
}

export async function sweepReportHtml(
  results: readonly BenchmarkResult[],
  opts: { title: string; generatedAt?: string; interactive?: boolean; verdict?: string; rateTimeline?: readonly RateTimelinePoint[]; timelineLabel?: string; limitMs?: number },
): Promise<string> {
  const first = results[0];
  const verdict: Section[] = opts.verdict === undefined ? [] : [{ kind: 'text', text: opts.verdict }];
  const timeline = opts.rateTimeline === undefined || opts.rateTimeline.length === 0 ? [] : await timelineSections(opts.rateTimeline, opts.limitMs ?? null, opts.timelineLabel ?? 'controlled percentile');
  const intro: Section = {
    kind: 'text',
    text: `${results.length} point(s) against ${first?.model_id ?? '?'} (${first?.endpoint_type ?? '?'}). Metrics follow vllm bench serve's definitions: TTFT to the first token chunk, TPOT excludes the first token, ITL pools every gap between chunks; throughputs over the whole run, drain included, with the steady-state window's output throughput beside them.`,
  };
  return htmlPage({ title: opts.title, sections: [...verdict, intro, ...timeline, ...(await sweepSections(results))], ...(opts.generatedAt === undefined ? {} : { generatedAt: opts.generatedAt }), ...(opts.interactive === undefined ? {} : { interactive: opts.interactive }) });
}
