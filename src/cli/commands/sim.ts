import { diagnosisLines, keepUpLine } from '../../diagnose/text.js';
import { loadPrices } from '../../cost/prices.js';
import { withCost } from '../../cost/result-cost.js';
import type { Cost } from '../../domain/index.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command, CliIo } from '../io.js';
import { writeJson } from '../io.js';
import { numberFlag, parseFlags, requireFlag } from '../args.js';
import { ALL_KNOB_NAMES, coerceKnobValue, knobKind, Workload, maxRequestTokens, parseKnobAssignments, readDecimal, type BenchmarkResult, type Energy, type RequestRecord, type ServerConfig, type WorkloadInput } from '../../domain/index.js';
import { defaultCatalog, type Catalog } from '../../catalog/index.js';
import { LmBenchError } from '../../errors.js';
import { loadYamlFile } from '../../util/yaml.js';
import { dottedPath, formatZodIssues } from '../../util/zod-issues.js';
import type { ServerFailure } from '../../physics/index.js';
import { simulate, type SimulateInput } from '../../sim/index.js';
import { traceWorkloadOfFile } from '../../trace/index.js';
import { calibrateCmd } from './sim-calibrate.js';
import { predictCmd } from './sim-predict.js';
import { outputPath } from './run-output.js';
import { requestLatencyOf } from '../../domain/request-latency.js';
import { parseRateStagesFlag } from '../../workload/stages-flag.js';
import { profileFromFlags, vllmVersionFlag } from '../sim-profile-flag.js';
import { resolveGpuFlag, resolveModelFlag } from '../model-flag.js';
import { usage as USAGE } from '../usage/sim.js';
import { OrderedLines, removeWhenGone } from '../ordered-lines.js';



/** parseArgs options for vLLM's own flags: `--max-num-seqs 256`, `--enforce-eager`, `--no-enable-prefix-caching`. */
function vllmFlagOptions(): Record<string, { type: 'string' | 'boolean' }> {
  const opts: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const k of ALL_KNOB_NAMES) {
    const flag = k.replaceAll('_', '-');
    if (knobKind(k) === 'boolean') {
      opts[flag] = { type: 'boolean' };
      opts[`no-${flag}`] = { type: 'boolean' };
    } else opts[flag] = { type: 'string' };
  }
  return opts;
}

const COMMON = {
  gpu: { type: 'string' },
  gpus: { type: 'string' },
  model: { type: 'string' },
  set: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  'served-model-name': { type: 'string' },
  profile: { type: 'string' },
  'vllm-version': { type: 'string' },
  db: { type: 'string' },
  offline: { type: 'boolean' },
} as const;

/**
 * `vllm serve` flags a pasted command line carries that change nothing the simulator models (logging,
 * where weights download, remote code a catalog model does not run): accepted, and each named on stderr
 * as ignored. vLLM's own names only.
 */
const VLLM_NO_EFFECT = {
  'trust-remote-code': { type: 'boolean' },
  'disable-log-requests': { type: 'boolean' },
  'enable-log-requests': { type: 'boolean' },
  'disable-log-stats': { type: 'boolean' },
  'disable-uvicorn-access-log': { type: 'boolean' },
  'uvicorn-log-level': { type: 'string' },
  'download-dir': { type: 'string' },
  dtype: { type: 'string' },
} as const;

/** vLLM's `--uvicorn-log-level` choices. */
const UVICORN_LOG_LEVELS = ['critical', 'error', 'warning', 'info', 'debug', 'trace'];
/** vLLM's `--dtype` choices the simulator prices alike (16-bit weights, or the model's own quantization). */
const DTYPES_16_BIT = ['auto', 'half', 'float16', 'bfloat16'];
/** vLLM's other `--dtype` choices: 32-bit weights, which the simulator does not price. */
const DTYPES_32_BIT = ['float', 'float32'];

/**
 * The pasted `vllm serve` flags that have no effect, as notes for stderr; a value vLLM would refuse, or a
 * float32 `--dtype` (twice the weight memory, which the simulator does not model), is refused.
 * `also` names the serving flags sim run takes and ignores (it answers no HTTP: `--port`).
 */
function noEffectNotes(values: Record<string, unknown>, also: readonly string[]): string[] {
  const level = values['uvicorn-log-level'];
  if (typeof level === 'string' && !UVICORN_LOG_LEVELS.includes(level)) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--uvicorn-log-level must be one of ${UVICORN_LOG_LEVELS.join(', ')} (as in vLLM), got "${level}"`, { details: { field: 'uvicorn-log-level', value: level } });
  }
  const dtype = values['dtype'];
  if (typeof dtype === 'string' && !DTYPES_16_BIT.includes(dtype)) {
    const why = DTYPES_32_BIT.includes(dtype)
      ? 'the simulator prices 16-bit weights (or the model\'s quantization); float32 weights take twice the memory and are not modelled'
      : `vLLM's choices are ${[...DTYPES_16_BIT, ...DTYPES_32_BIT].join(', ')}`;
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--dtype ${dtype}: ${why}`, { details: { field: 'dtype', value: dtype } });
  }
  const flags = (names: readonly string[]): string => names.filter((k) => values[k] !== undefined).map((k) => `--${k}`).join(', ');
  const vllm = flags(Object.keys(VLLM_NO_EFFECT));
  const own = flags(also);
  return [
    ...(vllm === '' ? [] : [`note: ${vllm}: no effect on the simulation (logging, downloads, remote code; --dtype's 16-bit types are priced alike); ignored`]),
    ...(own === '' ? [] : [`note: ${own}: sim run answers no HTTP (sim serve does); ignored`]),
  ];
}

/** vLLM-style flags and --set pairs → one validated ServerConfig (--set wins). */
export function configFromFlags(values: Record<string, unknown>): ServerConfig {
  const raw: Record<string, unknown> = {};
  for (const k of ALL_KNOB_NAMES) {
    const flag = k.replaceAll('_', '-');
    if (knobKind(k) === 'boolean') {
      if (values[flag] === true) raw[k] = true;
      if (values[`no-${flag}`] === true) raw[k] = false;
    } else if (typeof values[flag] === 'string') {
      raw[k] = coerceKnobValue(k, values[flag], { field: flag });
    }
  }
  const sets = values['set'];
  return parseKnobAssignments(Array.isArray(sets) ? sets.map(String) : [], raw);
}

function gpuCount(raw: string | undefined): number {
  return numberFlag(raw, 'gpus', { int: true, min: 1, max: 64 }) ?? 1;
}

/**
 * `--trace FILE`: the trace's own requests, times ÷ --trace-speed, the first --trace-limit (or
 * --num-prompts) of them; --concurrency caps the requests in flight. Null without --trace.
 */
function traceWorkloadFromFlags(values: Record<string, unknown>, cwd: string): { workload: Workload; line: string } | null {
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  const file = str('trace');
  if (file === undefined) {
    for (const k of ['trace-speed', 'trace-limit']) if (str(k) !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${k} goes with --trace FILE`, { details: { field: k } });
    return null;
  }
  for (const k of ['workload', 'input-len', 'output-len', 'request-rate', 'burstiness', 'rate-stages', 'prompt-pool']) {
    if (str(k) !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--trace brings its own requests and arrival times; --${k} cannot go with it`, { details: { field: k } });
  }
  const speed = numberFlag(str('trace-speed'), 'trace-speed', { min: 1e-6, max: 1e6 }) ?? 1;
  const limit = numberFlag(str('trace-limit'), 'trace-limit', { int: true, min: 1, max: 1_000_000 });
  const numPrompts = numberFlag(str('num-prompts'), 'num-prompts', { int: true, min: 1, max: 1_000_000 });
  const cap = numberFlag(str('concurrency'), 'concurrency', { int: true, min: 1 });
  const n = Math.min(limit ?? Number.POSITIVE_INFINITY, numPrompts ?? Number.POSITIVE_INFINITY);
  const { workload, trace } = traceWorkloadOfFile(resolve(cwd, file), file, { speed, limit: Number.isFinite(n) ? n : undefined, embed: true });
  const a = workload.arrival;
  const capped: Workload = cap === undefined || a.kind === 'closed' ? workload : { ...workload, arrival: { ...a, max_concurrency: cap } };
  const skipped = trace.skippedZero === 0 ? '' : `; ${trace.skippedZero} rows with 0 tokens left out`;
  return { workload: capped, line: `Trace: ${file} (${trace.format}, ${trace.requests.length} requests, times ÷ ${speed}${skipped})\n` };
}

/** `--request-rate` and `--burstiness` take "inf" as `run` does (and vLLM's bench): a positive number or infinity. */
function infOrNumberFlag(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim().toLowerCase() === 'inf') return Number.POSITIVE_INFINITY;
  const n = readDecimal(raw);
  if (n === undefined || n <= 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${flag} must be a number > 0 or "inf", got "${raw}"`, { details: { field: flag, value: raw } });
  return n;
}

/**
 * The open-loop arrival of `--request-rate R [--burstiness B]`. "inf" reads as `run` reads it
 * (loadgen/config.ts arrivalOf): R = inf sends every request at once (a burst: B has nothing to shape),
 * B = inf spaces them evenly; otherwise Poisson without B, gamma with it.
 */
function openArrival(rate: number, burstiness: number | undefined): WorkloadInput['arrival'] {
  if (rate === Number.POSITIVE_INFINITY) return { kind: 'burst' };
  if (burstiness === Number.POSITIVE_INFINITY) return { kind: 'constant', rate_rps: rate };
  if (burstiness === undefined) return { kind: 'poisson', rate_rps: rate };
  return { kind: 'gamma', rate_rps: rate, burstiness };
}

function workloadFromFlags(values: Record<string, unknown>, cwd: string): Workload {
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  const file = str('workload');
  const inLen = numberFlag(str('input-len'), 'input-len', { int: true, min: 1 });
  const outLen = numberFlag(str('output-len'), 'output-len', { int: true, min: 1 });
  const concurrency = numberFlag(str('concurrency'), 'concurrency', { int: true, min: 1 });
  const rate = infOrNumberFlag(str('request-rate'), 'request-rate');
  const burstiness = infOrNumberFlag(str('burstiness'), 'burstiness');
  const numPrompts = numberFlag(str('num-prompts'), 'num-prompts', { int: true, min: 1, max: 1_000_000 });
  const stagesText = str('rate-stages');
  const stages = stagesText === undefined ? undefined : parseRateStagesFlag(stagesText);
  const pool = numberFlag(str('prompt-pool'), 'prompt-pool', { int: true, min: 1, max: 1_000_000 });
  if (stages !== undefined && (rate !== undefined || burstiness !== undefined)) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--rate-stages sets Poisson rates stage by stage; --request-rate and --burstiness cannot go with it', { details: { field: 'rate-stages' } });
  }
  if (file !== undefined && (inLen !== undefined || outLen !== undefined)) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'give either --workload or --input-len/--output-len, not both');
  }
  let base: WorkloadInput;
  if (file !== undefined) {
    base = loadYamlFile(resolve(cwd, file), Workload, 'LMB_ERR_WORKLOAD_INVALID');
  } else {
    base = {
      name: 'random',
      input_len: { dist: 'fixed', value: requireFlag(inLen, 'input-len') },
      output_len: { dist: 'fixed', value: requireFlag(outLen, 'output-len') },
      arrival: { kind: 'burst' },
      num_prompts: 1000,
    };
  }
  // Checked before --concurrency is read: a closed loop has no arrival shape, and a --burstiness it
  // dropped would leave the user believing the run was bursty.
  if (burstiness !== undefined && rate === undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--burstiness needs --request-rate', { details: { field: 'burstiness' } });
  if (stages !== undefined) {
    // Set below, once the stages are known to replace whatever arrival the file gave.
  } else if (rate !== undefined) {
    base = { ...base, arrival: { ...openArrival(rate, burstiness), ...(concurrency === undefined ? {} : { max_concurrency: concurrency }) } };
  } else if (concurrency !== undefined) base = { ...base, arrival: { kind: 'closed', concurrency } };
  if (stages !== undefined) {
    // The stages bound the run: the request count is theirs unless --num-prompts lowers it.
    const { num_prompts: _n, ...rest } = base;
    base = { ...rest, arrival: { kind: 'poisson', stages, ...(concurrency === undefined ? {} : { max_concurrency: concurrency }) } };
  }
  if (pool !== undefined) base = { ...base, prompt_pool: { size: pool } };
  if (numPrompts !== undefined) base = { ...base, num_prompts: numPrompts };
  const parsed = Workload.safeParse(base);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new LmBenchError('LMB_ERR_WORKLOAD_INVALID', formatZodIssues(parsed.error.issues, 'workload'), { details: { field: dottedPath(first?.path ?? []) } });
  }
  return parsed.data;
}

export function startupFailedError(f: ServerFailure): LmBenchError {
  if (f.phase === 'runtime') {
    return new LmBenchError('LMB_ERR_SERVER_CRASHED', `${f.rule} (${f.phase}, ${f.atS.toFixed(1)} s into the run, after ${f.atRequest} requests): ${f.message}`, { details: { rule: f.rule, phase: f.phase } });
  }
  return new LmBenchError('LMB_ERR_STARTUP_FAILED', `${f.rule} (${f.phase}): ${f.message}`, { details: { rule: f.rule, phase: f.phase } });
}

const f1 = (x: number): string => x.toFixed(1);
const f2 = (x: number): string => x.toFixed(2);

/** A result as `vllm bench serve` prints it, plus the server block. */
export function formatResultText(r: BenchmarkResult): string {
  const line = (k: string, v: string): string => `${k.padEnd(40)}${v}\n`;
  let s = `${'='.repeat(15)} Serving Benchmark Result (simulated) ${'='.repeat(15)}\n`;
  s += line('Model / hardware:', `${r.model ?? r.model_id} on ${r.hardware?.count ?? 1}× ${r.hardware?.gpu ?? '?'}`);
  s += line('Successful requests:', String(r.completed));
  s += line('Failed requests:', String(r.failed));
  // Why they failed (the server's refusals: a request longer than max_model_len), not only how many.
  for (const e of r.lmb.error_samples ?? []) s += `  ${e.count} × ${e.status === null ? 'error' : `HTTP ${e.status}`}, such as: ${e.message}\n`;
  s += line('Benchmark duration (s):', f2(r.duration));
  s += line('Total input tokens:', String(r.total_input_tokens));
  s += line('Total generated tokens:', String(r.total_output_tokens));
  s += line('Request throughput (req/s):', f2(r.request_throughput));
  if (r.request_goodput !== null) s += line('Request goodput (req/s):', f2(r.request_goodput));
  s += line('Output token throughput (tok/s):', f2(r.output_throughput));
  s += line('Total token throughput (tok/s):', f2(r.total_token_throughput));
  const saturated = keepUpLine(r.saturation ?? null);
  if (saturated !== null) s += `${saturated}\n`;
  for (const [m, title] of [['ttft', 'Time to First Token'], ['tpot', 'Time per Output Token (excl. 1st token)'], ['itl', 'Inter-token Latency'], ['e2el', 'End-to-end Latency']] as const) {
    s += `${'-'.repeat(15)}${title}${'-'.repeat(Math.max(0, 40 - title.length))}\n`;
    s += line(`Mean ${m.toUpperCase()} (ms):`, f2(r[`mean_${m}_ms`]));
    s += line(`Median ${m.toUpperCase()} (ms):`, f2(r[`median_${m}_ms`]));
    s += line(`P99 ${m.toUpperCase()} (ms):`, f2(r[`p99_${m}_ms`]));
  }
  const sm = r.server_metrics;
  if (sm !== null) {
    s += `${'-'.repeat(15)}Server${'-'.repeat(34)}\n`;
    s += line('KV cache capacity (tokens):', String(sm.kv_cache_capacity_tokens ?? '-'));
    s += line('KV cache usage peak:', `${f1((sm.kv_cache_usage_peak ?? 0) * 100)}% (${f2(sm.kv_cache_peak_gib ?? 0)} GiB)`);
    s += line('GPU memory reserved (GiB per GPU):', f2(sm.gpu_memory_reserved_gib ?? 0));
    s += line('Preemptions:', String(sm.num_preemptions ?? 0));
    // The limits the peaks are read against, as resolved: vLLM lowers an unset max_num_seqs to
    // max_num_batched_tokens (a debug log line only), which the peaks alone would not explain.
    const cfg = r.server_config;
    if (cfg !== null) s += line('Max num seqs / batched tokens:', `${cfg.max_num_seqs ?? '-'} / ${cfg.max_num_batched_tokens ?? '-'}`);
    s += line('Running / waiting peak:', `${sm.num_requests_running_peak ?? 0} / ${sm.num_requests_waiting_peak ?? 0}`);
    if (sm.prefix_cache_hit_rate !== null) s += line('Prefix cache hit rate:', `${f1(sm.prefix_cache_hit_rate * 100)}%`);
    if (r.lmb.startup_time_s !== null) s += line('Simulated start-up time (s):', f1(r.lmb.startup_time_s));
  }
  if (r.energy !== null && r.energy !== undefined) s += `${energyLine(r.energy)}\n`;
  s += `${'='.repeat(68)}\n`;
  return s;
}

const WINDOW_RULES: Record<'steady-state' | 'load', string> = {
  'steady-state': "ML.ENERGY's steady-state window: from the first k requests' first tokens to N − k − 1 finished, k = max_num_seqs × replicas or the client's concurrency if lower",
  load: 'load window: first request sent to last token',
};

/** One line of a simulated run's energy: average power of all its GPUs, energy, J/token, tokens/J, and the window they cover. */
export function energyLine(e: Energy): string {
  if (e.avg_power_w === null || e.energy_j === null || e.window === null) return `Energy: unavailable (${e.unavailable_reason ?? 'unknown'})`;
  const w = e.window;
  const perToken = e.energy_per_output_token_j === null ? '–' : e.energy_per_output_token_j.toFixed(4);
  const perJoule = e.output_tokens_per_joule === null ? '–' : e.output_tokens_per_joule.toFixed(2);
  return `Energy: ${f1(e.avg_power_w)} W average (${e.gpus} GPU${e.gpus === 1 ? '' : 's'}), ${Math.round(e.energy_j)} J, ${perToken} J/token, ${perJoule} tokens/J over ${f1(w.start_s)}–${f1(w.end_s)} s (${WINDOW_RULES[w.rule]})`;
}

async function runCmd(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(argv, {
    ...COMMON,
    ...vllmFlagOptions(),
    'input-len': { type: 'string' },
    'output-len': { type: 'string' },
    workload: { type: 'string' },
    concurrency: { type: 'string' },
    'request-rate': { type: 'string' },
    burstiness: { type: 'string' },
    'num-prompts': { type: 'string' },
    seed: { type: 'string' },
    trace: { type: 'string' },
    'trace-speed': { type: 'string' },
    'trace-limit': { type: 'string' },
    'rate-stages': { type: 'string' },
    'prompt-pool': { type: 'string' },
    'requests-out': { type: 'string' },
    records: { type: 'string' },
    ...VLLM_NO_EFFECT,
    // A pasted `vllm serve` line's address and key: sim run answers no HTTP (sim serve does).
    host: { type: 'string' },
    port: { type: 'string' },
    'api-key': { type: 'string' },
  });
  const v = values as Record<string, unknown>;
  for (const note of noEffectNotes(v, ['host', 'port', 'api-key', 'served-model-name'])) io.stderr.write(`${note}\n`);
  const catalog = defaultCatalog();
  const gpu = resolveGpuFlag(requireFlag(values.gpu, 'gpu'), io);
  const model = (await resolveModelFlag(requireFlag(values.model, 'model'), io, values.offline)).spec;
  const config = configFromFlags(v);
  const traced = traceWorkloadFromFlags(v, io.cwd);
  const workload = traced?.workload ?? workloadFromFlags(v, io.cwd);
  const seed = numberFlag(values.seed, 'seed', { int: true, min: 0 }) ?? 0;
  const vllmVersion = vllmVersionFlag(values['vllm-version']);
  const { profile, source } = profileFromFlags(values, io, catalog, gpu, vllmVersion);
  const requestsPath = outputPath('requests-out', values['requests-out'], io.cwd);
  const recordsPath = outputPath('records', values.records, io.cwd);
  // Per-request output: latencies to pool across stages or runs (`run --requests-out` writes the same
  // lines), or the whole records (`run --records`'s format), each written as its request completes:
  // the run keeps no token times (simulate's keepRecords), which a million prompts would not fit.
  const requestsOut = requestsPath === undefined ? null : new OrderedLines('requests-out', requestsPath);
  const recordsOut = recordsPath === undefined ? null : new OrderedLines('records', recordsPath);
  const streams = [requestsOut, recordsOut].filter((x): x is OrderedLines => x !== null);
  if (streams.length > 0) removeWhenGone(streams.map((f) => f.partial));
  const onRecord =
    streams.length === 0
      ? undefined
      : (r: RequestRecord, position: number): void => {
          requestsOut?.put(position, `${JSON.stringify(requestLatencyOf(r))}\n`);
          recordsOut?.put(position, `${JSON.stringify(r)}\n`);
        };
  try {
    const result = simulateForCli({ config, hardware: { gpu: gpu.id, count: gpuCount(values.gpus) }, model, workload, seed, catalog, profile, vllmVersion, startEpochMs: Date.now(), keepRecords: false, onRecord });
    for (const f of streams) f.finish();
    printResult(io, result, values.json === true, source, traced?.line ?? '', catalog);
    return 0;
  } finally {
    for (const f of streams) f.discard();
  }
}

/** `simulate` for `sim run`: its start-up failure or a workload the server refused whole as errors. */
function simulateForCli(input: SimulateInput): BenchmarkResult {
  const out = simulate(input);
  if (!out.ok) throw startupFailedError(out.failure);
  const workload = input.workload;
  if (out.result.completed === 0) {
    // vLLM's server answered every request with HTTP 400: the workload does not fit this max_model_len.
    const longest = maxRequestTokens(workload);
    throw new LmBenchError('LMB_ERR_WORKLOAD_INVALID', `every request was refused: the workload's requests (up to ${longest} tokens of prompt + output) exceed max_model_len (${out.resolved.max_model_len})`, {
      details: { field: 'max_model_len', max_model_len: out.resolved.max_model_len, longest },
    });
  }
  return out.result;
}

// eslint-disable-next-line max-params -- what `sim run` prints: the result, how, and the lines around it
function printResult(io: CliIo, simulated: BenchmarkResult, json: boolean, source: string, traceLine: string, catalog: Catalog): void {
  const result = withCost(simulated, loadPrices(catalog), catalog);
  if (json) writeJson(io, { ...result, lmb: { ...result.lmb, sim_profile: source } });
  else {
    // Why the run missed its SLOs or saturated, and the knobs to try, as `run` prints it after its figures.
    const why = diagnosisLines(result.diagnosis).map((l) => `${l}\n`).join('');
    io.stdout.write(`${traceLine}${formatResultText(result)}${why}${costLine(result.cost ?? null)}Simulator profile: ${source}\n`);
  }
}

/** "Cost: $3.95/h, $0.31 per million output tokens at the goodput (source)", or nothing without a price. */
function costLine(c: Cost | null): string {
  if (c === null) return '';
  const perM = c.usd_per_million_output_tokens === null ? 'no output to price' : `$${c.usd_per_million_output_tokens.toFixed(3)} per million output tokens at the goodput`;
  return `Cost: $${c.usd_per_hour.toFixed(2)}/h, ${perM} (${c.price_source})\n`;
}

/** `--ssl-certfile` and `--ssl-keyfile` together or not at all, as vLLM asks. */
function tlsFiles(cert: string | undefined, key: string | undefined, cwd: string): { cert: string; key: string } | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--ssl-certfile and --ssl-keyfile go together', { details: { field: cert === undefined ? 'ssl-certfile' : 'ssl-keyfile' } });
  }
  const read = (file: string, flag: string): string => {
    try {
      return readFileSync(resolve(cwd, file), 'utf8');
    } catch (err) {
      throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `--${flag} ${file} cannot be read`, { cause: err, details: { field: flag, file } });
    }
  };
  return { cert: read(cert, 'ssl-certfile'), key: read(key, 'ssl-keyfile') };
}

async function serveCmd(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    {
      ...COMMON,
      ...vllmFlagOptions(),
      port: { type: 'string' },
      host: { type: 'string' },
      speed: { type: 'string' },
      seed: { type: 'string' },
      'api-key': { type: 'string' },
      'ssl-certfile': { type: 'string' },
      'ssl-keyfile': { type: 'string' },
      'startup-scale': { type: 'string' },
      ...VLLM_NO_EFFECT,
    },
    true,
  );
  const v = values as Record<string, unknown>;
  for (const note of noEffectNotes(v, [])) io.stderr.write(`${note}\n`);
  const catalog = defaultCatalog();
  const gpu = resolveGpuFlag(requireFlag(values.gpu, 'gpu'), io);
  const modelName = values.model ?? positionals.find((p) => p !== 'serve');
  const model = (await resolveModelFlag(requireFlag(modelName, 'model'), io, values.offline)).spec;
  const config = configFromFlags(v);
  const port = numberFlag(values.port, 'port', { int: true, min: 0, max: 65535 }) ?? 8000;
  const speed = numberFlag(values.speed, 'speed', { min: 1e-3, max: 1e6 }) ?? 1;
  const seed = numberFlag(values.seed, 'seed', { int: true, min: 0 }) ?? 0;
  const host = values.host ?? '127.0.0.1';
  const tls = tlsFiles(values['ssl-certfile'], values['ssl-keyfile'], io.cwd);
  const apiKey = values['api-key'] ?? io.env['VLLM_API_KEY'];
  const startupScale = numberFlag(values['startup-scale'], 'startup-scale', { min: 0, max: 100 }) ?? 1;
  const vllmVersion = vllmVersionFlag(values['vllm-version']);
  const { profile, source } = profileFromFlags(values, io, catalog, gpu, vllmVersion);
  const { startSimServer } = await import('../../sim/server.js');
  let server;
  let onCrash: () => void = () => {};
  try {
    server = await startSimServer({
      config,
      hardware: { gpu: gpu.id, count: gpuCount(values.gpus) },
      model,
      host,
      port,
      speed,
      seed,
      catalog,
      servedModelName: values['served-model-name'],
      tls,
      apiKey,
      profile,
      vllmVersion,
      startupScale,
      log: (line) => io.stderr.write(`${line}\n`),
      onCrash: () => onCrash(),
    });
  } catch (err) {
    if (err instanceof LmBenchError && err.code === 'LMB_ERR_STARTUP_FAILED') {
      // Like a crashing `vllm serve`: vLLM's own lines on stderr (what a vllm target reads), then
      // lm-bench's error line with the code (main prints it) and exit 3.
      io.stderr.write(`ERROR [core.py] EngineCore failed to start.\n${err.message}\n`);
    }
    throw err;
  }
  const srv = server;
  io.stderr.write(
    `INFO: simulated vLLM (${model.id} on ${gpu.id}, speed ×${speed}, profile: ${source}) bound to ${srv.url}; ` +
      `starting up (${srv.startupTimeS.toFixed(1)} s simulated${startupScale === 1 ? '' : ` × ${startupScale}`}${speed === 1 ? '' : ` ÷ ${speed}`})\n`,
  );
  void srv.ready.then(() => io.stderr.write(`INFO: listening on ${srv.url}\n`));
  return new Promise<number>((done) => {
    const stop = (): void => {
      // What the GPUs drew while serving (first request to last token), as `sim run` reports its window.
      if (srv.engine.energy !== null) io.stderr.write(`INFO: ${energyLine(srv.engine.energy.loadWindow())}\n`);
      void srv.close().then(() => done(0));
    };
    // The engine died under load: vLLM's API server exits with it (status 1).
    onCrash = () => void srv.close().then(() => done(1));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

export const command: Command = {
  name: 'sim',
  summary: 'simulated vLLM engine: `sim run` in virtual time, `sim serve` over HTTP',
  usage: USAGE,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    switch (sub) {
      case 'run':
        return runCmd(rest, io);
      case 'serve':
        return serveCmd(rest, io);
      case 'predict':
        return predictCmd(rest, io);
      case 'calibrate':
        return calibrateCmd(rest, io);
      case undefined:
      default:
        throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `sim: expected \`run\`, \`serve\`, \`predict\` or \`calibrate\`, got ${sub === undefined ? 'nothing' : `"${sub}"`}\n${USAGE}`);
    }
  },
};
