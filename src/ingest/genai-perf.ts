import { readCsv } from './csv-text.js';
import { at, numAt, posIntAt, strAt } from './dig.js';
import { buildResult, newDraft, put, type Draft } from './draft.js';
import { rejected } from './json-text.js';
import { avgOf, collectBlocks, countOf, csvBlocks, putAvg, putLatency, type Blocks } from './metric-blocks.js';
import type { ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * genai-perf `profile_export_genai_perf.json` and `profile_export_genai_perf.csv` (see
 * docs/references/load-runners.md#genai-perf-exports): one statistic block per metric plus `input_config`, the arguments — flat (`model`,
 * `concurrency`, `request_count`, … up to 0.0.14) or nested (0.0.15+: `model_names`,
 * `endpoint.{type,service_kind}`, `perf_analyzer.stimulus.{concurrency,request_rate}`).
 *
 * Figures as measured:
 * - completed ← the `request_count` metric (genai-perf counts the requests it measured, len of the
 *   latencies); `input_config.request_count` is what was asked and is never used for it. Files from
 *   before the metric existed have no measured count: completed, duration and token totals are then
 *   unavailable. genai-perf exports no error count: failed is unavailable.
 * - duration = completed / request_throughput (genai-perf's own definition of the throughput), token
 *   totals = completed × the mean input/output sequence lengths (the means are over those requests).
 * - TTFT ← `time_to_first_token`, E2EL ← `request_latency`, TPOT ← `inter_token_latency` (per request
 *   (latency − TTFT)/(OSL − 1): vLLM's TPOT). vLLM's pooled ITL is not exported: unavailable.
 * - numpy statistics: linear percentiles, population std, as vLLM. Output tokens are counted by the
 *   client tokenizer, not the server's `usage` (noted).
 */
const CSV_NAMES: Record<string, string> = {
  'time to first token': 'time_to_first_token',
  'inter token latency': 'inter_token_latency',
  'request latency': 'request_latency',
  'output sequence length': 'output_sequence_length',
  'input sequence length': 'input_sequence_length',
  'output token throughput': 'output_token_throughput',
  'request throughput': 'request_throughput',
  'request count': 'request_count',
  'request goodput': 'request_goodput',
};

export function isGenaiPerfExport(v: unknown): v is Record<string, unknown> {
  return isObject(v) && isObject(v['request_latency']) && 'avg' in v['request_latency'] && isObject(v['request_throughput']);
}

export function parseGenaiPerfExport(raw: Record<string, unknown>, label = 'document'): ParsedRun {
  const blocks = collectBlocks(raw, label);
  const cfg = raw['input_config'];
  const nested = isObject(cfg) && (isObject(cfg['perf_analyzer']) || isObject(cfg['endpoint']));
  const d = newDraft('linear', label);
  d.notes.push(`genai-perf (${nested ? 'nested input_config, 0.0.15+' : 'flat input_config'})`);
  fromBlocks(d, blocks, label);
  context(d, cfg);
  const { result, meta } = buildResult(d);
  const model = strAt(cfg, ['model_names'], ['model'], ['formatted_model_name']);
  return { label, record: raw, result, meta, hints: model === undefined ? {} : { model } };
}

export function parseGenaiPerfCsv(text: string, file: string): ParsedRun {
  const rows = readCsv(text);
  const { blocks } = csvBlocks(rows, CSV_NAMES, file);
  if (avgOf(blocks, 'request_latency') === undefined || avgOf(blocks, 'request_throughput') === undefined) {
    throw rejected(`${file}: no Request Latency or Request Throughput row: not a genai-perf profile export`);
  }
  const d = newDraft('linear', file);
  d.notes.push('genai-perf CSV export: figures rounded to 2 decimals by genai-perf; model, concurrency and rate are not in the CSV');
  fromBlocks(d, blocks, file);
  const { result, meta } = buildResult(d);
  return { label: 'document', record: { csv: rows.map((r) => r.cells) }, result, meta, hints: {} };
}

function fromBlocks(d: Draft, blocks: Blocks, label: string): void {
  d.notes.push('genai-perf: tpot from inter_token_latency ((latency − ttft)/(osl − 1), vLLM TPOT); output tokens counted by the client tokenizer');
  putLatency(d, blocks, 'request_latency', 'e2el', { label });
  putLatency(d, blocks, 'time_to_first_token', 'ttft', { label });
  putLatency(d, blocks, 'inter_token_latency', 'tpot', { label });
  const reqTput = putAvg(d, 'request_throughput', blocks, 'request_throughput');
  const outTput = putAvg(d, 'output_throughput', blocks, 'output_token_throughput');
  const goodput = avgOf(blocks, 'request_goodput');
  if (goodput !== undefined) d.request_goodput = goodput;
  const isl = avgOf(blocks, 'input_sequence_length');
  const osl = avgOf(blocks, 'output_sequence_length');
  if (isl !== undefined && reqTput !== undefined && outTput !== undefined) {
    put(d, 'total_token_throughput', outTput + reqTput * isl);
    d.notes.push('total_token_throughput derived: output_token_throughput + request_throughput × mean input_sequence_length');
  }
  const completed = countOf(blocks, 'request_count', label);
  if (completed === undefined) {
    d.notes.push('completed unavailable: this genai-perf version exports no request_count metric (input_config.request_count is what was asked, not what was measured)');
    return;
  }
  put(d, 'completed', completed);
  d.notes.push('completed = the request_count metric (requests measured); genai-perf exports no error count');
  if (isl !== undefined) put(d, 'total_input_tokens', Math.round(completed * isl));
  if (osl !== undefined) put(d, 'total_output_tokens', Math.round(completed * osl));
  if (isl !== undefined || osl !== undefined) d.notes.push('token totals derived: request_count × mean sequence length');
}

function context(d: Draft, cfg: unknown): void {
  const concurrency = posIntAt(cfg, ['concurrency'], ['perf_analyzer', 'stimulus', 'concurrency']);
  const rate = numAt(cfg, ['request_rate'], ['perf_analyzer', 'stimulus', 'request_rate']);
  if (rate !== undefined && rate > 0) {
    d.request_rate = rate;
    // perf_analyzer's default request distribution is constant: evenly spaced arrivals.
    const dist = strAt(cfg, ['request_distribution'], ['perf_analyzer', 'request_distribution']);
    d.burstiness = dist === 'poisson' ? 1 : Infinity;
  } else if (concurrency !== undefined) {
    d.request_rate = Infinity;
    d.max_concurrency = concurrency;
  }
  d.model_id = strAt(cfg, ['model_names'], ['model'], ['formatted_model_name']);
  d.backend = strAt(cfg, ['service_kind'], ['endpoint', 'service_kind']) ?? 'openai';
  d.endpoint_type = strAt(cfg, ['endpoint_type'], ['endpoint', 'type']) ?? d.backend;
  if (isObject(at(cfg, ['perf_analyzer', 'request_count'])) || typeof at(cfg, ['request_count']) === 'number') {
    d.notes.push('input_config.request_count (requests asked for) not used as a measurement');
  }
}
