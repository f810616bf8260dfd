import { BenchmarkResult } from '../domain/index.js';
import { DEFAULT_RUN_META } from '../store/index.js';
import { rejected } from './json-text.js';
import { NUMERIC_KEYS, impossibleFigure, parseRaw } from './draft.js';
import type { FileHints, ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * lm-bench's own result JSON (a BenchmarkResult: vLLM's keys plus the lm-bench blocks). Its
 * `server_config`, `hardware`, `model` and `workload` blocks are the run's context. The `lmb.source`
 * stays what it was (sim, loadgen), so simulated runs remain distinguishable from measured ones.
 */
export function isLmBenchResult(v: unknown): v is Record<string, unknown> {
  return isObject(v) && isObject(v['lmb']) && 'source' in v['lmb'];
}

export function parseLmBenchResult(raw: unknown, label = 'document'): ParsedRun {
  const result = parseRaw(BenchmarkResult, raw, label);
  // The schema lets a latency or a rate be any number; a negative one was never measured (as put() refuses for other formats).
  // So is one beyond any bound a run reaches (a latency of 1e300 ms).
  for (const key of NUMERIC_KEYS) {
    const wrong = impossibleFigure(key, result[key]);
    if (wrong !== null) throw rejected(`${label}: ${key}: ${wrong}`);
  }
  for (const key of ['request_rate', 'burstiness', 'max_concurrency'] as const) {
    const v = result[key];
    if (typeof v === 'number' && v <= 0) throw rejected(`${label}: ${key}: ${v} is not positive`);
  }
  const hints: FileHints = {};
  if (result.server_config) hints.serverConfig = result.server_config;
  if (result.hardware) {
    hints.gpu = result.hardware.gpu;
    hints.gpuCount = result.hardware.count;
  }
  if (result.model !== null) hints.model = result.model;
  else if (result.model_id !== '') hints.model = result.model_id;
  if (result.workload) hints.workload = result.workload;
  return { label, record: raw, result, meta: { ...DEFAULT_RUN_META, notes: [`lm-bench result (source ${result.lmb.source})`] }, hints };
}
