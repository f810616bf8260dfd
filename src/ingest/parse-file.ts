import type { SourceFormat } from '../store/index.js';
import { isGenaiPerfExport, parseGenaiPerfExport } from './genai-perf.js';
import { isGuidellmReport, parseGuidellmReport } from './guidellm.js';
import { decodeText, parseJsonDocuments, rejected, unknownFormat } from './json-text.js';
import { isLmBenchResult, parseLmBenchResult } from './lm-bench.js';
import type { ParsedFile, ParsedRun } from './parsed.js';
import { isNightlyTable, parseNightlyTable } from './vllm-nightly.js';
import { isObject, isVllmServeRecord, parseVllmServeRecord } from './vllm-serve.js';
import { isSweepRecord, parseSweepRecord } from './vllm-sweep.js';

/**
 * One file's bytes → its runs, each a normalised BenchmarkResult (context not yet attached). Pure.
 * Throws LMB_ERR_INGEST_UNKNOWN_FORMAT (binary, not JSON, no known key set) or LMB_ERR_INGEST_REJECTED
 * (broken JSON, wrong types, missing keys, no measured run) for the whole file: nothing partial.
 */
export function parseFile(name: string, bytes: Uint8Array): ParsedFile {
  const { docs, jsonLines } = parseJsonDocuments(decodeText(bytes));
  const warnings: string[] = [];
  const parsed = docs.map(({ value, label }) => parseDocument(value, label, name, warnings));
  const formats = new Set(parsed.map((p) => p.format));
  if (formats.size > 1) throw rejected(`JSON Lines mixing formats (${[...formats].join(', ')})`);
  const runs = parsed.flatMap((p) => p.runs);
  const format = parsed[0]?.format;
  if (format === undefined || runs.length === 0) throw rejected('no measured run in the file');
  if (jsonLines) warnings.push(`JSON Lines: ${docs.length} records`);
  return { format, runs, warnings };
}

function parseDocument(value: unknown, label: string, name: string, warnings: string[]): { format: SourceFormat; runs: ParsedRun[] } {
  if (Array.isArray(value)) {
    if (isNightlyTable(value)) return { format: 'vllm_nightly', runs: parseNightlyTable(value, baseName(name)) };
    if (value.length > 0 && value.every(isSweepRecord)) {
      const runs = value.flatMap((r, i) => parseSweepRecord(r, `${label}[${i}]`, warnings) ?? []);
      return { format: 'vllm_bench_sweep', runs };
    }
    if (value.length > 0 && value.every(isVllmServeRecord)) {
      return { format: 'vllm_bench_serve', runs: value.map((r, i) => parseVllmServeRecord(r, `${label}[${i}]`)) };
    }
    throw unknownFormat(`a JSON array that is not a vLLM nightly table, sweep summary or list of vllm bench serve results`);
  }
  if (!isObject(value)) throw unknownFormat(`${label}: a JSON ${value === null ? 'null' : typeof value}, not an object`);
  if (isLmBenchResult(value)) return { format: 'lm_bench', runs: [parseLmBenchResult(value, label)] };
  if (isGuidellmReport(value)) {
    const g = parseGuidellmReport(value);
    warnings.push(...g.warnings);
    return { format: 'guidellm', runs: g.runs };
  }
  if (isGenaiPerfExport(value)) return { format: 'genai_perf', runs: [parseGenaiPerfExport(value, label)] };
  if (isSweepRecord(value)) {
    const run = parseSweepRecord(value, label, warnings);
    return { format: 'vllm_bench_sweep', runs: run ? [run] : [] };
  }
  if (isVllmServeRecord(value)) return { format: 'vllm_bench_serve', runs: [parseVllmServeRecord(value, label)] };
  const keys = Object.keys(value).slice(0, 8).join(', ');
  throw unknownFormat(`${label}: no known key set (keys: ${keys === '' ? 'none' : keys})`);
}

function baseName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}
