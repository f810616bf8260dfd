import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LmBenchError } from '../../errors.js';
import type { BenchmarkResult, Energy, RequestRecord } from '../../domain/index.js';
import { diagnosisLines, keepUpLine } from '../../diagnose/text.js';
import type { OutputLengths, SendLateness } from '../../loadgen/index.js';
import type { TraceReplay } from '../../loadgen/plan.js';
import type { CliIo } from '../io.js';

/**
 * A replayed trace beside its result (the JSON's \`trace_replay\`): which trace, how much of it, and how
 * late the runner sent against the trace's schedule (send − the request's time ÷ speed), in ms.
 */
export interface TraceReplayReport {
  readonly file: string;
  readonly format: string;
  readonly sha256: string;
  readonly requests: number;
  readonly speed: number;
  readonly skipped_zero_rows: number;
  readonly sent: number;
  readonly send_lateness_ms: { readonly p50: number; readonly p99: number; readonly max: number } | null;
}

/**
 * What `run` prints and writes per load point: the result, for a trace how it was replayed, and, when
 * answers missed their max_tokens although ignore_eos was sent, how many (loadgen/output-lengths.ts).
 */
export type RunOutput = BenchmarkResult & {
  readonly trace_replay?: TraceReplayReport;
  readonly output_lengths?: OutputLengths;
  /** Set when the point was stopped part-way (Ctrl-C): where, and why; its result counts the requests answered before. */
  readonly stopped?: string;
};

export function traceReplayReport(t: TraceReplay, late: SendLateness | null): TraceReplayReport {
  return {
    file: t.file,
    format: t.format,
    sha256: t.sha256,
    requests: t.requests,
    speed: t.speed,
    skipped_zero_rows: t.skippedZero,
    sent: late?.sent ?? 0,
    send_lateness_ms: late === null ? null : { p50: late.p50Ms, p99: late.p99Ms, max: late.maxMs },
  };
}

export function traceReplayLine(r: TraceReplayReport): string {
  const late = r.send_lateness_ms;
  const lateText = late === null ? 'nothing sent' : `sends late against the trace's schedule by p50 ${late.p50.toFixed(2)} ms, p99 ${late.p99.toFixed(2)} ms, max ${late.max.toFixed(2)} ms`;
  const skipped = r.skipped_zero_rows === 0 ? '' : `; ${r.skipped_zero_rows} rows with 0 tokens left out`;
  return `trace ${r.file} (${r.format}, times ÷ ${r.speed}): sent ${r.sent} of ${r.requests} requests${skipped}; ${lateText}`;
}

/** One run in a line, then why it missed its SLOs or saturated (with the knobs to try), if it did. */
export function summaryText(r: BenchmarkResult, tag = ''): string {
  const f = (x: number): string => x.toFixed(1);
  const line = `${tag}completed ${r.completed}, failed ${r.failed} in ${r.duration.toFixed(2)} s: ${f(r.request_throughput)} req/s, ${f(r.output_throughput)} out tok/s; TTFT mean ${f(r.mean_ttft_ms)} p99 ${f(r.p99_ttft_ms)} ms; TPOT mean ${f(r.mean_tpot_ms)} ms; ITL p99 ${f(r.p99_itl_ms)} ms`;
  const power = r.energy === undefined || r.energy === null ? [] : [powerLine(r.energy)];
  const saturated = keepUpLine(r.saturation ?? null);
  return [line, ...(saturated === null ? [] : [saturated]), ...power, ...diagnosisLines(r.diagnosis)].join('\n');
}

/**
 * Completed answers whose stream carried no `usage` (the server ignored `stream_options.include_usage`):
 * their output tokens are estimated (client.ts `fallbackOutputTokens`: max_tokens for an answer that
 * finished for length, token_source `max_tokens`; a token a content chunk for the others, `fallback`),
 * so a server that sends several tokens a chunk is undercounted on its `fallback` answers, and its
 * output tok/s and TPOT with it. Null when every answer said its count.
 */
export function noUsageWarning(records: readonly RequestRecord[]): string | null {
  const answered = records.filter((r) => r.phase === 'measure' && r.error_kind === null);
  const byLength = answered.filter((r) => r.token_source === 'max_tokens').length;
  const byChunks = answered.filter((r) => r.token_source === 'fallback').length;
  if (byLength + byChunks === 0) return null;
  const how = [
    ...(byLength === 0 ? [] : [`${byLength} finished for length, counted as their max_tokens (token_source max_tokens)`]),
    ...(byChunks === 0 ? [] : [`${byChunks} counted as one token a content chunk (token_source fallback), which undercounts them on a server that streams several tokens a chunk (output tok/s, TPOT)`]),
  ];
  return `${byLength + byChunks} of ${answered.length} completed answers carried no usage (the server ignores stream_options.include_usage): their output tokens are estimated: ${how.join('; ')}`;
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

/** Writes a file, making its folder on demand (`--output results/run1.json`). */
function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const unwritable = (flag: string, path: string, why: string, cause?: unknown): LmBenchError =>
  new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${flag} ${path}: cannot write there (${why})`, { cause, details: { field: flag, value: path } });

/**
 * The path an output flag names, refused before the work when it cannot be a file: a folder, or a path
 * under a file. After a run against a real server, or minutes of simulating, the failed write would
 * otherwise be an internal error and the measurement lost.
 */
export function outputPath(flag: string, raw: string | undefined, cwd: string): string | undefined {
  if (raw === undefined) return undefined;
  const path = resolve(cwd, raw);
  // ENOTDIR (a path under a file) is a missing entry here too: the walk up finds the file.
  const statOf = (p: string): ReturnType<typeof statSync> | undefined => {
    try {
      return statSync(p);
    } catch {
      return undefined;
    }
  };
  if (statOf(path)?.isDirectory() === true) throw unwritable(flag, raw, 'it is a folder; name a file');
  for (let d = dirname(path); d !== dirname(d); d = dirname(d)) {
    const st = statOf(d);
    if (st === undefined) continue;
    if (!st.isDirectory()) throw unwritable(flag, raw, `${d} is a file, not a folder`);
    break;
  }
  return path;
}

/** The files `run` writes, by flag. */
export const RUN_OUTPUT_FLAGS = ['output', 'records', 'requests-out', 'html'] as const;
export type RunOutputFlag = (typeof RUN_OUTPUT_FLAGS)[number];
/** Each output flag's path as checked before the load, absolute; undefined where the flag was not given. */
export type RunOutputPaths = Readonly<Record<RunOutputFlag, string | undefined>>;

/**
 * Every output path of `run`, checked (`outputPath`) and resolved once, before the load: the files are
 * written to these very paths, so nothing that changes between (the process's working folder, which a
 * relative `cwd` resolves against) sends a write somewhere the check did not look.
 */
export function runOutputPaths(values: Readonly<Partial<Record<RunOutputFlag, string>>>, cwd: string): RunOutputPaths {
  return {
    output: outputPath('output', values.output, cwd),
    records: outputPath('records', values.records, cwd),
    'requests-out': outputPath('requests-out', values['requests-out'], cwd),
    html: outputPath('html', values.html, cwd),
  };
}

/** Writes an output file a flag named; a path the user cannot write is their error, with the flag (not an internal one). */
export function writeOutput(flag: string, path: string, text: string): void {
  try {
    writeFile(path, text);
  } catch (err) {
    throw unwritable(flag, path, err instanceof Error ? err.message : String(err), err);
  }
}

/**
 * Writes what a run stopped part-way by an error measured (a sweep's points, a max-rate search's probes,
 * an slo-hold run's requests) to the output files, before the caller throws the error, and says so:
 * `stopped` says where it stopped ("the sweep stopped at point 2 of 3"), `n` `noun`s were measured. A
 * write that fails then is told, not thrown over the cause; nothing is written or said when no output
 * file was named, or nothing was measured.
 */
export async function keepStopped(stopped: string, measured: { readonly n: number; readonly noun: string }, paths: RunOutputPaths, write: () => Promise<void>, io: CliIo): Promise<void> {
  const files = Object.values(paths).filter((p): p is string => p !== undefined);
  const { n, noun } = measured;
  if (files.length === 0 || n === 0) return;
  const nouns = `${n} ${noun}${n === 1 ? '' : 's'}`;
  try {
    await write();
    io.stderr.write(`lm-bench: ${stopped}; the ${nouns} measured before ${n === 1 ? 'is' : 'are'} in ${files.join(', ')}\n`);
  } catch (err) {
    io.stderr.write(`lm-bench: ${stopped}, and its ${n} measured ${noun}${n === 1 ? '' : 's'} could not be written: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}
