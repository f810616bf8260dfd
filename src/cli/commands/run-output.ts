import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BenchmarkResult, Energy } from '../../domain/index.js';
import { diagnosisLines } from '../../diagnose/text.js';

/** One run in a line, then why it missed its SLOs or saturated (with the knobs to try), if it did. */
export function summaryText(r: BenchmarkResult, tag = ''): string {
  const f = (x: number): string => x.toFixed(1);
  const line = `${tag}completed ${r.completed}, failed ${r.failed} in ${r.duration.toFixed(2)} s: ${f(r.request_throughput)} req/s, ${f(r.output_throughput)} out tok/s; TTFT mean ${f(r.mean_ttft_ms)} p99 ${f(r.p99_ttft_ms)} ms; TPOT mean ${f(r.mean_tpot_ms)} ms; ITL p99 ${f(r.p99_itl_ms)} ms`;
  const power = r.energy === undefined || r.energy === null ? [] : [powerLine(r.energy)];
  return [line, ...power, ...diagnosisLines(r.diagnosis)].join('\n');
}

const SOURCES: Record<Energy['source'], string> = {
  'dcgm-energy': "the DCGM exporter's energy counter",
  'dcgm-power': "the DCGM exporter's power gauge, integrated",
  'nvidia-smi': 'nvidia-smi',
  'amd-smi': 'amd-smi',
  ingest: 'the ingested file',
  sim: 'the simulator',
};

/** A measured run's power in a line: average W of all its GPUs, J, J per output token, and how it was read. */
export function powerLine(e: Energy): string {
  if (e.avg_power_w === null || e.energy_j === null) return `power: unavailable (${e.unavailable_reason ?? 'unknown'})`;
  const perToken = e.energy_per_output_token_j === null ? '' : `, ${e.energy_per_output_token_j.toFixed(4)} J/output token`;
  const over = e.window === null ? '' : ` over the load window ${e.window.start_s.toFixed(2)}–${e.window.end_s.toFixed(2)} s`;
  return `power: ${e.avg_power_w.toFixed(1)} W average (${e.gpus} GPU${e.gpus === 1 ? '' : 's'}), ${Math.round(e.energy_j)} J${perToken}${over}, from ${SOURCES[e.source]}`;
}

export function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
