import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { stagesRequestCount, Workload, type Arrival, type LengthDist, type TraceFormat } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { limitTrace, readTraceFile, traceName, traceWorkload, workloadNameOf } from '../trace/index.js';
import { createRng } from '../util/rng.js';
import { formatZodIssues } from '../util/zod-issues.js';
import { arrivalOf, type BenchConfig } from './config.js';
import { loadJsonlPrompts, loadShareGpt } from './datasets.js';
import type { RunBenchmarkOptions } from './index.js';
import type { PreparedRequest } from './prompts.js';
import { extentOf } from '../util/extent.js';

/**
 * One validated config point → the options of `runBenchmark` (less the endpoint): the shared Workload
 * (so the tuner, the simulator and this runner describe the same traffic), and for file datasets the
 * prompts read from the file, shuffled with the seed.
 */
export type PlannedRun = Omit<RunBenchmarkOptions, 'endpoint' | 'signal' | 'onProgress'> & {
  readonly workload: Workload;
  /** The config's endpoint, if it names one. */
  readonly endpoint: string | undefined;
  /** A trace dataset: what was read from it (the workload carries its requests). */
  readonly trace?: TraceReplay | undefined;
};

/** A replayed trace as the run reports it. */
export interface TraceReplay {
  readonly file: string;
  readonly format: TraceFormat;
  readonly sha256: string;
  /** Requests replayed (after limit and num_prompts). */
  readonly requests: number;
  readonly speed: number;
  /** Rows of the file left out for a 0-token length (BurstGPT's failed requests). */
  readonly skippedZero: number;
}

/** An open-loop arrival process with an in-flight cap (a closed loop is its own cap). */
function cappedArrival(a: Arrival, cap: number): Arrival {
  switch (a.kind) {
    case 'closed':
      return a;
    case 'burst':
    case 'poisson':
    case 'gamma':
    case 'constant':
      return { ...a, max_concurrency: cap };
  }
}

/** Default request count of a config that does not say (vLLM's bench default is 1000; ours is smaller). */
export const DEFAULT_NUM_PROMPTS = 200;

/**
 * A trace dataset → the workload that replays it: the trace's requests (the first `limit`, and no
 * more than num_prompts) with their times ÷ speed, and the trace's fitted distributions beside them.
 */
function planTrace(c: BenchConfig, ds: Extract<BenchConfig['dataset'], { kind: 'trace' }>, baseDir: string): { workload: Workload; trace: TraceReplay } {
  const file = isAbsolute(ds.path) ? ds.path : resolve(baseDir, ds.path);
  const least = Math.min(ds.limit ?? Number.POSITIVE_INFINITY, c.num_prompts ?? Number.POSITIVE_INFINITY);
  const limit = Number.isFinite(least) ? least : undefined;
  // The limit reaches the reader, which stops once the first `limit` requests by time are certain.
  const parsed = limitTrace(readTraceFile(file, ds.path, limit), limit);
  const name = c.name === 'run' ? workloadNameOf(ds.path) : c.name;
  const fitted = traceWorkload(parsed, traceName(parsed), { name, description: c.description, speed: ds.speed, embed: true, api: c.api }).workload;
  const cap = c.traffic.max_concurrency;
  const workload: Workload = {
    ...fitted,
    ignore_eos: c.sampling.ignore_eos,
    ...(cap === undefined ? {} : { arrival: cappedArrival(fitted.arrival, cap) }),
    ...(c.slo === undefined ? {} : { slo: c.slo }),
    seed: c.seed,
  };
  return {
    workload,
    trace: { file: ds.path, format: parsed.format, sha256: parsed.sha256, requests: parsed.requests.length, speed: ds.speed, skippedZero: parsed.skippedZero },
  };
}

function readCaCert(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `ca_cert ${path} cannot be read`, { cause: err, details: { field: 'ca_cert', file: path } });
  }
}

function rangeOf(xs: number[]): LengthDist {
  const extent = extentOf(xs);
  const min = Math.max(1, extent.min);
  const max = Math.max(1, extent.max);
  return min === max ? { dist: 'fixed', value: min } : { dist: 'uniform', min, max };
}

function plannedWorkload(c: BenchConfig, baseDir: string): { workload: Workload; requests?: PreparedRequest[]; trace?: TraceReplay } {
  const ds = c.dataset;
  const maxTokens = c.sampling.max_tokens;
  // Rate stages bound the run themselves: by default, as many requests as they hold.
  const stages = c.traffic.stages;
  const numPrompts = c.num_prompts ?? (stages === undefined ? DEFAULT_NUM_PROMPTS : stagesRequestCount(stages));
  let requests: PreparedRequest[] | undefined;
  let inputLen: LengthDist;
  let outputLen: LengthDist;
  let sharedPrefix;
  let promptPool;
  let sessions;
  switch (ds.kind) {
    case 'trace':
      return planTrace(c, ds, baseDir);
    case 'synthetic':
      inputLen = ds.input_len;
      outputLen = maxTokens === undefined ? ds.output_len : { dist: 'fixed', value: maxTokens };
      sharedPrefix = ds.shared_prefix;
      promptPool = ds.prompt_pool;
      sessions = ds.sessions;
      break;
    case 'sharegpt':
    case 'jsonl': {
      const file = isAbsolute(ds.path) ? ds.path : resolve(baseDir, ds.path);
      const rng = createRng(c.seed).fork('dataset');
      const loaded =
        ds.kind === 'sharegpt'
          ? loadShareGpt(file, { numPrompts, rng, outputLen: maxTokens ?? ds.output_len })
          : loadJsonlPrompts(file, { numPrompts, rng, outputLen: maxTokens ?? ds.output_len });
      requests = loaded;
      inputLen = rangeOf(loaded.map((r) => r.clientTokens));
      outputLen = rangeOf(loaded.map((r) => r.maxTokens));
      break;
    }
  }
  const parsed = Workload.safeParse({
    name: c.name,
    ...(c.description === undefined ? {} : { description: c.description }),
    api: c.api,
    input_len: inputLen,
    output_len: outputLen,
    ...(sharedPrefix === undefined ? {} : { shared_prefix: sharedPrefix }),
    ...(promptPool === undefined ? {} : { prompt_pool: promptPool }),
    ...(sessions === undefined ? {} : { sessions }),
    arrival: arrivalOf(c.traffic),
    num_prompts: numPrompts,
    ignore_eos: c.sampling.ignore_eos,
    ...(c.slo === undefined ? {} : { slo: c.slo }),
    seed: c.seed,
  });
  if (!parsed.success) {
    const field = parsed.error.issues[0]?.path.join('.') ?? '';
    throw new LmBenchError('LMB_ERR_WORKLOAD_INVALID', formatZodIssues(parsed.error.issues), { details: { field } });
  }
  return requests === undefined ? { workload: parsed.data } : { workload: parsed.data, requests };
}

export function planRun(c: BenchConfig, baseDir: string, label?: string): PlannedRun {
  const { workload, requests, trace } = plannedWorkload(c, baseDir);
  const burst = c.traffic.burstiness;
  const caCertPem = c.ca_cert === undefined ? null : readCaCert(isAbsolute(c.ca_cert) ? c.ca_cert : resolve(baseDir, c.ca_cert));
  return {
    workload,
    ...(trace === undefined ? {} : { trace }),
    endpoint: c.endpoint,
    transport: { caCertPem, insecure: c.insecure, connectTimeoutMs: c.connect_timeout_s * 1000 },
    model: c.model,
    seed: c.seed,
    slo: c.slo,
    timeoutMs: c.timeout_s * 1000,
    scrapeMetrics: c.scrape_metrics,
    workers: c.workers === 'auto' ? undefined : c.workers,
    requests,
    rampUp: c.traffic.ramp_up,
    burstiness: burst === 'inf' ? Number.POSITIVE_INFINITY : burst,
    durationS: c.duration_s,
    warmupRequests: c.warmup.requests,
    temperature: c.sampling.temperature,
    label: label ?? c.name,
  };
}
