import { meetsSlo, sloField, SLO_KEYS, type BenchmarkResult, type ModelSpec, type ServerConfig, type Slo, type Workload } from '../domain/index.js';
import type { RunFilter, Store } from '../store/index.js';
import type { Answer } from './answer.js';
import { servableModel, vllmServeCommand } from './commands.js';

/**
 * The history's own evidence beside a prediction (issue: a trained model whose intervals are too wide
 * to pick anything said nothing meets the SLOs while a run in the history had met them): measured runs
 * of the question's deployment, on the same load, whose own figures met the SLOs. An answer with no pick
 * names them, marked measured, not predicted, in its trust reasons (the JSON's `trust.reasons`; the text
 * prints them under the verdict). `withMeasuredEvidence` is pure; `withHistoryEvidence` reads the runs
 * from the store for the CLI and the service alike (the service applies it after its answer cache, so a
 * cached answer still depends on the question and the model alone).
 */
export interface MeasuredRun {
  readonly id: number;
  readonly config: ServerConfig;
  readonly result: BenchmarkResult;
  /** The load the run was measured on; null where the source did not say (no evidence then). */
  readonly workload: Workload | null;
  /** Result keys the source did not provide (RunMeta.unavailable): a limit on one of them is not evidence. */
  readonly unavailable: readonly string[];
}

/** A reason that is the history's evidence starts so (the text picks these out to print with the verdict). */
export const MEASURED_PREFIX = 'measured, not predicted:';

/** Measured runs named at most. */
const MAX_NAMED = 3;

/** Sorted-key JSON, so two workloads parsed from differently ordered files compare equal. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * What makes two workloads the same load: everything but the labels (name, description), the run
 * length (num_prompts), the SLO it carried, the seed, and a trace's inline requests and file name (its
 * sha256 names it).
 */
export function loadKey(w: Workload): string {
  const { name: _name, description: _description, num_prompts: _n, slo: _slo, seed: _seed, trace, ...load } = w;
  const t = trace === undefined ? undefined : { format: trace.format, sha256: trace.sha256, requests: trace.requests, speed: trace.speed, block_tokens: trace.block_tokens };
  return canonical({ ...load, trace: t });
}

export interface MeasuredQuestion {
  readonly gpus: number;
  readonly workload: Workload;
  readonly slo: Slo;
}

/** The runs (of the question's GPU, count and model: the caller's filter) that met its SLOs on its load, the highest throughput first. */
export function runsMeetingSlo(runs: readonly MeasuredRun[], q: MeasuredQuestion): MeasuredRun[] {
  const keys = SLO_KEYS.filter((k) => q.slo[k] !== undefined);
  // With no limit every run "meets" them: that says nothing.
  if (keys.length === 0) return [];
  const load = loadKey(q.workload);
  return runs
    .filter((r) => r.workload !== null && loadKey(r.workload) === load)
    .filter((r) => r.result.completed > 0 && keys.every((k) => !r.unavailable.includes(sloField(k).field)))
    .filter((r) => meetsSlo(q.slo, r.result))
    .sort((a, b) => b.result.output_throughput - a.result.output_throughput);
}

const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** One reason per run that met the SLOs: its id, its figures against the limits, its throughput, and the server that ran it. */
export function measuredReasons(met: readonly MeasuredRun[], q: MeasuredQuestion, model: ModelSpec): string[] {
  const keys = SLO_KEYS.filter((k) => q.slo[k] !== undefined);
  return met.slice(0, MAX_NAMED).map((r) => {
    const figures = keys.map((k) => `${k} ${fmt(r.result[sloField(k).field as keyof BenchmarkResult] as number)} ≤ ${String(q.slo[k])} ms`).join(', ');
    const tput = fmt(r.result.output_throughput / Math.max(1, q.gpus));
    return `${MEASURED_PREFIX} run ${r.id} in the history met your SLOs on this workload (${figures}; ${tput} tok/s/GPU): ${vllmServeCommand(servableModel(model), r.config)}`;
  });
}

/**
 * The answer with the history's evidence: where it has no pick, each measured run that met the SLOs
 * is named first among the trust reasons (the model's verdict is what not to trust). An answer with a
 * pick, or a history with no such run, is returned as it is.
 */
export function withMeasuredEvidence<A extends Answer>(a: A, runs: readonly MeasuredRun[], q: MeasuredQuestion, model: ModelSpec): A {
  if (a.best !== null) return a;
  const met = runsMeetingSlo(runs, q);
  if (met.length === 0) return a;
  const more = met.length > MAX_NAMED ? [`${MEASURED_PREFIX} ${met.length - MAX_NAMED} more runs in the history met your SLOs on this workload`] : [];
  return { ...a, trust: { ...a.trust, level: 'thin', reasons: [...measuredReasons(met, q, model), ...more, ...a.trust.reasons] } };
}

/** The history's runs an answer's evidence is drawn from: the question's GPU, GPU count and model. */
export function evidenceFilter(q: { readonly gpu: string; readonly gpus: number; readonly model: string }): RunFilter {
  return { model: q.model, gpu: q.gpu, gpuCount: q.gpus };
}

/**
 * The answer with the history's measured evidence: where nothing is picked, the store's runs of the
 * question's deployment that met its SLOs on its load are named (`withMeasuredEvidence`). The runs are
 * read only when the answer has no pick.
 */
export function withHistoryEvidence<A extends Answer>(a: A, store: Pick<Store, 'listRuns'>, q: MeasuredQuestion & { readonly gpu: string; readonly model: string }, model: ModelSpec): A {
  if (a.best !== null) return a;
  const runs: MeasuredRun[] = store.listRuns(evidenceFilter(q)).map((r) => ({ id: r.id, config: r.server_config, result: r.result, workload: r.workload, unavailable: r.meta.unavailable }));
  return withMeasuredEvidence(a, runs, q, model);
}
