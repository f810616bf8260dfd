import { vllmServeArgs, type RecommendationAnswer, type ServerConfig } from '../domain/index.js';
import type { FeatureContext } from '../surrogate/features.js';
import type { PickRule } from '../optimize/objectives.js';
import { vllmConfigYaml, type Recommendation, type RecommendedConfig } from '../optimize/recommend.js';
import { attributePath, contextWarnings, spaceJudges, simplificationReport, simplifyPick, type Evaluate } from '../optimize/simplify.js';
import type { SearchSpace } from '../space/index.js';
import { resolveConfig } from '../physics/resolve.js';

/**
 * An answer a reviewer can defend (issue 30): the pick with every knob whose change does not matter
 * returned to vLLM's default (`simplification`, the pick before and after), the path from the defaults
 * to it one knob at a time with each step's gain (`attribution`), and what a lowered max_model_len
 * means for longer prompts (`warnings`). The answer's `best`, command line and YAML become the
 * simplified pick (callers print `vllm_command` from it); `simplification.before` keeps the one the search found.
 */
export type Explained = Pick<RecommendationAnswer, 'simplification' | 'attribution' | 'warnings'>;

export interface ExplainOptions {
  readonly space: SearchSpace;
  readonly context: FeatureContext;
  readonly evaluate: Evaluate;
  readonly rule: PickRule;
  readonly toleranceRel: number;
  /** How the path from the defaults judges its steps (default `evaluate`; a simplification may ask more margin of a revert than a step needs to count as meeting the SLOs). */
  readonly evaluatePath?: Evaluate;
  /** The simplified pick as the answer's other configurations are described. */
  readonly describe: (config: ServerConfig) => RecommendedConfig;
}

/**
 * A pick whose ranks (tensor × data parallel) leave some of the question's GPUs idle: its throughput
 * per GPU counts them all, and the user, who asked about that many, should know they serve nothing.
 */
function idleGpuWarnings(config: ServerConfig, ctx: FeatureContext): string[] {
  const gpus = ctx.gpuCount;
  const r = resolveConfig(config, ctx.hardware, ctx.model);
  const used = r.tensor_parallel_size * r.data_parallel_size;
  if (used >= gpus) return [];
  const rest = gpus - used === 1 ? 'the other GPU serves' : `the other ${gpus - used} serve`;
  return [`the pick uses ${used} of the ${gpus} GPUs (tensor_parallel_size ${r.tensor_parallel_size} × data_parallel_size ${r.data_parallel_size}): ${rest} nothing, and its throughput per GPU counts all ${gpus}.`];
}

export function explainRecommendation<R extends Recommendation>(a: R, opts: ExplainOptions): R & Explained {
  const model = opts.context.model;
  if (a.best === null) return { ...a, simplification: null, attribution: null, warnings: [] };
  const judges = spaceJudges(opts.space, opts.context);
  const warningsOf = (config: ServerConfig): string[] => [...contextWarnings(config, model, opts.context.workload), ...idleGpuWarnings(config, opts.context)];
  const s = simplifyPick({ pick: a.best.config, rule: opts.rule, toleranceRel: opts.toleranceRel, evaluate: opts.evaluate, ...judges });
  if (s === null) return { ...a, simplification: null, attribution: null, warnings: warningsOf(a.best.config) };
  const attribution = attributePath({ target: s.config, rule: opts.rule, evaluate: opts.evaluatePath ?? opts.evaluate, feasible: judges.feasible });
  const simplification = simplificationReport(s, opts.rule);
  // The answer states the simplified pick as the flags it changes, nothing vLLM would set anyway; its
  // figures are the original's when nothing could go back to its default.
  const sparse = simplification.after.changed as ServerConfig;
  const best = s.reverted.length === 0 ? { ...a.best, config: sparse } : { diagnosis: null, ...opts.describe(sparse) };
  // The Pareto set marks the search's pick; where the answer states it simplified, the mark says so.
  const simplifiedNote = `the recommendation is this configuration with ${s.reverted.map((r) => r.knob).join(', ')} back at vLLM's default${s.reverted.length === 1 ? '' : 's'} (within the noise)`;
  const pareto = s.reverted.length === 0 ? a.pareto : a.pareto.map((m) => (m.recommended ? { ...m, note: m.note ?? simplifiedNote } : m));
  return {
    ...a,
    best,
    pareto,
    vllm_args: vllmServeArgs(model.hf_name, best.config),
    vllm_config_yaml: vllmConfigYaml(model, best.config),
    simplification,
    attribution,
    warnings: warningsOf(best.config),
  };
}
