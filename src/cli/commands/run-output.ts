import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BenchmarkResult } from '../../domain/index.js';
import { diagnosisLines } from '../../diagnose/text.js';

/** One run in a line, then why it missed its SLOs or saturated (with the knobs to try), if it did. */
export function summaryText(r: BenchmarkResult, tag = ''): string {
  const f = (x: number): string => x.toFixed(1);
  const line = `${tag}completed ${r.completed}, failed ${r.failed} in ${r.duration.toFixed(2)} s: ${f(r.request_throughput)} req/s, ${f(r.output_throughput)} out tok/s; TTFT mean ${f(r.mean_ttft_ms)} p99 ${f(r.p99_ttft_ms)} ms; TPOT mean ${f(r.mean_tpot_ms)} ms; ITL p99 ${f(r.p99_itl_ms)} ms`;
  return [line, ...diagnosisLines(r.diagnosis)].join('\n');
}

export function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
