import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Document, YAMLMap } from 'yaml';
import type { Workload } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import { traceWorkloadOfFile, type ParsedTrace, type TraceSummary } from '../../trace/index.js';
import { numberFlag, parseFlags } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { usage as USAGE } from '../usage/workload.js';

const FLAGS = {
  out: { type: 'string' },
  name: { type: 'string' },
  api: { type: 'string' },
  'trace-speed': { type: 'string' },
  'trace-limit': { type: 'string' },
  json: { type: 'boolean' },
} as const;

const f0 = (x: number): string => Math.round(x).toLocaleString('en-US');
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

/** What the trace held and how it was fitted, in a few lines (the YAML's header comment, the human output). */
function summaryLines(file: string, t: ParsedTrace, s: TraceSummary, w: Workload): string[] {
  const rate = s.rateRps === null ? 'all at one instant' : `${s.rateRps.toFixed(3)} req/s, inter-arrival CV ${s.interArrivalCv?.toFixed(2) ?? '–'}`;
  const skipped = s.skippedZero === 0 ? '' : ` (${s.skippedZero} rows with 0 tokens left out)`;
  const sp = w.shared_prefix;
  const prefix =
    sp === undefined
      ? 'no shared prefixes'
      : `${pct(s.sharedTokenFraction)} of prompt tokens in shared blocks (${pct(s.reusedTokenFraction)} seen before): ${sp.groups} prefixes of ${sp.length} tokens on ${pct(sp.fraction)} of requests`;
  return [
    `from ${file} (${t.format}, sha256 ${t.sha256.slice(0, 16)}…): ${s.requests} requests over ${s.spanS.toFixed(1)} s${skipped}`,
    `arrivals: ${rate}`,
    `prompt tokens: mean ${f0(s.meanInputTokens)}, max ${f0(s.maxInputTokens)}; output tokens: mean ${f0(s.meanOutputTokens)}, max ${f0(s.maxOutputTokens)}`,
    prefix,
  ];
}

/** The workload as YAML, distributions and arrival on one line each as data/workloads/*.yaml writes them. */
function workloadYaml(w: Workload, header: readonly string[]): string {
  const doc = new Document(w);
  for (const key of ['input_len', 'output_len', 'shared_prefix', 'arrival', 'trace']) {
    const node = doc.get(key, true);
    if (node instanceof YAMLMap) node.flow = true;
  }
  doc.commentBefore = [' Derived by `lm-bench workload from-trace`', ...header.map((l) => ` ${l}`)].join('\n');
  return doc.toString({ lineWidth: 0 });
}

function fromTrace(argv: readonly string[], io: CliIo): number {
  const { values, positionals } = parseFlags(argv, FLAGS, true);
  const [file, ...extra] = positionals;
  if (file === undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `workload from-trace needs a trace file\n${USAGE}`, { details: { field: 'trace' } });
  if (extra.length > 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `workload from-trace takes one trace file, got also ${extra.join(' ')}`, { details: { field: 'trace' } });
  const api = values.api;
  if (api !== undefined && api !== 'completions' && api !== 'chat') {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--api must be completions or chat, got "${api}"`, { details: { field: 'api' } });
  }
  const name = values.name;
  if (name !== undefined && name.trim() === '') throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--name is empty', { details: { field: 'name' } });
  const speed = numberFlag(values['trace-speed'], 'trace-speed', { min: 1e-6, max: 1e6 });
  const limit = numberFlag(values['trace-limit'], 'trace-limit', { int: true, min: 1, max: 1_000_000 });
  const { workload, summary, trace } = traceWorkloadOfFile(resolve(io.cwd, file), file, { speed, limit, embed: false, name, api });
  const lines = summaryLines(file, trace, summary, workload);
  const out = values.out === undefined ? null : resolve(io.cwd, values.out);
  if (out !== null) {
    try {
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, workloadYaml(workload, lines));
    } catch (err) {
      // A folder, a path through a file, no permission: the user's --out, not an internal error.
      const why = (err as { code?: unknown }).code === 'EISDIR' ? 'it is a directory; give a file name' : err instanceof Error ? err.message : String(err);
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--out ${values.out ?? out}: cannot write there (${why})`, { cause: err, details: { field: 'out', value: values.out ?? out } });
    }
  }
  if (values.json === true) {
    writeJson(io, {
      workload,
      trace: { file, format: trace.format, sha256: trace.sha256, rows: trace.rows, skipped_zero_rows: trace.skippedZero, requests: summary.requests },
      fit: {
        span_s: summary.spanS,
        rate_rps: summary.rateRps,
        inter_arrival_cv: summary.interArrivalCv,
        mean_input_tokens: summary.meanInputTokens,
        mean_output_tokens: summary.meanOutputTokens,
        max_input_tokens: summary.maxInputTokens,
        max_output_tokens: summary.maxOutputTokens,
        shared_token_fraction: summary.sharedTokenFraction,
        reused_token_fraction: summary.reusedTokenFraction,
      },
      out,
    });
  } else if (out === null) io.stdout.write(workloadYaml(workload, lines));
  else io.stdout.write(`${lines.join('\n')}\nwrote ${values.out ?? out}\n`);
  return 0;
}

export const command: Command = {
  name: 'workload',
  summary: 'workload files from what you have: `workload from-trace TRACE` derives one from a request trace',
  usage: USAGE,
  run(argv: readonly string[], io: CliIo): Promise<number> {
    const [sub, ...rest] = argv;
    switch (sub) {
      case 'from-trace':
        try {
          return Promise.resolve(fromTrace(rest, io));
        } catch (err) {
          return Promise.reject(err instanceof Error ? err : new Error(String(err)));
        }
      case undefined:
      default:
        return Promise.reject(new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `workload: expected \`from-trace\`, got ${sub === undefined ? 'nothing' : `"${sub}"`}\n${USAGE}`));
    }
  },
};
