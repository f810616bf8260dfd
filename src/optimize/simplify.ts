import type { KnobValue, ServerConfig } from '../domain/index.js';
import type { TargetValues } from '../model/targets.js';
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
  /** The pick and vLLM's defaults, both complete (every active knob set). */
  readonly pick: ServerConfig;
  readonly defaults: ServerConfig;
  readonly rule: PickRule;
  /** Relative loss of the figure a revert may cost (the run-to-run noise, or the predicted one). */
  readonly toleranceRel: number;
  readonly evaluate: Evaluate;
  /** The space's rules and activity: a complete config, or null when the rules refuse it. */
  readonly normalize: (config: ServerConfig) => ServerConfig | null;
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
 * Knobs `config` sets to another value than `defaults` (either may leave a knob unset: inactive), in
 * the config's own order (the space's file order), so a command line lists them as the search did.
 */
export function changedKnobs(config: ServerConfig, defaults: ServerConfig): string[] {
  const c = config as Record<string, KnobValue | undefined>;
  const d = defaults as Record<string, KnobValue | undefined>;
  return Object.keys(c).filter((k) => c[k] !== undefined && !same(c[k], d[k]));
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

export function simplifyPick(input: SimplifyInput): Simplification | null {
  const [pickEval] = input.evaluate([input.pick]);
  if (pickEval === null || pickEval === undefined) return null;
  const base = figureOf(pickEval, input.rule);
  const floor = base * (1 - input.toleranceRel);
  const ok = (e: Evaluation | null | undefined): e is Evaluation => e !== null && e !== undefined && base > 0 && figureOf(e, input.rule) >= floor;
  const defaults = input.defaults as Record<string, KnobValue | undefined>;
  const keep = new Set(input.keep ?? []);
  const revert = (from: ServerConfig, k: string): ServerConfig | null => {
    const c = input.normalize(withKnob(from, k, defaults[k]));
    // A revert the rules undo (activity, a derived default) changes nothing: not a revert.
    return c !== null && changedKnobs(c, input.defaults).length < changedKnobs(from, input.defaults).length ? c : null;
  };
  // Each knob alone first, then the harmless ones together, cheapest first, each kept only if the
  // SLOs and the figure still hold with the reverts before it: 2n judgements, not n².
  const singles = changedKnobs(input.pick, input.defaults)
    .filter((k) => !keep.has(k))
    .map((k) => ({ k, config: revert(input.pick, k) }))
    .filter((t): t is { k: string; config: ServerConfig } => t.config !== null);
  const singleEvals = input.evaluate(singles.map((t) => t.config));
  const order = singles
    .map((t, i) => ({ k: t.k, e: singleEvals[i] }))
    .filter((x) => ok(x.e))
    .sort((a, b) => figureOf(b.e ?? null, input.rule) - figureOf(a.e ?? null, input.rule) || (a.k < b.k ? -1 : 1));
  let current = input.pick;
  let currentEval = pickEval;
  const reverted: RevertedKnob[] = [];
  for (const { k } of order) {
    const c = revert(current, k);
    if (c === null) continue;
    const [e] = input.evaluate([c]);
    if (!ok(e)) continue;
    reverted.push({ knob: k, pick_value: (input.pick as Record<string, KnobValue>)[k] as KnobValue, default_value: defaults[k] ?? null, figure_change_pct: (figureOf(e, input.rule) / base - 1) * 100 });
    current = c;
    currentEval = e;
  }
  return { config: current, evaluation: currentEval, pick_evaluation: pickEval, reverted, changed: changedKnobs(current, input.defaults), tolerance_rel: input.toleranceRel };
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
export function attributePath(opts: Omit<SimplifyInput, 'pick' | 'toleranceRel' | 'keep'> & { readonly target: ServerConfig }): Attribution {
  const { rule, evaluate, normalize } = opts;
  const targetCfg = opts.target as Record<string, KnobValue>;
  const [d0] = evaluate([opts.defaults]);
  const defaultsStep = stepOf({}, d0 ?? null, rule, null);
  const steps: AttributionStep[] = [];
  let current = opts.defaults;
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
