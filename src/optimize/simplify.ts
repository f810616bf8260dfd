import { maxLength, type KnobValue, type ModelSpec, type ServerConfig, type Workload } from '../domain/index.js';
import type { FeatureContext } from '../surrogate/features.js';
import type { TargetValues } from '../surrogate/targets.js';
import type { SearchSpace } from '../space/index.js';
import { resolveConfig } from '../physics/resolve.js';
import { merit, type PickRule } from './objectives.js';

/**
 * The few flags that matter, and why each (issue 30). A pick from a search changes many knobs from
 * vLLM's defaults; most of those changes are whatever the sampler happened to draw and carry none of
 * the gain. `simplifyPick` returns each knob to its default while the pick's figure (the objective's:
 * throughput per GPU, or joules per token) stays within `toleranceRel` of the original pick's and the
 * SLOs still hold, the knob costing least first; the tolerance is against the original pick, so the
 * reverts together never cost more than it. `attributePath` then walks from the defaults to the
 * simplified pick one knob at a time, the knob that gains most first, so each flag's share of the gain
 * is a number a reviewer can check. Pure: how a configuration is judged (measured, predicted by the
 * surrogate, simulated) is the caller's `evaluate`.
 */

/** A configuration's figures as the caller knows them, and from where. */
export interface Evaluation {
  readonly values: TargetValues;
  readonly meetsSlo: boolean;
  readonly source: 'measured' | 'predicted' | 'simulated';
}

/** Judges a batch of configurations; null where one would not start. */
export type Evaluate = (configs: readonly ServerConfig[]) => (Evaluation | null)[];

export interface SimplifyInput {
  /** The pick: every knob it sets (a search's pick sets them all). */
  readonly pick: ServerConfig;
  readonly rule: PickRule;
  /** Relative loss of the figure a revert may cost (the run-to-run noise, or the predicted one). */
  readonly toleranceRel: number;
  readonly evaluate: Evaluate;
  /** Whether the space's rules accept a config (unset knobs at vLLM's defaults). */
  readonly feasible: (config: ServerConfig) => boolean;
  /** vLLM's resolution of a config (physics/resolve.ts): what the server runs with, unset knobs included. */
  readonly resolve: (config: ServerConfig) => Readonly<Record<string, unknown>>;
  /** Knobs never returned to their default (the numerics a caller pinned, say). */
  readonly keep?: readonly string[];
}

export interface RevertedKnob {
  readonly knob: string;
  readonly pick_value: KnobValue;
  readonly default_value: KnobValue | null;
  /** The figure after this revert against the original pick's, in %, signed (+ is better). */
  readonly figure_change_pct: number;
}

export interface Simplification {
  readonly config: ServerConfig;
  readonly evaluation: Evaluation;
  readonly pick_evaluation: Evaluation;
  readonly reverted: RevertedKnob[];
  /** Knobs the simplified pick still sets away from vLLM's defaults. */
  readonly changed: string[];
  readonly tolerance_rel: number;
}

const same = (a: KnobValue | undefined, b: KnobValue | undefined): boolean => a === b;

/**
 * Knobs `config` sets to another value than `defaults` (either may leave a knob unset), in the config's
 * own order (the space's file order), so a command line lists them as the search did.
 */
export function changedKnobs(config: ServerConfig, defaults: ServerConfig): string[] {
  const c = config as Record<string, KnobValue | undefined>;
  const d = defaults as Record<string, KnobValue | undefined>;
  return Object.keys(c).filter((k) => c[k] !== undefined && !same(c[k], d[k]));
}

const sameResolution = (a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean =>
  Object.keys({ ...a, ...b }).every((k) => a[k] === b[k]);

/**
 * The flags a config really sets: each knob whose removal leaves vLLM's resolution unchanged (a value
 * vLLM would pick anyway, given the other flags: max_cudagraph_capture_size = 2 × max_num_seqs) is
 * dropped, so "back to the default" means unset, as on a command line, not the context's global default.
 */
export function effectiveFlags(config: ServerConfig, resolve: SimplifyInput['resolve']): ServerConfig {
  const target = resolve(config);
  let out: ServerConfig = { ...config };
  for (const k of Object.keys(config)) {
    const without = withKnob(out, k, undefined);
    if (sameResolution(resolve(without), target)) out = without;
  }
  return out;
}

/** The figure a pick rule ranks by, as "more is better" (objectives.ts `merit`); 0 when it misses the SLOs. */
function figureOf(e: Evaluation | null, rule: PickRule): number {
  return e === null || !e.meetsSlo ? 0 : merit(e.values, rule);
}

function withKnob(config: ServerConfig, knob: string, value: KnobValue | undefined): ServerConfig {
  const out: Record<string, KnobValue> = { ...(config as Record<string, KnobValue>) };
  if (value === undefined) delete out[knob];
  else out[knob] = value;
  return out;
}

export function simplifyPick(input: SimplifyInput): (Simplification & { readonly pick: ServerConfig }) | null {
  const pick = effectiveFlags(input.pick, input.resolve);
  const [pickEval] = input.evaluate([pick]);
  if (pickEval === null || pickEval === undefined) return null;
  const base = figureOf(pickEval, input.rule);
  const floor = base * (1 - input.toleranceRel);
  const ok = (e: Evaluation | null | undefined): e is Evaluation => e !== null && e !== undefined && base > 0 && figureOf(e, input.rule) >= floor;
  const keep = new Set(input.keep ?? []);
  const revert = (from: ServerConfig, k: string): ServerConfig | null => {
    const c = withKnob(from, k, undefined);
    return input.feasible(c) ? c : null;
  };
  // Each knob alone first, then the harmless ones together, cheapest first, each kept only if the
  // SLOs and the figure still hold with the reverts before it: 2n judgements, not n².
  const alone = Object.keys(pick)
    .filter((k) => !keep.has(k))
    .map((k) => ({ k, config: revert(pick, k) }));
  const singles = alone.filter((t): t is { k: string; config: ServerConfig } => t.config !== null);
  const singleEvals = input.evaluate(singles.map((t) => t.config));
  const order = singles
    .map((t, i) => ({ k: t.k, e: singleEvals[i] }))
    .filter((x) => ok(x.e))
    .sort((a, b) => figureOf(b.e ?? null, input.rule) - figureOf(a.e ?? null, input.rule) || (a.k < b.k ? -1 : 1));
  let current = pick;
  let currentEval = pickEval;
  const reverted: RevertedKnob[] = [];
  const tryRevert = (k: string): boolean => {
    const c = revert(current, k);
    if (c === null) return false;
    const [e] = input.evaluate([c]);
    if (!ok(e)) return false;
    const resolved = input.resolve(c)[k];
    reverted.push({ knob: k, pick_value: (pick as Record<string, KnobValue>)[k] as KnobValue, default_value: typeof resolved === 'number' || typeof resolved === 'string' || typeof resolved === 'boolean' ? resolved : null, figure_change_pct: (figureOf(e, input.rule) / base - 1) * 100 });
    current = c;
    currentEval = e;
    return true;
  };
  for (const { k } of order) tryRevert(k);
  // A knob the rules would not let go back alone may once others have: with chunked prefill off,
  // max_model_len must fit in max_num_batched_tokens, so it can return to the model's own length only
  // after chunked prefill is back on. Sweep those until none more goes back (each once a sweep).
  const boundAlone = alone.filter((t) => t.config === null).map((t) => t.k);
  for (let sweep = 0; sweep < 3; sweep++) {
    const left = boundAlone.filter((k) => Object.hasOwn(current, k));
    if (!left.map((k) => tryRevert(k)).some(Boolean)) break;
  }
  return { pick, config: current, evaluation: currentEval, pick_evaluation: pickEval, reverted, changed: Object.keys(current), tolerance_rel: input.toleranceRel };
}

export interface AttributionStep {
  /** The knobs this step sets (one, unless the rules only allow them together). */
  readonly knobs: Readonly<Record<string, KnobValue>>;
  readonly figure: number | null;
  /** Against the previous step, in % of its figure (null when either misses the SLOs or does not start). */
  readonly gain_pct: number | null;
  readonly meets_slo: boolean | null;
  readonly p99_ttft_ms: number | null;
  readonly p99_itl_ms: number | null;
  readonly source: Evaluation['source'] | null;
}

export interface Attribution {
  /** The figure each step reports (the pick rule's target). */
  readonly figure: string;
  readonly defaults: AttributionStep;
  readonly steps: AttributionStep[];
}

const stepOf = (knobs: Readonly<Record<string, KnobValue>>, e: Evaluation | null, rule: PickRule, prev: number | null): AttributionStep => {
  const figure = e?.values[rule.target] ?? null;
  const ok = e === null ? null : e.meetsSlo;
  const f = e === null ? 0 : merit(e.values, rule);
  const gain = prev === null || prev <= 0 || f <= 0 ? null : (f / prev - 1) * 100;
  return { knobs, figure, gain_pct: gain, meets_slo: ok, p99_ttft_ms: e?.values.ttft_p99_ms ?? null, p99_itl_ms: e?.values.itl_p99_ms ?? null, source: e?.source ?? null };
};

/**
 * From vLLM's defaults to `target`, one knob a step: each step takes the knob whose change, on top of
 * the steps before, gives the best figure (a configuration meeting the SLOs before one that does not).
 * Where the rules refuse every single change (two knobs bound by a rule), the smallest pair that they
 * accept goes together, and failing that the rest in one step.
 */
export function attributePath(opts: Pick<SimplifyInput, 'rule' | 'evaluate' | 'feasible'> & { readonly target: ServerConfig }): Attribution {
  const { rule, evaluate } = opts;
  const targetCfg = opts.target as Record<string, KnobValue>;
  const defaults: ServerConfig = {};
  const normalize = (c: ServerConfig): ServerConfig | null => (opts.feasible(c) ? c : null);
  const [d0] = evaluate([defaults]);
  const defaultsStep = stepOf({}, d0 ?? null, rule, null);
  const steps: AttributionStep[] = [];
  let current = defaults;
  let prevMerit = d0 === null || d0 === undefined ? null : merit(d0.values, rule);
  const score = (e: Evaluation | null): number => (e === null ? -1 : (e.meetsSlo ? 1e12 : 0) + merit(e.values, rule));
  for (let guard = 0; guard < 64; guard++) {
    const remaining = changedKnobs(opts.target, current).filter((k) => targetCfg[k] !== undefined);
    if (remaining.length === 0) break;
    const apply = (ks: readonly string[]): ServerConfig | null => normalize(ks.reduce((c, k) => withKnob(c, k, targetCfg[k]), current));
    let groups = remaining.map((k) => [k]);
    let tries = groups.map((g) => ({ g, config: apply(g) })).filter((t) => t.config !== null);
    if (tries.length === 0 && remaining.length > 2) {
      groups = remaining.flatMap((a, i) => remaining.slice(i + 1).map((b) => [a, b]));
      tries = groups.map((g) => ({ g, config: apply(g) })).filter((t) => t.config !== null);
    }
    if (tries.length === 0) tries = [{ g: remaining, config: apply(remaining) ?? opts.target }];
    const evals = evaluate(tries.map((t) => t.config as ServerConfig));
    let best = 0;
    evals.forEach((e, i) => {
      if (score(e ?? null) > score(evals[best] ?? null)) best = i;
    });
    const t = tries[best] as { g: string[]; config: ServerConfig };
    const e = evals[best] ?? null;
    const next = t.config;
    // A step that changes nothing the path still lacks would loop: stop rather than spin.
    if (changedKnobs(opts.target, next).length >= remaining.length) break;
    steps.push(stepOf(Object.fromEntries(t.g.map((k) => [k, targetCfg[k] as KnobValue])), e, rule, prevMerit));
    prevMerit = e === null ? null : merit(e.values, rule);
    current = next;
  }
  return { figure: rule.target, defaults: defaultsStep, steps };
}

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

export const sideOf = (config: ServerConfig, e: Evaluation, rule: PickRule): PickSide => ({
  changed: { ...(config as Record<string, KnobValue>) },
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

export function simplificationReport(s: Simplification & { readonly pick: ServerConfig }, rule: PickRule): SimplificationReport {
  return {
    figure: rule.target,
    tolerance_rel: s.tolerance_rel,
    source: s.evaluation.source,
    before: sideOf(s.pick, s.pick_evaluation, rule),
    after: sideOf(s.config, s.evaluation, rule),
    reverted: s.reverted,
  };
}

/** The space's rules and vLLM's resolution for one deployment, as simplification needs them. */
export function spaceJudges(space: SearchSpace, ctx: FeatureContext): Pick<SimplifyInput, 'feasible' | 'resolve'> {
  return {
    feasible: (c) => space.isFeasible(c, ctx).ok,
    resolve: (c) => resolveConfig(c, ctx.hardware, ctx.model),
  };
}
