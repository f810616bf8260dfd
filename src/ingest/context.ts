import { z } from 'zod';
import { ALL_KNOB_NAMES, ServerConfig, Workload, type HardwareRef } from '../domain/index.js';
import type { Catalog } from '../catalog/index.js';
import { LmBenchError, isLmBenchError } from '../errors.js';
import { parseYaml } from '../util/yaml.js';
import type { NewRun, SourceFormat } from '../store/index.js';
import { deriveWorkload } from './derive-workload.js';
import type { FileHints, ParsedRun } from './parsed.js';

/**
 * The deployment context a run needs before it can teach anything: its server config, GPU (type and
 * count) and model. Sources, weakest first:
 * - server config: sidecar < `--server-config`/`--set` < the file's own (lm-bench results, sweep serve
 *   parameters, the nightly table's TP): the file records what actually ran, the flags describe a base;
 * - GPU, GPU count, model: the file < sidecar < flags, since files carry free-text names that a
 *   user may need to map onto the catalog (a fine-tune called "acme/llama-ft" is a llama-3.1-8b);
 * - GPU count defaults to tensor_parallel_size × data_parallel_size (1 × 1 when unset, vLLM's default);
 * - workload: sidecar, else the file's (lm-bench), else reconstructed from the result (derive-workload.ts).
 * A run with no server config from any source, no GPU or no model is rejected with
 * LMB_ERR_INGEST_CONTEXT_MISSING naming what is missing and how to supply it.
 */
export interface IngestContext {
  /** `--server-config FILE` merged with `--set knob=value` (the CLI merges them). */
  readonly serverConfig?: ServerConfig | undefined;
  readonly gpu?: string | undefined;
  readonly gpus?: number | undefined;
  readonly model?: string | undefined;
}

/**
 * A sidecar `<file>.config.yaml`: knobs at the top level (`max_num_seqs: 256`) and/or under
 * `server_config:`, plus optional `gpu`, `gpus`, `model` and `workload`.
 */
export const Sidecar = z.strictObject({
  ...ServerConfig.shape,
  server_config: ServerConfig.optional(),
  gpu: z.string().min(1).optional(),
  gpus: z.int().positive().optional(),
  model: z.string().min(1).optional(),
  workload: Workload.optional(),
});
export type Sidecar = z.infer<typeof Sidecar>;

export interface SidecarInfo {
  readonly serverConfig?: ServerConfig;
  readonly gpu?: string;
  readonly gpus?: number;
  readonly model?: string;
  readonly workload?: Workload;
}

const KNOBS: readonly string[] = ALL_KNOB_NAMES;

/** Parses sidecar YAML text (line-numbered LMB_ERR_CONFIG_INVALID on error). */
export function parseSidecar(text: string, file: string): SidecarInfo {
  const s = parseYaml(text, Sidecar, { file });
  const topKnobs = Object.fromEntries(Object.entries(s).filter(([k]) => KNOBS.includes(k))) as ServerConfig;
  const hasConfig = s.server_config !== undefined || Object.keys(topKnobs).length > 0;
  return {
    ...(hasConfig ? { serverConfig: { ...topKnobs, ...s.server_config } } : {}),
    ...(s.gpu !== undefined ? { gpu: s.gpu } : {}),
    ...(s.gpus !== undefined ? { gpus: s.gpus } : {}),
    ...(s.model !== undefined ? { model: s.model } : {}),
    ...(s.workload !== undefined ? { workload: s.workload } : {}),
  };
}

export interface ResolveInput {
  readonly run: ParsedRun;
  readonly format: SourceFormat;
  readonly sourcePath: string | null;
  readonly contentHash: string;
  readonly sidecar: SidecarInfo | null;
  readonly context: IngestContext;
  readonly catalog: Catalog;
  /** Collects notes such as a flag value the file overrides. */
  readonly warnings: string[];
}

/** A parsed run plus its context → the row to store, or LMB_ERR_INGEST_CONTEXT_MISSING. */
export function resolveRun(input: ResolveInput): NewRun {
  const { run, sidecar, context, catalog, warnings } = input;
  const hints: FileHints = run.hints;
  const where = run.label === 'document' ? '' : `${run.label}: `;

  const layers = [sidecar?.serverConfig, context.serverConfig, hints.serverConfig].filter((c): c is ServerConfig => c !== undefined);
  if (layers.length === 0) {
    throw missing(`${where}no server config: the file has none; pass --server-config FILE or --set knob=value, or write a sidecar <file>.config.yaml`);
  }
  const serverConfig: ServerConfig = Object.assign({}, ...layers) as ServerConfig;
  if (hints.serverConfig && context.serverConfig) {
    for (const [k, v] of Object.entries(context.serverConfig) as [keyof ServerConfig, unknown][]) {
      const fileValue = hints.serverConfig[k];
      // Once per file and value, not once per run: a 15-row table that records its own max_num_seqs made 15 identical notes.
      const msg = `${k}=${String(v)} from the flags ignored: the file records ${String(fileValue)}`;
      if (fileValue !== undefined && fileValue !== v && !warnings.includes(msg)) warnings.push(msg);
    }
  }

  const gpuName = context.gpu ?? sidecar?.gpu ?? hints.gpu;
  if (gpuName === undefined) throw missing(`${where}no GPU: the file names none; pass --gpu G (and --gpus N)`);
  const gpu = lookup(() => catalog.gpu(gpuName).id, `${where}GPU "${gpuName}" is not in data/hardware.yaml; pass --gpu with a known name`);

  const modelName = context.model ?? sidecar?.model ?? hints.model;
  if (modelName === undefined) throw missing(`${where}no model: the file names none; pass --model M`);
  // vLLM writes the served path as model_id ("/models/Llama-3.1-8B-Instruct"): try its last segment too.
  const base = modelName.split('/').pop() ?? modelName;
  const model = lookup(
    () => catalog.model(tryModel(catalog, modelName) ? modelName : base).id,
    `${where}model "${modelName}" is not in data/models.yaml; pass --model with a known name`,
  );

  overrideWarning(catalog, model, context.model !== undefined ? '--model' : sidecar?.model !== undefined ? 'the sidecar' : null, hints.model, warnings);

  const needed = (serverConfig.tensor_parallel_size ?? 1) * (serverConfig.data_parallel_size ?? 1);
  const count = context.gpus ?? sidecar?.gpus ?? hints.gpuCount ?? needed;
  if (count < needed) {
    throw missing(`${where}the config needs tensor_parallel_size × data_parallel_size = ${needed} GPUs but the GPU count is ${count}`);
  }
  const hardware: HardwareRef = { gpu, count };
  const meta = { ...run.meta, notes: [...run.meta.notes] };
  const workload = sidecar?.workload ?? hints.workload ?? deriveWorkload(run.result, meta, `ingested-${input.format}`);
  const result = { ...run.result, server_config: serverConfig, hardware, model, workload };
  return {
    result,
    serverConfig,
    hardware,
    model,
    workload,
    sourceFormat: input.format,
    sourcePath: input.sourcePath,
    contentHash: input.contentHash,
    meta,
  };
}

/**
 * The file names a model and a flag or sidecar replaced it: say so (once per file), since a run stored
 * under another model than the one it measured teaches the wrong model. Silent when both name the
 * same catalog model (an alias or the Hugging Face name of it).
 */
function overrideWarning(catalog: Catalog, model: string, source: string | null, fileModel: string | undefined, warnings: string[]): void {
  if (source === null || fileModel === undefined) return;
  const base = fileModel.split('/').pop() ?? fileModel;
  const fileId = tryModel(catalog, fileModel) ? catalog.model(fileModel).id : tryModel(catalog, base) ? catalog.model(base).id : null;
  if (fileId === model) return;
  const msg = `${source} overrides the file's model "${fileModel}": runs stored as ${model}`;
  if (!warnings.includes(msg)) warnings.push(msg);
}

function tryModel(catalog: Catalog, name: string): boolean {
  try {
    catalog.model(name);
    return true;
  } catch {
    return false;
  }
}

function lookup(fn: () => string, reason: string): string {
  try {
    return fn();
  } catch (err) {
    if (isLmBenchError(err, 'LMB_ERR_UNKNOWN_GPU') || isLmBenchError(err, 'LMB_ERR_UNKNOWN_MODEL')) throw missing(reason, err);
    throw err;
  }
}

function missing(reason: string, cause?: unknown): LmBenchError {
  return new LmBenchError('LMB_ERR_INGEST_CONTEXT_MISSING', reason, cause === undefined ? {} : { cause });
}
