import { parseDocument as parseYamlDocument } from 'yaml';
import type { SourceFormat } from '../store/index.js';
import { isAiperfCsv, isAiperfExport, parseAiperfCsv, parseAiperfExport } from './aiperf.js';
import { looksLikeCsv, readCsv } from './csv-text.js';
import { isGenaiPerfExport, parseGenaiPerfCsv, parseGenaiPerfExport } from './genai-perf.js';
import { isGuidellmReport, parseGuidellmReport } from './guidellm.js';
import { isGuidellmCsv, parseGuidellmCsv } from './guidellm-csv.js';
import { isInferencePerfReport, parseInferencePerfReport } from './inference-perf.js';
import { decodeText, parseJsonDocuments, rejected, unknownFormat } from './json-text.js';
import { isLlmdReport, parseLlmdReport } from './llm-d-br.js';
import { isLmBenchResult, parseLmBenchResult } from './lm-bench.js';
import { isMlenergyRecord, parseMlenergyRecord } from './mlenergy.js';
import type { ParsedFile, ParsedRun } from './parsed.js';
import { isSglangRecord, parseSglangRecord } from './sglang.js';
import { isNightlyTable, parseNightlyTable } from './vllm-nightly.js';
import { isPerfTable, parsePerfTable } from './vllm-perf-table.js';
import { isObject, isVllmServeRecord, parseVllmServeRecord } from './vllm-serve.js';
import { isSweepRecord, parseSweepRecord } from './vllm-sweep.js';

/**
 * One file's bytes → its runs, each a normalised BenchmarkResult (context not yet attached). Pure.
 * The text is JSON (or JSON Lines), YAML or CSV, told apart by the file's extension and, for other
 * names, by its first characters; each format module then recognises its own key set.
 * Throws LMB_ERR_INGEST_UNKNOWN_FORMAT (binary, no known layout) or LMB_ERR_INGEST_REJECTED (broken
 * text, wrong types, missing keys, no measured run) for the whole file: nothing partial.
 */
export function parseFile(name: string, bytes: Uint8Array): ParsedFile {
  const text = decodeText(bytes);
  const syntax = syntaxOf(name, text);
  switch (syntax) {
    case 'json':
      return parseJsonFile(name, text);
    case 'yaml': {
      const warnings: string[] = [];
      const file = finish(name, [parseDocument(parseYamlText(text), 'document', name, warnings)], false, 1);
      return { ...file, warnings: [...warnings, ...file.warnings] };
    }
    case 'csv':
      return parseCsvFile(name, text);
  }
}

type Syntax = 'json' | 'yaml' | 'csv';

function syntaxOf(name: string, text: string): Syntax {
  const ext = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  if (ext === 'yaml' || ext === 'yml') return 'yaml';
  if (ext === 'csv') return 'csv';
  if (ext === 'json' || ext === 'jsonl') return 'json';
  const head = text.trimStart();
  if (head.startsWith('{') || head.startsWith('[') || head === '') return 'json';
  if (looksLikeCsv(head)) return 'csv';
  if (/^(---|[\w.-]+:(\s|$))/.test(head)) return 'yaml';
  return 'json';
}

function parseJsonFile(name: string, text: string): ParsedFile {
  const { docs, jsonLines } = parseJsonDocuments(text);
  const warnings: string[] = [];
  const parsed = docs.map(({ value, label }) => parseDocument(value, label, name, warnings));
  const file = finish(name, parsed, jsonLines, docs.length);
  return { ...file, warnings: [...warnings, ...file.warnings] };
}

function finish(name: string, parsed: { format: SourceFormat; runs: ParsedRun[]; warnings?: string[] }[], jsonLines: boolean, docs: number): ParsedFile {
  const formats = new Set(parsed.map((p) => p.format));
  if (formats.size > 1) throw rejected(`JSON Lines mixing formats (${[...formats].join(', ')})`);
  const runs = parsed.flatMap((p) => p.runs);
  const format = parsed[0]?.format;
  if (format === undefined || runs.length === 0) throw rejected(`no measured run in ${baseName(name)}`);
  const warnings = parsed.flatMap((p) => p.warnings ?? []);
  if (jsonLines) warnings.push(`JSON Lines: ${docs} records`);
  return { format, runs, warnings };
}

/** YAML text → a plain value; aliases capped (a "billion laughs" file is refused), duplicate keys rejected. */
function parseYamlText(text: string): unknown {
  if (text.trim() === '') throw rejected('the file is empty');
  const doc = parseYamlDocument(text, { uniqueKeys: true, prettyErrors: true });
  const err = doc.errors[0];
  if (err !== undefined) throw rejected(`invalid YAML on line ${err.linePos?.[0].line ?? '?'}: ${err.message.split('\n')[0] ?? err.message}`);
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw rejected(`YAML refused: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function parseCsvFile(name: string, text: string): ParsedFile {
  if (text.trim() === '') throw rejected('the file is empty');
  const file = parseCsvText(name, text);
  // AIPerf, genai-perf and GuideLLM (Python's csv writer) end every row with a line break. A file cut off
  // inside its last row still has all its cells when the cut falls in the last figure ("9282.32" →
  // "928"), which would be stored ten times too small: refuse it rather than guess. (Checked after the
  // parse, whose errors say more about a file cut off mid-row or mid-quote.)
  if (!/[\r\n]$/.test(text)) {
    throw rejected(`${baseName(name)} line ${text.split(/\r?\n/).length}: the file ends inside a row, with no line break after it (cut off? its last figure may be cut short; if the file is complete, end it with a line break)`);
  }
  return file;
}

function parseCsvText(name: string, text: string): ParsedFile {
  if (isGuidellmCsv(text)) return { format: 'guidellm', runs: parseGuidellmCsv(text, baseName(name)), warnings: [] };
  const first = readCsv(text.split(/\r?\n/, 1)[0] ?? '')[0]?.cells ?? [];
  if (first[0]?.trim() === 'Metric') {
    if (isAiperfCsv(text, baseName(name))) return { format: 'aiperf', runs: [parseAiperfCsv(text, baseName(name))], warnings: [] };
    return { format: 'genai_perf', runs: [parseGenaiPerfCsv(text, baseName(name))], warnings: [] };
  }
  throw unknownFormat(`a CSV that is not an AIPerf, genai-perf or GuideLLM export (first row: ${first.slice(0, 4).join(', ')})`);
}

function parseDocument(value: unknown, label: string, name: string, warnings: string[]): { format: SourceFormat; runs: ParsedRun[] } {
  if (Array.isArray(value)) {
    if (isPerfTable(value)) return { format: 'vllm_nightly', runs: parsePerfTable(value, warnings) };
    if (isNightlyTable(value)) return { format: 'vllm_nightly', runs: parseNightlyTable(value, baseName(name)) };
    if (value.length > 0 && value.every(isSweepRecord)) {
      const runs = value.flatMap((r, i) => parseSweepRecord(r, `${label}[${i}]`, warnings) ?? []);
      return { format: 'vllm_bench_sweep', runs };
    }
    if (value.length > 0 && value.every(isSglangRecord)) return { format: 'sglang', runs: value.map((r, i) => parseSglangRecord(r, `${label}[${i}]`)) };
    if (value.length > 0 && value.every(isVllmServeRecord)) {
      return { format: 'vllm_bench_serve', runs: value.map((r, i) => parseVllmServeRecord(r, `${label}[${i}]`)) };
    }
    throw unknownFormat(`a JSON array that is not a vLLM benchmark table, sweep summary or list of vllm bench serve results`);
  }
  if (!isObject(value)) throw unknownFormat(`${label}: a ${value === null ? 'null' : typeof value} document, not an object`);
  if (isLmBenchResult(value)) return { format: 'lm_bench', runs: [parseLmBenchResult(value, label)] };
  if (isLlmdReport(value)) return { format: 'llm_d_br', runs: [parseLlmdReport(value, label, warnings)] };
  if (isMlenergyRecord(value)) return { format: 'mlenergy', runs: parseMlenergyRecord(value) };
  if (isGuidellmReport(value)) {
    const g = parseGuidellmReport(value);
    warnings.push(...g.warnings);
    return { format: 'guidellm', runs: g.runs };
  }
  if (isInferencePerfReport(value)) return { format: 'inference_perf', runs: [parseInferencePerfReport(value, label, baseName(name))] };
  if (isAiperfExport(value)) return { format: 'aiperf', runs: [parseAiperfExport(value, label)] };
  if (isGenaiPerfExport(value)) return { format: 'genai_perf', runs: [parseGenaiPerfExport(value, label)] };
  if (isSglangRecord(value)) return { format: 'sglang', runs: [parseSglangRecord(value, label)] };
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
