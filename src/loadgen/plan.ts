import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { Workload, type LengthDist } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { createRng } from '../util/rng.js';
import { arrivalOf, type BenchConfig } from './config.js';
import { loadJsonlPrompts, loadShareGpt } from './datasets.js';
import type { RunBenchmarkOptions } from './index.js';
import type { PreparedRequest } from './prompts.js';

/**
 * One validated config point → the options of `runBenchmark` (less the endpoint): the shared Workload
 * (so the tuner, the simulator and this runner describe the same traffic), and for file datasets the
 * prompts read from the file, shuffled with the seed.
 */
export type PlannedRun = Omit<RunBenchmarkOptions, 'endpoint' | 'signal' | 'onProgress'> & {
  readonly workload: Workload;
  /** The config's endpoint, if it names one. */
  readonly endpoint: string | undefined;
};

function readCaCert(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `ca_cert ${path} cannot be read`, { cause: err, details: { field: 'ca_cert', file: path } });
  }
}

function rangeOf(xs: number[]): LengthDist {
  const min = Math.max(1, Math.min(...xs));
  const max = Math.max(1, ...xs);
  return min === max ? { dist: 'fixed', value: min } : { dist: 'uniform', min, max };
}

export function planRun(c: BenchConfig, baseDir: string, label?: string): PlannedRun {
  const ds = c.dataset;
  const maxTokens = c.sampling.max_tokens;
  let requests: PreparedRequest[] | undefined;
  let inputLen: LengthDist;
  let outputLen: LengthDist;
  let sharedPrefix;
  switch (ds.kind) {
    case 'synthetic':
      inputLen = ds.input_len;
      outputLen = maxTokens === undefined ? ds.output_len : { dist: 'fixed', value: maxTokens };
      sharedPrefix = ds.shared_prefix;
      break;
    case 'sharegpt':
    case 'jsonl': {
      const file = isAbsolute(ds.path) ? ds.path : resolve(baseDir, ds.path);
      const rng = createRng(c.seed).fork('dataset');
      const loaded =
        ds.kind === 'sharegpt'
          ? loadShareGpt(file, { numPrompts: c.num_prompts, rng, outputLen: maxTokens ?? ds.output_len })
          : loadJsonlPrompts(file, { numPrompts: c.num_prompts, rng, outputLen: maxTokens ?? ds.output_len });
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
    arrival: arrivalOf(c.traffic),
    num_prompts: c.num_prompts,
    ignore_eos: c.sampling.ignore_eos,
    ...(c.slo === undefined ? {} : { slo: c.slo }),
    seed: c.seed,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LmBenchError('LMB_ERR_WORKLOAD_INVALID', `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid workload'}`);
  }
  const burst = c.traffic.burstiness;
  const caCertPem = c.ca_cert === undefined ? null : readCaCert(isAbsolute(c.ca_cert) ? c.ca_cert : resolve(baseDir, c.ca_cert));
  return {
    workload: parsed.data,
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
