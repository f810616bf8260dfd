import { configAssignments, formatSloString, unservableModelFile, vllmServeArgs, type MeasureCommands, type ModelSpec, type ServerConfig, type Slo, type Workload } from '../domain/index.js';
import type { Catalog } from '../catalog/index.js';
import { shellQuote } from '../util/shell.js';

/**
 * Commands a recommendation prints for the user to paste: start the server with `vllm serve`, load
 * it with `lm-bench run` on the same workload, or queue configurations in a study with
 * `lm-bench tune --enqueue` (they run before anything the tuner proposes). Every value is quoted
 * for a POSIX shell; nothing here runs them.
 */
export interface Deployment {
  readonly gpu: string;
  readonly gpus: number;
  readonly model: ModelSpec;
  /**
   * How `--model` names the model in the commands: the catalog id, or for a model derived from a
   * config.json its Hugging Face id or directory (`hf_name`), which resolves again in another shell.
   */
  readonly modelRef?: string;
  readonly workload: Workload;
  /** The workload file as the user named it (or where to save the workload the answer carries). */
  readonly workloadRef: string;
  readonly slo: Slo;
  /** The vLLM release the question's simulator imitates (`--vllm-version`); absent: a current one. */
  readonly vllmVersion?: string | undefined;
  /** The question held the checkpoint's numerics (`--keep-precision`): so does the study it queues. */
  readonly keepPrecision?: boolean | undefined;
}

// Which model the commands can serve, and why they name a placeholder: one rule for recommend and tune (domain/served-model.ts).
export { CHECKPOINT_PLACEHOLDER, servableModel, servedModelWarning, unservableModelFile } from '../domain/index.js';

/**
 * What the model file's own `_name_or_path` suggests serving in the placeholder's place, in words: the
 * checkpoint the file was saved from (transformers writes it), which may be a base model rather than
 * these weights, or a path on the machine that trained them, so it is offered, never put in the commands.
 */
export function nameOrPathHint(nameOrPath: string): string {
  return `the file's _name_or_path is ${JSON.stringify(nameOrPath)}: the checkpoint it was saved from, which may be a base model rather than these weights or a path on another machine; if it is this checkpoint, serve that`;
}

/** `Deployment.modelRef`: the catalog id for a catalog model, else the spec's `hf_name` (the JSON file itself where it is not a config.json: lm-bench reads any such file). */
export function modelRefOf(catalog: Catalog, model: ModelSpec): string {
  if (catalog.findOwn(model.id) !== null) return model.id;
  return unservableModelFile(model) ?? model.hf_name;
}

/** Start the server (`vllm_serve`, on the GPU machine), load it with the workload and keep the result (`lm_bench_run`): the answer's schema. */
export type { MeasureCommands } from '../domain/recommendation.js';

/** Where `vllm serve` listens by default. */
const DEFAULT_SERVER = 'http://127.0.0.1:8000';

export function vllmServeCommand(model: ModelSpec, config: ServerConfig): string {
  return shellQuote(['vllm', ...vllmServeArgs(model.hf_name, config)]);
}


export function measureCommands(d: Deployment, configs: readonly ServerConfig[], server = DEFAULT_SERVER): MeasureCommands[] {
  const route = d.workload.api === 'chat' ? '/v1/chat/completions' : '/v1/completions';
  return configs.map((config, i) => ({
    config,
    vllm_serve: vllmServeCommand(d.model, config),
    lm_bench_run: shellQuote(['lm-bench', 'run', '--endpoint', `${server}${route}`, '--workload', d.workloadRef, '--output', `next-${i + 1}.json`]),
  }));
}

/**
 * A study name for queued configurations: the deployment, so repeated advice lands in one study; and
 * the simulated release and --keep-precision, since a study keeps the settings it was created with.
 */
export function nextStudyName(d: Pick<Deployment, 'gpu' | 'gpus' | 'model' | 'workload' | 'vllmVersion' | 'keepPrecision'>): string {
  const release = d.vllmVersion === undefined ? '' : `-vllm-${d.vllmVersion}`;
  const precision = d.keepPrecision === true ? '-keep-precision' : '';
  return `next-${d.model.id}-${d.gpus}x${d.gpu}-${d.workload.name}${release}${precision}`.toLowerCase().replace(/[^a-z0-9._-]+/g, '-');
}

export function enqueueCommand(d: Deployment, configs: readonly ServerConfig[]): string | null {
  if (configs.length === 0) return null;
  const slo = formatSloString(d.slo);
  return shellQuote([
    'lm-bench', 'tune', '--study', nextStudyName(d),
    '--gpu', d.gpu, '--gpus', String(d.gpus), '--model', d.modelRef ?? d.model.id, '--workload', d.workloadRef,
    ...(slo === '' ? [] : ['--slo', slo]),
    // On the simulator (the study's default target) the queued runs imitate the release the answer did.
    ...(d.vllmVersion === undefined ? [] : ['--vllm-version', d.vllmVersion]),
    ...(d.keepPrecision === true ? ['--keep-precision'] : []),
    // One trial more than queued: a new study measures vLLM's defaults first, as its baseline.
    '--budget-trials', String(configs.length + 1),
    ...configs.flatMap((c) => ['--enqueue', configAssignments(c)]),
  ]);
}
