import { aiperfEnergy } from './aiperf-energy.js';
import { readCsv } from './csv-text.js';
import { at, numAt, posIntAt, strAt, vllmDate } from './dig.js';
import { buildResult, newDraft, put, type Draft } from './draft.js';
import { rejected } from './json-text.js';
import { avgOf, collectBlocks, countOf, csvBlocks, putAvg, putLatency, type Block, type Blocks } from './metric-blocks.js';
import type { ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * NVIDIA AIPerf (genai-perf's successor) `profile_export_aiperf.json` and `profile_export_aiperf.csv`.
 * Versions: 0.1.x wraps the metric blocks in `records` (each with `tag` and `header`, TTFT as `ttft`);
 * later files put them at the top level, from 0.8 with `schema_version` 1.0–1.5 (1.1 `count`/`sum`,
 * 1.2–1.3 `run_info`, 1.5 `nvidia_*` telemetry names; docs/reference/json-export-schema.md upstream).
 *
 * Figures are read as measured (never from `input_config`, which is what was asked):
 * - completed ← `request_count` (valid requests), failed ← `error_request_count`, else the counts of
 *   `error_summary` (an empty list: none failed), duration ← `benchmark_duration` (s);
 * - total input/output tokens ← `total_isl`/`total_osl` (output sequence lengths including reasoning
 *   tokens, which is what vLLM's completion-token count holds and what `output_token_throughput` uses);
 * - TTFT ← `time_to_first_token`, E2EL ← `request_latency`, TPOT ← `inter_token_latency` (per request
 *   (latency − TTFT)/(OSL − 1): vLLM's TPOT), ITL ← `inter_chunk_latency` (gaps between stream chunks
 *   pooled over all requests: vLLM's ITL);
 * - AIPerf's `std` is the sample standard deviation; vLLM's is the population one, so it is scaled by
 *   √((n−1)/n) when the block states its count n (per-request metrics of a CSV use request_count).
 * Power and energy come from `telemetry_data` and the `nvidia_*`/`amd_*` totals (aiperf-energy.ts).
 */
const ALIASES: Record<string, string> = { ttft: 'time_to_first_token', ttst: 'time_to_second_token' };

/** CSV display names (lower case, unit stripped) → JSON tags. */
const CSV_NAMES: Record<string, string> = {
  'time to first token': 'time_to_first_token',
  'inter token latency': 'inter_token_latency',
  'inter chunk latency': 'inter_chunk_latency',
  'request latency': 'request_latency',
  'input sequence length': 'input_sequence_length',
  'output sequence length': 'output_sequence_length',
  'benchmark duration': 'benchmark_duration',
  'error request count': 'error_request_count',
  'request count': 'request_count',
  'request throughput': 'request_throughput',
  'output token throughput': 'output_token_throughput',
  'total token throughput': 'total_token_throughput',
  'total input sequence length': 'total_isl',
  'total output sequence length': 'total_osl',
  goodput: 'goodput',
};

/** Keys only AIPerf writes (genai-perf exports share the metric-block shape). */
const AIPERF_ONLY = ['aiperf_version', 'schema_version', 'benchmark_duration', 'total_isl', 'total_osl', 'error_request_count', 'inter_chunk_latency', 'was_cancelled', 'error_summary', 'run_info'];

export function isAiperfExport(v: unknown): v is Record<string, unknown> {
  if (!isObject(v)) return false;
  if (isObject(v['records']) && Object.values(v['records']).some((b) => isObject(b) && 'tag' in b && 'avg' in b)) return true;
  const cfg = v['input_config'];
  const aiperfConfig = isObject(cfg) && ('loadgen' in cfg || 'phases' in cfg || isObject(cfg['models']) || isObject(at(cfg, ['endpoint', 'model_names'])) || Array.isArray(at(cfg, ['endpoint', 'model_names'])));
  return (isObject(v['request_latency']) || isObject(v['request_count'])) && (AIPERF_ONLY.some((k) => k in v) || aiperfConfig);
}

/** Whether CSV text is an AIPerf export (its single-figure table has rows genai-perf never writes). */
export function isAiperfCsv(text: string, name: string): boolean {
  if (/aiperf/i.test(name)) return true;
  return /^(Benchmark Duration|Total Input Sequence Length|Error Request Count|Inter Chunk Latency)\b/m.test(text);
}

export function parseAiperfExport(raw: Record<string, unknown>, label = 'document'): ParsedRun {
  const wrapped = isObject(raw['records']);
  const source = wrapped ? (raw['records'] as Record<string, unknown>) : raw;
  const blocks: Blocks = {};
  for (const [k, b] of Object.entries(collectBlocks(source, label))) blocks[ALIASES[k] ?? k] = b;
  // Multi-run aggregates and collated files share the top-level keys but hold {mean, ci_low, …} blocks.
  if (['request_count', 'request_latency', 'error_request_count'].every((t) => avgOf(blocks, t) === undefined)) {
    throw rejected(`${label}: no request_count, error_request_count or request_latency with an "avg": not a per-run AIPerf profile export (an aggregate or collated file?)`);
  }
  const d = newDraft('linear', label);
  d.notes.push(`AIPerf ${typeof raw['aiperf_version'] === 'string' ? raw['aiperf_version'] : wrapped ? '0.1.x (records)' : '(no version)'}${typeof raw['schema_version'] === 'string' ? `, schema ${raw['schema_version']}` : ''}`);
  const cfg = raw['input_config'];
  fromBlocks(d, blocks, label, errorSummaryCount(raw['error_summary'], label));
  context(d, cfg);
  d.date = vllmDate(raw['start_time']);
  if (raw['was_cancelled'] === true) d.notes.push('AIPerf reports the run was cancelled: its figures cover the requests that finished');
  const model = modelOf(cfg);
  d.model_id = model;
  const energy = aiperfEnergy(raw, d.notes);
  const { result, meta } = buildResult(d);
  return { label, record: raw, result: energy === undefined ? result : { ...result, energy }, meta, hints: model === undefined ? {} : { model } };
}

export function parseAiperfCsv(text: string, file: string): ParsedRun {
  const rows = readCsv(text);
  const { blocks } = csvBlocks(rows, CSV_NAMES, file);
  if (avgOf(blocks, 'request_latency') === undefined && avgOf(blocks, 'request_count') === undefined) {
    throw rejected(`${file}: no Request Latency or Request Count row: not an AIPerf profile export`);
  }
  const d = newDraft('linear', file);
  d.notes.push('AIPerf CSV export: figures rounded to 2 decimals by AIPerf; model, concurrency and rate are not in the CSV');
  fromBlocks(d, blocks, file, undefined);
  const { result, meta } = buildResult(d);
  return { label: 'document', record: { csv: rows.map((r) => r.cells) }, result, meta, hints: {} };
}

/** Seconds per unit of AIPerf's `benchmark_duration` ("sec" in every known version). */
const S_PER_UNIT: Record<string, number> = { sec: 1, s: 1, seconds: 1, ms: 1e-3, us: 1e-6, ns: 1e-9 };

function fromBlocks(d: Draft, blocks: Blocks, label: string, errorsFromSummary: number | undefined): void {
  // Every AIPerf version defines request_throughput as the valid request count / benchmark_duration. Its
  // token throughputs are not held to total_isl/total_osl: some versions count other tokens for them
  // (a "benchmark token count", reasoning tokens or not).
  d.rateDefinitions = { tool: 'AIPerf', rates: ['request_throughput'], fileNames: { completed: 'request_count', duration: 'benchmark_duration' } };
  const completed = countOf(blocks, 'request_count', label);
  put(d, 'completed', completed);
  const errors = countOf(blocks, 'error_request_count', label) ?? errorsFromSummary;
  put(d, 'failed', errors);
  const duration = avgOf(blocks, 'benchmark_duration');
  if (duration !== undefined) {
    // Any unit but seconds and ms was read as seconds: a duration in ns or minutes was stored wrong by its factor.
    const unit = (blocks['benchmark_duration']?.unit ?? 'sec').trim().toLowerCase();
    const perS = S_PER_UNIT[unit];
    if (perS === undefined) throw rejected(`${label}: benchmark_duration.unit "${unit}" is not a time unit (sec, ms, us, ns)`);
    put(d, 'duration', duration * perS);
  }
  putAvg(d, 'total_input_tokens', blocks, 'total_isl');
  putAvg(d, 'total_output_tokens', blocks, 'total_osl');
  putAvg(d, 'request_throughput', blocks, 'request_throughput');
  putAvg(d, 'output_throughput', blocks, 'output_token_throughput');
  putAvg(d, 'total_token_throughput', blocks, 'total_token_throughput');
  const goodput = avgOf(blocks, 'goodput');
  if (goodput !== undefined) d.request_goodput = goodput;
  // Sample → population std: per-request metrics have n = the block's count, else request_count.
  const pop = (perRequest: boolean) => (b: Block) => {
    const n = typeof b.count === 'number' ? b.count : perRequest ? completed : undefined;
    return n !== undefined && n > 1 ? Math.sqrt((n - 1) / n) : 1;
  };
  putLatency(d, blocks, 'time_to_first_token', 'ttft', { label, stdScale: pop(true) });
  putLatency(d, blocks, 'inter_token_latency', 'tpot', { label, stdScale: pop(true) });
  putLatency(d, blocks, 'inter_chunk_latency', 'itl', { label, stdScale: pop(false) });
  putLatency(d, blocks, 'request_latency', 'e2el', { label, stdScale: pop(true) });
  d.notes.push('tpot from inter_token_latency (per request, vLLM TPOT), itl from inter_chunk_latency (pooled chunk gaps, vLLM ITL); std scaled from sample to population');
}

function errorSummaryCount(v: unknown, label: string): number | undefined {
  if (!Array.isArray(v)) return undefined;
  let n = 0;
  for (const [i, e] of v.entries()) {
    const c = isObject(e) ? e['count'] : undefined;
    if (typeof c !== 'number' || !Number.isInteger(c) || c < 0) throw rejected(`${label}: error_summary[${i}].count: expected a non-negative integer`);
    n += c;
  }
  return n;
}

/** Load settings of the measured phase: concurrency, request rate and its arrival process. */
function context(d: Draft, cfg: unknown): void {
  d.endpoint_type = strAt(cfg, ['endpoint', 'type'], ['endpoint_type']);
  d.backend = 'openai';
  const phases = at(cfg, ['phases']);
  // The last phase whose requests count (AIPerf's warm-up phase is excluded from the results).
  const phase: unknown = Array.isArray(phases) ? (phases as unknown[]).findLast((p) => isObject(p) && p['exclude_from_results'] !== true && p['name'] !== 'warmup') : undefined;
  const concurrency = posIntAt(phase, ['concurrency']) ?? posIntAt(cfg, ['loadgen', 'concurrency']);
  const rate = numAt(phase, ['rate'], ['request_rate']) ?? numAt(cfg, ['loadgen', 'request_rate']);
  const mode = strAt(phase, ['type'], ['rate_mode']) ?? strAt(cfg, ['loadgen', 'request_rate_mode']);
  if (rate !== undefined && rate > 0) {
    d.request_rate = rate;
    if (mode !== undefined && /poisson/i.test(mode)) d.burstiness = 1;
    else if (mode !== undefined && /constant/i.test(mode)) d.burstiness = Infinity;
  } else if (concurrency !== undefined) d.request_rate = Infinity;
  d.max_concurrency = concurrency ?? null;
}

function modelOf(cfg: unknown): string | undefined {
  return strAt(cfg, ['models', 'items', 0, 'name'], ['endpoint', 'model_names'], ['model_names'], ['model']);
}
