import { maxLength, vllmServeArgs, type KnobValue, type ModelSpec, type ServerConfig, type Workload } from '../domain/index.js';
import type { FeatureContext } from '../model/features.js';
import type { PickRule } from '../optimize/objectives.js';
import { vllmConfigYaml, type Recommendation, type RecommendedConfig } from '../optimize/recommend.js';
import { attributePath, changedKnobs, simplifyPick, type Attribution, type Evaluate, type Evaluation, type RevertedKnob } from '../optimize/simplify.js';
import type { SearchSpace } from '../space/index.js';

/**
 * An answer a reviewer can defend (issue 30): the pick with every knob whose change does not matter
 * returned to vLLM's default (`simplification`, the pick before and after), the path from the defaults
 * to it one knob at a time with each step's gain (`attribution`), and what a lowered max_model_len
 * means for longer prompts (`warnings`). The answer's `best`, command line and YAML become the
 * simplified pick (callers print `vllm_command` from it); `simplification.before` keeps the one the search found.
 */
export interface PickSide {
  /** The knobs set away from vLLM's defaults, with their values. */
  readonly changed: Readonly<Record<string, KnobValue>>;
  /** The rule's figure (throughput per GPU, or joules per output token) and whether the SLOs hold. */
  readonly figure: number | null;
  readonly meets_slo: boolean;
}

export interface SimplificationReport {
  /** The figure the simplification kept within `tolerance_rel` of the pick's. */
  readonly figure: string;
  readonly tolerance_rel: number;
  /** Where the figures come from: the surrogate's prediction, a simulated run, or a measurement. */
  readonly source: Evaluation['source'];
  readonly before: PickSide;
  readonly after: PickSide;
  readonly reverted: RevertedKnob[];
}

export interface Explained {
  readonly simplification: SimplificationReport | null;
  readonly attribution: Attribution | null;
  readonly warnings: string[];
}

export interface ExplainOptions {
  readonly space: SearchSpace;
  readonly context: FeatureContext;
  readonly evaluate: Evaluate;
  readonly rule: PickRule;
  readonly toleranceRel: number;
  /** The simplified pick as the answer's other configurations are described. */
  readonly describe: (config: ServerConfig) => RecommendedConfig;
}

/** The space's view of a config: completed with the defaults, or null when its rules refuse it. */
export function spaceNormalizer(space: SearchSpace, ctx: FeatureContext): (c: ServerConfig) => ServerConfig | null {
  return (c) => {
    const full = space.complete(c, ctx);
    return space.isFeasible(full, ctx).ok ? full : null;
  };
}

const sideOf = (config: ServerConfig, defaults: ServerConfig, e: Evaluation, rule: PickRule): PickSide => ({
  changed: Object.fromEntries(changedKnobs(config, defaults).map((k) => [k, (config as Record<string, KnobValue>)[k] as KnobValue])),
  figure: e.values[rule.target] ?? null,
  meets_slo: e.meetsSlo,
});

/**
 * A max_model_len below the model's own context refuses every request longer than it; the reason to
 * lower it is the workload's longest request, and the answer says both.
 */
export function contextWarnings(config: ServerConfig, model: ModelSpec, workload: Workload): string[] {
  const len = config.max_model_len;
  if (typeof len !== 'number' || len >= model.native_context) return [];
  const need = maxLength(workload.input_len) + (workload.shared_prefix?.length ?? 0) + maxLength(workload.output_len);
  return [
    `max_model_len ${len} is below the model's own ${model.native_context}: the workload's longest request is ${need} tokens (longest prompt${workload.shared_prefix === undefined ? '' : ' with its shared prefix'} + longest answer), and the server will refuse any request whose prompt and answer exceed ${len} tokens.`,
  ];
}

export function explainRecommendation<R extends Recommendation>(a: R, opts: ExplainOptions): R & Explained {
  const model = opts.context.model;
  if (a.best === null) return { ...a, simplification: null, attribution: null, warnings: [] };
  const defaults = opts.space.defaultsFor(opts.context);
  const normalize = spaceNormalizer(opts.space, opts.context);
  const pick = opts.space.complete(a.best.config, opts.context);
  const s = simplifyPick({ pick, defaults, rule: opts.rule, toleranceRel: opts.toleranceRel, evaluate: opts.evaluate, normalize });
  if (s === null) return { ...a, simplification: null, attribution: null, warnings: contextWarnings(a.best.config, model, opts.context.workload) };
  const attribution = attributePath({ target: s.config, defaults, rule: opts.rule, evaluate: opts.evaluate, normalize });
  const simplification: SimplificationReport = {
    figure: opts.rule.target,
    tolerance_rel: s.tolerance_rel,
    source: s.evaluation.source,
    before: sideOf(pick, defaults, s.pick_evaluation, opts.rule),
    after: sideOf(s.config, defaults, s.evaluation, opts.rule),
    reverted: s.reverted,
  };
  // The answer states the simplified pick as the flags it changes, nothing vLLM would set anyway; its
  // figures are the original's when nothing could go back to its default.
  const sparse = simplification.after.changed as ServerConfig;
  const best = s.reverted.length === 0 ? { ...a.best, config: sparse } : { diagnosis: null, ...opts.describe(sparse) };
  return {
    ...a,
    best,
    vllmArgs: vllmServeArgs(model.hf_name, best.config),
    vllmConfigYaml: vllmConfigYaml(model, best.config),
    simplification,
    attribution,
    warnings: contextWarnings(best.config, model, opts.context.workload),
  };
}
