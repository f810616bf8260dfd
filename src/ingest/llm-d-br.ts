import { z } from 'zod';
import { ALL_KNOB_NAMES, parseKnobAssignments, type ServerConfig } from '../domain/index.js';
import { isLmBenchError } from '../errors.js';
import { RawNum, buildResult, newDraft, parseRaw, put, putStats, type Draft } from './draft.js';
import { rejected } from './json-text.js';
import { LmBenchFigures, exportedRunHash, lmBenchFigures, runStart, writtenByLmBench } from './llm-d-br-lm-bench.js';
import { lmBenchBlocks } from './lm-bench-blocks.js';
import type { FileHints, ParsedRun } from './parsed.js';
import { isObject } from './vllm-serve.js';

/**
 * llm-d Benchmark Report v0.2 / v0.2.1 (llm-d/llm-d-benchmark `llmdbenchmark/analysis/benchmark_report`,
 * JSON Schema `br_v0_2_json_schema.json`), YAML or JSON: `run`, `scenario{stack[], load}`,
 * `results.request_performance.aggregate{requests, throughput, latency}`, each statistic
 * `{units, mean, stddev, p50, p90, p95, p99, …}` with units `s`/`ms`, `s/token`/`ms/token`, `tokens/s`,
 * `queries/s`. Figures:
 * - `requests.total` is the requests sent, `failures` those that errored, `incomplete` those cut off:
 *   completed = total − failures − incomplete. Without a failure count the number completed is not
 *   known, and is left unavailable rather than guessed.
 * - request/output/total throughput ← `request_rate`/`output_token_rate`/`total_token_rate` means;
 *   duration = completed / request rate (`run.time.duration` is the harness's wall time, set-up
 *   included, not the measured span); token totals = token rate × duration.
 * - TTFT, TPOT, ITL, E2EL ← `time_to_first_token`, `time_per_output_token`, `inter_token_latency`,
 *   `request_latency` (the schema keeps GKE's and vLLM's meanings: TPOT per request, ITL pooled).
 * - context: the `inference_engine` component's model, accelerator (model, count per replica) and
 *   parallelism; knobs from its `native.args` vLLM flags. Replicas behind a router are stored as
 *   data parallelism (throughput scales the same way; noted). Disaggregated prefill/decode stacks and
 *   pipeline parallelism cannot be expressed as one lm-bench server config and are rejected.
 * - lm-bench's own reports (keyword `lm-bench`) add what the schema has no field for, read back here:
 *   the load's start (`run.time.start`), the run's dedupe key (`run.uid`), a simulation (engine tool
 *   `lm-bench-sim`), energy, server peaks and percentiles without a mean (`results.observability.lm_bench_*`).
 */
const Stat = z.looseObject({
  units: z.string(),
  mean: RawNum,
  stddev: RawNum.nullable().optional(),
  p50: RawNum.nullable().optional(),
  p90: RawNum.nullable().optional(),
  p95: RawNum.nullable().optional(),
  p99: RawNum.nullable().optional(),
});
type Stat = z.infer<typeof Stat>;
/**
 * lm-bench's export of percentiles whose source recorded no mean (`results.observability.lm_bench_latency`,
 * the report's Statistics requiring one): the same blocks, mean absent.
 */
const StatWithoutMean = Stat.extend({ mean: RawNum.optional() });
const optStatWithoutMean = StatWithoutMean.nullable().optional();
const LatencyWithoutMean = z.looseObject({
  time_to_first_token: optStatWithoutMean,
  time_per_output_token: optStatWithoutMean,
  inter_token_latency: optStatWithoutMean,
  request_latency: optStatWithoutMean,
});
const optStat = Stat.nullable().optional();
const count = z.int().nonnegative();

const Report = z.looseObject({
  version: z.string(),
  scenario: z.looseObject({ stack: z.array(z.unknown()).nullable().optional(), load: z.unknown().optional() }).nullable().optional(),
  results: z.looseObject({
    request_performance: z.looseObject({
      aggregate: z.looseObject({
        // Optional in the report's schema: a harness that counts no requests (lm-bench's own export of
        // a source that states none) leaves it out, and the figures beside it are still measured.
        requests: z.looseObject({ total: count, failures: count.nullable().optional(), incomplete: count.nullable().optional() }).nullable().optional(),
        throughput: z.looseObject({ request_rate: optStat, output_token_rate: optStat, input_token_rate: optStat, total_token_rate: optStat }).nullable().optional(),
        latency: z.looseObject({
          time_to_first_token: optStat,
          time_per_output_token: optStat,
          inter_token_latency: optStat,
          request_latency: optStat,
        }).nullable().optional(),
      }),
    }),
    observability: z
      .looseObject({
        lm_bench_energy: z.unknown().optional(),
        lm_bench_server_metrics: z.unknown().optional(),
        lm_bench_latency: z.unknown().optional(),
        lm_bench_figures: z.unknown().optional(),
      })
      .nullable()
      .optional(),
  }),
});

const Engine = z.looseObject({
  standardized: z.looseObject({
    kind: z.string(),
    tool: z.string().nullable().optional(),
    role: z.string().nullable().optional(),
    replicas: z.int().positive().nullable().optional(),
    model: z.looseObject({ name: z.string() }).nullable().optional(),
    accelerator: z
      .looseObject({
        model: z.string().nullable().optional(),
        count: z.int().positive().nullable().optional(),
        parallelism: z.looseObject({ tp: z.int().positive().nullable().optional(), pp: z.int().positive().nullable().optional(), dp: z.int().positive().nullable().optional() }).nullable().optional(),
      })
      .nullable()
      .optional(),
  }),
  native: z.looseObject({ args: z.record(z.string(), z.unknown()).nullable().optional() }).nullable().optional(),
});

export function isLlmdReport(v: unknown): v is Record<string, unknown> {
  return isObject(v) && typeof v['version'] === 'string' && isObject(v['results']) && isObject(v['run']);
}

const KNOBS: readonly string[] = ALL_KNOB_NAMES;

/** The engine tool lm-bench's export writes for a simulated run (export/llm-d-br-scenario.ts). */
const SIM_ENGINE_TOOL = 'lm-bench-sim';

export function parseLlmdReport(raw: unknown, label: string, warnings: string[]): ParsedRun {
  const r = parseRaw(Report, raw, label);
  if (!/^0\.2(\.\d+)?$/.test(r.version)) throw rejected(`${label}: Benchmark Report version "${r.version}": lm-bench reads v0.2 and v0.2.x`);
  const agg = r.results.request_performance.aggregate;
  const d = newDraft('linear', label);
  d.backend = 'openai';
  d.endpoint_type = 'openai';
  d.notes.push(`llm-d Benchmark Report v${r.version}`);
  const req = agg.requests;
  if (req === undefined || req === null) d.notes.push('completed and failed unavailable: the report states no request count');
  else if (req.failures !== undefined && req.failures !== null) {
    const completed = req.total - req.failures - (req.incomplete ?? 0);
    if (completed < 0) throw rejected(`${label}: results.request_performance.aggregate.requests: failures + incomplete exceed total`);
    put(d, 'completed', completed);
    put(d, 'failed', req.failures);
  } else d.notes.push('completed and failed unavailable: the report states no failure count, so how many of the requests sent completed is unknown');
  const tp = agg.throughput;
  // Requests alone measure nothing lm-bench learns from (and are all a report cut off early has left).
  if (!tp?.request_rate && !tp?.output_token_rate && !agg.latency?.time_to_first_token && !agg.latency?.request_latency) {
    throw rejected(`${label}: results.request_performance.aggregate has no throughput and no latency: nothing measured to store`);
  }
  const reqRate = rate(tp?.request_rate, 'queries/s', 'request_rate', label);
  const outRate = rate(tp?.output_token_rate, 'tokens/s', 'output_token_rate', label);
  const inRate = rate(tp?.input_token_rate, 'tokens/s', 'input_token_rate', label);
  put(d, 'request_throughput', reqRate);
  put(d, 'output_throughput', outRate);
  put(d, 'total_token_throughput', rate(tp?.total_token_rate, 'tokens/s', 'total_token_rate', label));
  const run = (raw as Record<string, unknown>)['run'];
  const obs = r.results.observability;
  const exact = writtenByLmBench(run) && obs?.lm_bench_figures !== undefined && obs.lm_bench_figures !== null ? parseRaw(LmBenchFigures, obs.lm_bench_figures, `${label}: results.observability.lm_bench_figures`) : null;
  const completed = d.values.completed;
  if (exact !== null) lmBenchFigures(d, exact);
  else if (completed !== undefined && reqRate !== undefined && reqRate > 0) {
    const duration = completed / reqRate;
    if (inRate !== undefined) put(d, 'total_input_tokens', Math.round(inRate * duration));
    if (outRate !== undefined) put(d, 'total_output_tokens', Math.round(outRate * duration));
    d.notes.push('duration = completed / request rate; token totals = token rate × duration');
  }
  const lat = agg.latency;
  latency(d, 'ttft', lat?.time_to_first_token, label);
  latency(d, 'tpot', lat?.time_per_output_token, label);
  latency(d, 'itl', lat?.inter_token_latency, label);
  latency(d, 'e2el', lat?.request_latency, label);
  if (obs?.lm_bench_latency !== undefined && obs.lm_bench_latency !== null) {
    const extra = parseRaw(LatencyWithoutMean, obs.lm_bench_latency, `${label}: results.observability.lm_bench_latency`);
    // Only where the report's own latency block has nothing for the metric.
    if (!lat?.time_to_first_token) latency(d, 'ttft', extra.time_to_first_token, label);
    if (!lat?.time_per_output_token) latency(d, 'tpot', extra.time_per_output_token, label);
    if (!lat?.inter_token_latency) latency(d, 'itl', extra.inter_token_latency, label);
    if (!lat?.request_latency) latency(d, 'e2el', extra.request_latency, label);
  }
  load(d, r.scenario?.load);
  if (writtenByLmBench(run)) runStart(d, run);
  if (exact?.request_rate !== undefined) d.request_rate = exact.request_rate;
  if (exact?.burstiness !== undefined) d.burstiness = exact.burstiness;
  if (exact?.max_concurrency !== undefined) d.max_concurrency = exact.max_concurrency;
  if (exact?.num_prompts !== undefined) d.num_prompts = exact.num_prompts;
  if (exact?.date !== undefined) d.date = exact.date;
  const hints = engineHints(r.scenario?.stack ?? [], label, warnings, d);
  const { result, meta } = buildResult(d);
  const hash = exportedRunHash(run);
  return {
    label,
    record: raw,
    result: { ...result, ...lmBenchBlocks(obs?.lm_bench_energy, obs?.lm_bench_server_metrics, `${label}: results.observability`) },
    meta,
    hints,
    ...(hash === undefined ? {} : { contentHash: hash }),
  };
}

function rate(s: Stat | null | undefined, units: string, key: string, label: string): number | undefined {
  if (!s) return undefined;
  if (s.units !== units) throw rejected(`${label}: throughput.${key}.units "${s.units}" is not ${units}`);
  return s.mean;
}

const TIME: Record<string, number> = { s: 1000, ms: 1, 's/token': 1000, 'ms/token': 1 };

function latency(d: Draft, metric: 'ttft' | 'tpot' | 'itl' | 'e2el', s: z.infer<typeof StatWithoutMean> | null | undefined, label: string): void {
  if (!s) return;
  const f = TIME[s.units];
  if (f === undefined) throw rejected(`${label}: latency ${metric}: units "${s.units}" is not a time`);
  const sc = (x: number | null | undefined) => (typeof x === 'number' ? x * f : undefined);
  putStats(d, metric, { mean: sc(s.mean), std: sc(s.stddev), median: sc(s.p50), p50: sc(s.p50), p90: sc(s.p90), p95: sc(s.p95), p99: sc(s.p99) });
}

function load(d: Draft, l: unknown): void {
  const st = isObject(l) && isObject(l['standardized']) ? l['standardized'] : undefined;
  if (st === undefined) return;
  const q = st['rate_qps'];
  const c = st['concurrency'];
  if (typeof q === 'number' && q > 0) d.request_rate = q;
  else if (c !== undefined) d.request_rate = Infinity;
  if (typeof c === 'number' && Number.isInteger(c) && c >= 1) d.max_concurrency = c;
  if (typeof st['tool'] === 'string') d.notes.push(`load generated by ${st['tool']}${typeof st['tool_version'] === 'string' ? ` ${st['tool_version']}` : ''}${typeof st['stage'] === 'number' ? `, stage ${st['stage']}` : ''}`);
}

function engineHints(stack: unknown[], label: string, warnings: string[], d: Draft): FileHints {
  const engines = stack.filter((c) => isObject(c) && isObject(c['standardized']) && c['standardized']['kind'] === 'inference_engine');
  if (engines.length === 0) return {};
  if (engines.length > 1) {
    const roles = engines
      .map((e) => {
        const role = (e as { standardized: { role?: unknown } }).standardized.role;
        return typeof role === 'string' ? role : '?';
      })
      .join(', ');
    throw rejected(`${label}: ${engines.length} inference engines (roles ${roles}): a disaggregated or multi-model stack is not one vLLM server config`);
  }
  const engine = parseRaw(Engine, engines[0], `${label}: scenario.stack (inference_engine)`);
  const e = engine.standardized;
  const native = engine.native;
  const par = e.accelerator?.parallelism;
  if ((par?.pp ?? 1) > 1) throw rejected(`${label}: pipeline parallel ${par?.pp ?? 1}: lm-bench's server config has no pipeline-parallel knob`);
  const replicas = e.replicas ?? 1;
  const config = knobs(native?.args ?? {}, label);
  const tp = config.tensor_parallel_size ?? par?.tp ?? undefined;
  if (tp !== undefined) config.tensor_parallel_size = tp;
  const dp = (config.data_parallel_size ?? par?.dp ?? 1) * replicas;
  if (dp > 1) config.data_parallel_size = dp;
  if (replicas > 1) warnings.push(`${label}: ${replicas} engine replicas behind a router stored as data_parallel_size ${dp}`);
  const model = e.model?.name;
  d.model_id = model;
  // lm-bench's export names its simulator as the engine: the run was simulated, not measured.
  if (e.tool === SIM_ENGINE_TOOL) d.source = 'sim';
  const perReplica = e.accelerator?.count ?? undefined;
  return {
    ...(Object.keys(config).length > 0 ? { serverConfig: config } : {}),
    ...(e.accelerator?.model ? { gpu: e.accelerator.model } : {}),
    ...(perReplica !== undefined ? { gpuCount: perReplica * replicas } : {}),
    ...(model ? { model } : {}),
  };
}

/** vLLM flags among `native.args` (`--max-num-seqs: 256`, `--enable-prefix-caching: null`, `--no-…`). */
function knobs(args: Record<string, unknown>, label: string): ServerConfig {
  const pairs: string[] = [];
  for (const [flag, value] of Object.entries(args)) {
    let name = flag.replace(/^-+/, '').replaceAll('-', '_');
    let v: unknown = value;
    if (name.startsWith('no_') && KNOBS.includes(name.slice(3))) {
      name = name.slice(3);
      v = false;
    } else if (value === null || value === '' || value === undefined) v = true;
    if (!KNOBS.includes(name)) continue;
    if (typeof v !== 'number' && typeof v !== 'boolean' && typeof v !== 'string') continue;
    pairs.push(`${name}=${String(v)}`);
  }
  try {
    return parseKnobAssignments(pairs);
  } catch (err) {
    if (isLmBenchError(err)) throw rejected(`${label}: scenario.stack native.args: ${err.message}`, err);
    throw err;
  }
}
