import { csvNumber, misfit, readCsv, type CsvRow } from './csv-text.js';
import { buildResult, newDraft, put, putStats } from './draft.js';
import { rejected } from './json-text.js';
import type { ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * GuideLLM `--outputs csv` (`benchmarks.csv`, v0.7+; guidellm `benchmark/outputs/csv.py`): a
 * three-row header — group, field (status and unit, e.g. "Successful ms"), statistic ("Mean",
 * "Median", "Std Dev", "Percentiles") — then one row per benchmark. Percentiles are one cell
 * "[min, p001, p01, p05, p10, p25, p75, p90, p95, p99, max]". Read like the JSON report
 * (guidellm.ts): completed/failed from "Request Counts", duration from "Timings", throughputs as
 * token totals / duration (totals = mean tokens × successful requests), TPOT from "Inter Token
 * Latency", TTFT, E2EL (s → ms); GuideLLM's nearest-rank percentiles are kept as such. The CSV has no
 * per-request records, so nothing is recomputed.
 */
export function isGuidellmCsv(text: string): boolean {
  const first = readCsv(text.slice(0, 4096).split(/\r?\n/)[0] ?? '')[0]?.cells ?? [];
  return first.includes('Request Counts') || (first[0] === 'Run Info' && first.includes('Timings'));
}

type Col = readonly [string, string, string];

export function parseGuidellmCsv(text: string, file: string): ParsedRun[] {
  const rows = readCsv(text).filter((r) => r.cells.length > 0);
  if (rows.length < 4) throw rejected(`${file}: a GuideLLM CSV needs three header rows and at least one benchmark row`);
  const [g, f, s] = rows as [CsvRow, CsvRow, CsvRow];
  const cols: Col[] = g.cells.map((_, i) => [g.cells[i]?.trim() ?? '', f.cells[i]?.trim() ?? '', s.cells[i]?.trim() ?? ''] as const);
  const index = (group: string, field: string, stat = ''): number => {
    const at = cols.findIndex((c) => c[0] === group && c[1] === field && c[2] === stat);
    // A column read twice in the header: which of the two holds the figure is unknown.
    if (at >= 0 && cols.findIndex((c, i) => i > at && c[0] === group && c[1] === field && c[2] === stat) >= 0) {
      throw rejected(`${file}: column "${[group, field, stat].filter(Boolean).join(' / ')}" appears twice in the header, so which one holds the figure is unknown`);
    }
    return at;
  };
  if (index('Request Counts', 'Successful') < 0 || index('Timings', 'Duration', 'Sec') < 0) {
    throw rejected(`${file}: no "Request Counts, Successful" or "Timings, Duration" column: not a GuideLLM v0.7+ benchmarks.csv`);
  }
  return rows.slice(3).map((row, i) => {
    // A row that does not line up with the header is never half-read, nor read one column over.
    const bad = misfit(row, cols.length);
    if (bad !== null) throw rejected(`${file} line ${row.line}: ${bad}`);
    return parseRow(row, i, index, file);
  });
}

function parseRow(row: CsvRow, i: number, index: (g: string, f: string, s?: string) => number, file: string): ParsedRun {
  const label = `row ${i + 1} (line ${row.line})`;
  const cell = (g: string, f: string, s = ''): string | undefined => {
    const k = index(g, f, s);
    return k < 0 ? undefined : row.cells[k];
  };
  const num = (g: string, f: string, s = ''): number | undefined => csvNumber(cell(g, f, s), `${file} ${label}, ${[g, f, s].filter(Boolean).join(' / ')}`);
  const int = (g: string, f: string): number | undefined => {
    const v = num(g, f);
    if (v !== undefined && (!Number.isInteger(v) || v < 0)) throw rejected(`${file} ${label}, ${g} / ${f}: ${v} is not a request count`);
    return v;
  };
  const d = newDraft('nearest_rank', label);
  d.backend = 'openai';
  d.endpoint_type = 'openai';
  d.notes.push('GuideLLM CSV (v0.7+ layout)');
  const successful = int('Request Counts', 'Successful');
  put(d, 'completed', successful);
  put(d, 'failed', int('Request Counts', 'Errored'));
  const duration = num('Timings', 'Duration', 'Sec');
  put(d, 'duration', duration);
  const tokens = (kind: string): number | undefined => {
    const mean = num('Token Metrics', `Successful ${kind} Tokens`, 'Mean');
    return mean === undefined || successful === undefined ? undefined : Math.round(mean * successful);
  };
  const inTokens = tokens('Input');
  const outTokens = tokens('Output');
  put(d, 'total_input_tokens', inTokens);
  put(d, 'total_output_tokens', outTokens);
  if (duration !== undefined && duration > 0) {
    if (successful !== undefined) put(d, 'request_throughput', successful / duration);
    if (outTokens !== undefined) put(d, 'output_throughput', outTokens / duration);
    if (inTokens !== undefined && outTokens !== undefined) put(d, 'total_token_throughput', (inTokens + outTokens) / duration);
    d.notes.push('throughputs = successful requests and token totals (mean × successful) / duration');
  }
  const stats = (metric: 'ttft' | 'tpot' | 'e2el', group: string, unit: string, scale: number): void => {
    const field = `Successful ${unit}`;
    const sc = (x: number | undefined) => (x === undefined ? undefined : x * scale);
    const p = percentiles(cell(group, field, 'Percentiles'), `${file} ${label}, ${group} percentiles`);
    putStats(d, metric, { mean: sc(num(group, field, 'Mean')), median: sc(num(group, field, 'Median')), std: sc(num(group, field, 'Std Dev')), p90: sc(p?.[7]), p95: sc(p?.[8]), p99: sc(p?.[9]) });
  };
  stats('ttft', 'Time to First Token', 'ms', 1);
  stats('tpot', 'Inter Token Latency', 'ms', 1);
  stats('e2el', 'Request Latency', 'Sec', 1000);
  d.notes.push('itl unavailable: GuideLLM does not record vLLM\'s pooled inter-chunk gaps');
  const strategy = cell('Benchmark', 'Strategy');
  if (strategy === 'synchronous') {
    d.request_rate = Infinity;
    d.max_concurrency = 1;
  }
  const model = backendModel(cell('Run Info', 'Backend'));
  d.model_id = model;
  const { result, meta } = buildResult(d);
  return { label, record: row.cells, result, meta, hints: model === undefined ? {} : { model } };
}

/** "[min, p001, p01, p05, p10, p25, p75, p90, p95, p99, max]" → the 11 numbers, or undefined. */
function percentiles(raw: string | undefined, where: string): number[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const inner = /^\s*\[(.*)\]\s*$/.exec(raw)?.[1];
  const parts = inner?.split(',').map((x) => Number(x.trim()));
  if (parts?.length !== 11 || parts.some((x) => !Number.isFinite(x))) throw rejected(`${where}: "${raw}" is not GuideLLM's 11-value percentile list`);
  return parts;
}

function backendModel(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    return isObject(v) && typeof v['model'] === 'string' && v['model'] !== '' ? v['model'] : undefined;
  } catch {
    return undefined;
  }
}
