import { COARSE_CLOCK_FORMATS, Workload, type WorkloadInput, type WorkloadTrace } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';
import { fitArrival, fitLength, fitSharedPrefix, type ArrivalFit, type PrefixFit } from './fit.js';
import { MAX_TRACE_REQUESTS } from './parse.js';
import { extentOf } from '../util/extent.js';
import type { ParsedTrace } from './request.js';

/**
 * A parsed trace → a Workload. With `embed`, the workload carries the requests themselves and
 * replays them (run, sim run and tune --trace); without, it is the trace's fitted distributions only
 * (`workload from-trace`), a file `tune`, `recommend` and `plan` read like any other.
 */
export interface TraceWorkloadOptions {
  readonly name: string;
  readonly description?: string | undefined;
  /** Arrival times are divided by it (default 1). */
  readonly speed?: number | undefined;
  readonly embed: boolean;
  readonly api?: 'completions' | 'chat' | undefined;
}

export interface TraceSummary {
  readonly requests: number;
  readonly skippedZero: number;
  readonly spanS: number;
  readonly rateRps: number | null;
  readonly interArrivalCv: number | null;
  readonly meanInputTokens: number;
  readonly meanOutputTokens: number;
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
  readonly sharedTokenFraction: number;
  readonly reusedTokenFraction: number;
}

export interface TraceFit {
  readonly workload: Workload;
  readonly summary: TraceSummary;
}

function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

function summaryOf(t: ParsedTrace, arrival: ArrivalFit, prefix: PrefixFit): TraceSummary {
  const ins = t.requests.map((r) => r.inputTokens);
  const outs = t.requests.map((r) => r.outputTokens);
  return {
    requests: t.requests.length,
    skippedZero: t.skippedZero,
    spanS: arrival.spanS,
    rateRps: arrival.rateRps,
    interArrivalCv: arrival.cv,
    meanInputTokens: mean(ins),
    meanOutputTokens: mean(outs),
    maxInputTokens: extentOf(ins).max,
    maxOutputTokens: extentOf(outs).max,
    sharedTokenFraction: prefix.sharedTokenFraction,
    reusedTokenFraction: prefix.reusedTokenFraction,
  };
}

/** Dense ids in order of first use: a study spec stores small numbers, and the sharing is unchanged. */
function denseHashIds(t: ParsedTrace): number[][] | undefined {
  if (t.blockTokens === null) return undefined;
  const ids = new Map<number, number>();
  return t.requests.map((r) => (r.hashIds ?? []).map((id) => {
    let d = ids.get(id);
    if (d === undefined) {
      d = ids.size;
      ids.set(id, d);
    }
    return d;
  }));
}

export function traceWorkload(t: ParsedTrace, sourceName: string, opts: TraceWorkloadOptions): TraceFit {
  const speed = opts.speed ?? 1;
  const req = t.requests;
  // BurstGPT_1 holds 1.4 million requests, Azure's 2024 week 17 and 27 million: say so, and how to
  // take a part, rather than fail as an internal error on the fitted workload's num_prompts.
  // (parseTrace reads one request past the bound, so the count is "more than".)
  if (req.length > MAX_TRACE_REQUESTS) {
    throw new LmBenchError(
      'LMB_ERR_TRACE_INVALID',
      `${t.file}: more than ${MAX_TRACE_REQUESTS.toLocaleString('en-US')} requests, the most a workload sends: take the first N with --trace-limit N`,
      { details: { file: t.file, line: null, field: 'trace-limit' } },
    );
  }
  const arrival = fitArrival(req.map((r) => r.arrivalMs), speed, COARSE_CLOCK_FORMATS.has(t.format));
  const prefix = fitSharedPrefix(req, t.blockTokens);
  // Prompt lengths after the shared prefix (the Workload's input_len). The workload's longest prompt
  // (its prefix and its longest unique part) is the trace's longest whole prompt: longer, and a plan
  // or a space rule would refuse a max_model_len the trace fits (Mooncake: 1,791 tokens over); shorter,
  // and it would allow one the trace overruns. The prefix is the mean of the shared parts, so a
  // request that shared less than it has a unique part longer than the bound: that part is clipped.
  const maxInput = extentOf(req.map((r) => r.inputTokens)).max;
  const uniqueMax = Math.max(1, maxInput - (prefix.sharedPrefix?.length ?? 0));
  const unique = req.map((r, i) => Math.min(uniqueMax, Math.max(1, r.inputTokens - (prefix.sharedTokens[i] as number))));
  const trace: WorkloadTrace = {
    source: sourceName,
    format: t.format,
    sha256: t.sha256,
    requests: req.length,
    speed,
    ...(t.blockTokens === null ? {} : { block_tokens: t.blockTokens }),
  };
  const hashIds = opts.embed ? denseHashIds(t) : undefined;
  const raw: WorkloadInput = {
    name: opts.name,
    ...(opts.description === undefined ? {} : { description: opts.description }),
    api: opts.api ?? 'completions',
    input_len: fitLength(unique, prefix.sharedPrefix === undefined ? undefined : uniqueMax),
    output_len: fitLength(req.map((r) => r.outputTokens)),
    ...(prefix.sharedPrefix === undefined ? {} : { shared_prefix: prefix.sharedPrefix }),
    arrival: arrival.arrival,
    num_prompts: req.length,
    ignore_eos: true,
    trace: opts.embed
      ? {
          ...trace,
          data: {
            arrival_ms: req.map((r) => r.arrivalMs),
            input_tokens: req.map((r) => r.inputTokens),
            output_tokens: req.map((r) => r.outputTokens),
            ...(hashIds === undefined ? {} : { hash_ids: hashIds }),
          },
        }
      : trace,
  };
  const parsed = Workload.safeParse(raw);
  if (!parsed.success) {
    throw new LmBenchError('LMB_ERR_INTERNAL', formatZodIssues(parsed.error.issues, `the workload fitted to ${t.file} is invalid`));
  }
  return { workload: parsed.data, summary: summaryOf(t, arrival, prefix) };
}

/** A workload name from a file name: its stem, with what a name should not hold replaced. */
export function workloadNameOf(file: string): string {
  const stem = file.replace(/^.*[\\/]/, '').replace(/\.(csv|jsonl|json|txt)$/i, '');
  const name = stem.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '');
  return name === '' ? 'trace' : name;
}
