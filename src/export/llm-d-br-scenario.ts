import { meanLength, vllmServeArgs, type LengthDist, type ServerConfig, type Workload } from '../domain/index.js';
import { assertNever } from '../errors.js';
import type { SourceFormat } from '../store/index.js';
import { meanPerCompleted, requestRate } from './figures.js';
import { shortId } from './ids.js';
import type { ExportItem } from './types.js';

/**
 * `scenario` of an llm-d Benchmark Report v0.2 (llm-d/llm-d-benchmark
 * `llmdbenchmark/analysis/benchmark_report/schema_v0_2.py`): the inference engine as one stack
 * component (model, GPU and count, parallelism, the `vllm serve` flags) and the load (tool, length
 * distributions, rate or concurrency). Fields the report requires but lm-bench has no fact for are
 * filled only where the schema's own default says the same (one replica, pipeline parallelism 1).
 */

/** The stack label observability entries refer back to. */
export const ENGINE_LABEL = 'vllm-0';

type Json = Record<string, unknown>;

/** Drops null and undefined values: llm-d writes reports with `exclude_none`. */
export function compact(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));
}

export function scenario(item: ExportItem): Json {
  const load = loadSection(item);
  return compact({ stack: [engine(item)], load });
}

function engine(item: ExportItem): Json {
  const c = item.server_config;
  const tp = c.tensor_parallel_size ?? 1;
  const dp = c.data_parallel_size ?? 1;
  const sim = item.result.lmb.source === 'sim';
  const profile = item.result.lmb.sim_profile;
  return {
    metadata: { schema_version: '0.0.1', label: ENGINE_LABEL, cfg_id: shortId(c), description: sim ? 'the lm-bench simulator of a vLLM server (virtual time)' : 'vLLM server' },
    standardized: {
      kind: 'inference_engine',
      tool: sim ? 'lm-bench-sim' : 'vllm',
      // lm-bench does not record a real server's vLLM version; the simulator is lm-bench's own.
      tool_version: sim ? `lm-bench ${item.result.lmb.version}${profile === undefined ? '' : ` (profile ${profile})`}` : 'unknown',
      role: 'replica',
      replicas: 1,
      model: { name: item.model_name },
      accelerator: {
        model: item.hardware.gpu,
        count: item.hardware.count,
        // vLLM's defaults for unset knobs (TP and DP 1); expert parallelism spans TP × DP when enabled.
        parallelism: { tp, dp, dp_local: dp, ep: c.enable_expert_parallel === true ? tp * dp : 1, pp: 1 },
      },
    },
    native: { args: engineArgs(c) },
  };
}

/** The knobs as `vllm serve` flags (`--max-num-seqs: 256`, `--enable-prefix-caching: null`), llm-d's `native.args`. */
export function engineArgs(config: ServerConfig): Json {
  const argv = vllmServeArgs('', config).slice(2);
  const args: Json = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('--')) {
      // The typed value (a number stays a number), not vllmServeArgs's string.
      const name = flag.slice(2).replaceAll('-', '_') as keyof ServerConfig;
      args[flag] = config[name] ?? next;
      i++;
    } else {
      args[flag] = null;
    }
  }
  return args;
}

/** Who generated the load, under llm-d's names for the tools it knows (base.py `WorkloadGenerator`). */
function loadTool(item: ExportItem): { tool: string; version: string } {
  const lmb = item.result.lmb;
  if (lmb.source === 'sim') return { tool: 'lm-bench-sim', version: lmb.version };
  if (lmb.source === 'loadgen') return { tool: 'lm-bench', version: lmb.version };
  const format: SourceFormat | null = item.subject.kind === 'run' ? item.subject.source_format : null;
  // A partial map: formats added to SourceFormat later are named after themselves, not refused.
  const known: Partial<Record<SourceFormat, string>> = {
    vllm_bench_serve: 'vllm-benchmark',
    vllm_bench_sweep: 'vllm-benchmark',
    vllm_nightly: 'vllm-benchmark',
    guidellm: 'guidellm',
    genai_perf: 'genai-perf',
    lm_bench: 'lm-bench',
  };
  return { tool: format === null ? 'unknown' : (known[format] ?? format.replaceAll('_', '-')), version: 'unknown' };
}

function loadSection(item: ExportItem): Json | null {
  const lengths = seqLengths(item);
  if (lengths === null) return null;
  const { tool, version } = loadTool(item);
  const w = item.workload;
  return {
    metadata: compact({ schema_version: '0.0.1', cfg_id: shortId(w ?? { input: lengths.input, output: lengths.output }), description: w === null ? null : (w.description ?? w.name) }),
    standardized: compact({
      tool,
      tool_version: version,
      // The simulator draws lengths only; a real run's prompts may be synthetic or a dataset's, unrecorded.
      source: item.result.lmb.source === 'sim' ? 'random' : 'unknown',
      stage: 0,
      input_seq_len: lengths.input,
      output_seq_len: lengths.output,
      ...traffic(item),
    }),
    native: w === null ? {} : { config: { workload: w, ...(item.workload_derived ? { derived_on_ingest: true } : {}) } },
  };
}

/** The asked-for length distributions; for a reconstructed or absent workload, the measured means ('other'). */
function seqLengths(item: ExportItem): { input: Json; output: Json | null } | null {
  const w = item.workload;
  if (w !== null && !item.workload_derived) return { input: seqLength(w.input_len), output: seqLength(w.output_len) };
  const inMean = meanPerCompleted(item, 'total_input_tokens');
  if (inMean === null) return null;
  const outMean = meanPerCompleted(item, 'total_output_tokens');
  return { input: { distribution: 'other', value: inMean }, output: outMean === null ? null : { distribution: 'other', value: outMean } };
}

function seqLength(d: LengthDist): Json {
  switch (d.dist) {
    case 'fixed':
      return { distribution: 'fixed', value: d.value };
    case 'uniform':
      return { distribution: 'uniform', value: meanLength(d), min: d.min, max: d.max };
    case 'normal':
      return compact({ distribution: 'gaussian', value: d.mean, std_dev: d.std, min: d.min, max: d.max });
    case 'lognormal':
      return compact({ distribution: 'other', value: d.mean, std_dev: d.std, min: d.min, max: d.max });
    case 'zipf':
      return { distribution: 'other', value: meanLength(d), min: d.min, max: d.max };
    default:
      return assertNever(d, 'length distribution');
  }
}

/** `rate_qps` and `concurrency`: the workload's arrival when it was asked for, else what the result records. */
function traffic(item: ExportItem): { rate_qps?: number; concurrency?: number } {
  const w: Workload | null = item.workload_derived ? null : item.workload;
  if (w === null) {
    const rate = requestRate(item);
    const cap = item.result.max_concurrency;
    return { ...(typeof rate === 'number' && rate > 0 ? { rate_qps: rate } : {}), ...(cap === null ? {} : { concurrency: cap }) };
  }
  const a = w.arrival;
  switch (a.kind) {
    case 'closed':
      return { concurrency: a.concurrency };
    case 'burst':
      // All at once with no cap: unbounded concurrency, which the schema can only say as .inf; left out.
      return a.max_concurrency === undefined ? {} : { concurrency: a.max_concurrency };
    case 'poisson':
    case 'gamma':
    case 'constant':
      return { rate_qps: a.rate_rps, ...(a.max_concurrency === undefined ? {} : { concurrency: a.max_concurrency }) };
    default:
      return assertNever(a, 'arrival');
  }
}
