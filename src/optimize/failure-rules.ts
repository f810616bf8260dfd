import { z } from 'zod';
import type { ResolvedServerConfig } from '../domain/index.js';
import { FAILURE_CLASS_TEXT, FailureClass, type ClassifiedFailure } from './failure-classes.js';
import { contrastDrafts, failureKey, type RuleBound } from './contrast-rules.js';
import { RuleCondition, RuleOp, type FailureEvidence } from './rule-condition.js';

export type { RuleBound } from './contrast-rules.js';
export { RuleCondition, RuleOp, type FailureEvidence } from './rule-condition.js';

/**
 * Failures as knowledge: each classified failure whose class names its cause becomes a rule on the
 * knobs that caused it, a region of the space predicted to fail the same way. Most rules are dominance
 * regions: a configuration at least as demanding as the one that failed, on every knob the failure
 * depends on, fails too (a KV-cache shortfall at max_model_len 32k and gpu_memory_utilization 0.8 on one
 * GPU will recur at 64k and 0.7 on one GPU, not at 0.95 or on two). Where the message states the bound
 * itself the rule uses it (the prompt length vLLM refused; the longest context the KV cache holds).
 * Where a server states the bound it enforces (llama.cpp's "n_seq_max must be <= 64") the rule is that bound.
 * Time-outs, crashes and unknown failures name no knob; they teach by contrast with the trials that got
 * further (contrast-rules.ts): an unknown failure rules out its suspect knobs' dominance region, and a
 * failure seen twice the whole region past what worked.
 */
export const RuleTrial = z.strictObject({ study: z.string(), number: z.int().nonnegative() });
export type RuleTrial = z.infer<typeof RuleTrial>;

export const FailureRule = z.strictObject({
  class: FailureClass,
  /** The region predicted to fail: a (resolved) configuration meeting every condition. */
  avoid: z.array(RuleCondition).min(1),
  /** Trials that failed this way (the 0-based trial number within its study). */
  trials: z.array(RuleTrial).min(1),
  /** The rule and its evidence in one line ("max_model_len >= 2,641: trials 2, 5 failed with prompts of 2,440 tokens"). */
  text: z.string(),
  /** 'workload': the rule depends on the prompts the server saw, so it carries only to studies of the same workload. */
  scope: z.enum(['deployment', 'workload']),
});
export type FailureRule = z.infer<typeof FailureRule>;

type Resolved = Readonly<Record<string, unknown>>;

function holds(c: RuleCondition, r: Resolved): boolean {
  const v = r[c.knob];
  if (c.op === '==') return v === c.value;
  if (typeof v !== 'number' || typeof c.value !== 'number') return false;
  switch (c.op) {
    case '<':
      return v < c.value;
    case '<=':
      return v <= c.value;
    case '>=':
      return v >= c.value;
    case '>':
      return v > c.value;
  }
}

export function matchesRule(rule: FailureRule, config: ResolvedServerConfig): boolean {
  return rule.avoid.every((c) => holds(c, config as unknown as Resolved));
}

/** The first rule a configuration falls under, or null. */
export function ruleFor(rules: readonly FailureRule[], config: ResolvedServerConfig): FailureRule | null {
  return rules.find((r) => matchesRule(r, config)) ?? null;
}

const fact = (f: ClassifiedFailure, k: string): number | undefined => {
  const v = f.facts[k];
  return typeof v === 'number' ? v : undefined;
};

/** The conditions of one failure's rule, or null when its class names no knob. */
export function conditionsFor(failure: ClassifiedFailure, r: ResolvedServerConfig): RuleCondition[] | null {
  const tp: RuleCondition = { knob: 'tensor_parallel_size', op: '<=', value: r.tensor_parallel_size };
  const quant: RuleCondition = { knob: 'quantization', op: '==', value: r.quantization };
  const batched: RuleCondition = { knob: 'max_num_batched_tokens', op: '>=', value: r.max_num_batched_tokens };
  const seqs: RuleCondition = { knob: 'max_num_seqs', op: '>=', value: r.max_num_seqs };
  switch (failure.class) {
    case 'prompt_too_long': {
      const p = fact(failure, 'prompt_tokens');
      const requested = fact(failure, 'requested_tokens');
      // A prompt alone past the limit needs at least one token more (vLLM's count can omit a negative completion).
      const needed = p === undefined ? requested : Math.max(requested ?? 0, p + Math.max(1, fact(failure, 'output_tokens') ?? 0));
      // Without the length, all the message proves is that this max_model_len (and any shorter) is too short.
      return [needed === undefined ? { knob: 'max_model_len', op: '<=', value: r.max_model_len } : { knob: 'max_model_len', op: '<', value: needed }];
    }
    case 'kv_cache_too_small': {
      const fits = fact(failure, 'estimated_max_model_len');
      // Activation and sampler memory grow with the token budget and the batch: both are part of the region.
      const base = [tp, quant, { knob: 'kv_cache_dtype', op: '==', value: r.kv_cache_dtype } as RuleCondition, { knob: 'gpu_memory_utilization', op: '<=', value: r.gpu_memory_utilization } as RuleCondition, batched, seqs];
      if (failure.facts['kind'] === 'no_blocks') return base;
      // An allocation that failed outright (llama.cpp sizes the cache from the context and the slots, not
      // from a memory share): more context or more sequences fail the same way, whatever the utilization.
      if (failure.facts['kind'] === 'alloc') return [tp, quant, { knob: 'kv_cache_dtype', op: '==', value: r.kv_cache_dtype }, seqs, { knob: 'max_model_len', op: '>=', value: r.max_model_len }];
      return [...base, fits === undefined ? { knob: 'max_model_len', op: '>=', value: r.max_model_len } : { knob: 'max_model_len', op: '>', value: fits }];
    }
    case 'oom_load':
      if (failure.facts['kind'] === 'utilization') return [{ knob: 'gpu_memory_utilization', op: '>=', value: r.gpu_memory_utilization }];
      if (failure.facts['kind'] === 'weights') return [tp, quant];
      return [tp, quant, { knob: 'gpu_memory_utilization', op: '>=', value: r.gpu_memory_utilization }, batched, seqs];
    case 'oom_runtime':
      return [tp, quant, { knob: 'gpu_memory_utilization', op: '>=', value: r.gpu_memory_utilization }, seqs];
    case 'cuda_graph':
      return [
        { knob: 'enforce_eager', op: '==', value: false },
        tp,
        { knob: 'gpu_memory_utilization', op: '>=', value: r.gpu_memory_utilization },
        { knob: 'max_cudagraph_capture_size', op: '>=', value: r.max_cudagraph_capture_size },
      ];
    case 'unsupported_quantization': {
      const q = failure.facts['quantization'];
      return [{ knob: 'quantization', op: '==', value: typeof q === 'string' && q !== '' ? q : r.quantization }];
    }
    case 'unsupported_dtype': {
      const kv = failure.facts['kv_cache_dtype'];
      // bfloat16 on an old GPU is the deployment's problem, not a knob's: no rule.
      if (kv === undefined && (r.kv_cache_dtype === 'auto' || failure.facts['dtype'] === 'bfloat16')) return null;
      return [{ knob: 'kv_cache_dtype', op: '==', value: typeof kv === 'string' && r.kv_cache_dtype !== 'auto' ? r.kv_cache_dtype : (kv ?? r.kv_cache_dtype) }];
    }
    case 'knob_limit': {
      const knob = failure.facts['knob'];
      const bound = fact(failure, 'bound');
      const stated = RuleOp.safeParse(failure.facts['bound_op']);
      if (typeof knob !== 'string' || bound === undefined || !stated.success || stated.data === '==') return null;
      // "must be <= 64" rules out what is above 64.
      return [{ knob, op: OUTSIDE[stated.data], value: bound }];
    }
    case 'timeout':
    case 'crash':
    case 'unknown':
      return null;
  }
}

/** The region outside a stated bound: `must be <= b` fails above b. */
const OUTSIDE: Record<Exclude<RuleOp, '=='>, RuleOp> = { '<=': '>', '<': '>=', '>=': '<', '>': '<=' };

const fmt = (v: RuleCondition['value']): string => (typeof v === 'number' ? v.toLocaleString('en') : String(v));
const OPPOSITE: Record<RuleOp, string> = { '<': '>=', '<=': '>', '>=': '<', '>': '<=', '==': '!=' };

function trialList(trials: readonly RuleTrial[], study: string | undefined): string {
  const own = trials.filter((t) => study === undefined || t.study === study).map((t) => String(t.number));
  const other = trials.filter((t) => study !== undefined && t.study !== study).map((t) => `${t.study}#${t.number}`);
  const all = [...own, ...other];
  return `${all.length === 1 ? 'trial' : 'trials'} ${all.join(', ')}`;
}

function because(rule: Pick<FailureRule, 'class'>, evidence: readonly FailureEvidence[]): string {
  const f = evidence[0]?.failure;
  if (rule.class === 'prompt_too_long' && f !== undefined) {
    const lens = evidence.map((e) => fact(e.failure, 'prompt_tokens')).filter((x): x is number => x !== undefined);
    if (lens.length > 0) return `failed with prompts of ${Math.max(...lens).toLocaleString('en')} tokens`;
  }
  if (rule.class === 'kv_cache_too_small' && f !== undefined) {
    const fits = fact(f, 'estimated_max_model_len');
    if (fits !== undefined) return `failed: the KV cache holds ${fits.toLocaleString('en')} tokens`;
    if (f.facts['kind'] === 'alloc') return 'failed: the KV cache could not be allocated';
  }
  if (rule.class === 'knob_limit' && f !== undefined && typeof f.facts['param'] === 'string') {
    return `failed: the server caps ${f.facts['param']} (${f.evidence.slice(0, 120)})`;
  }
  if ((rule.class === 'unknown' || rule.class === 'crash' || rule.class === 'timeout') && f !== undefined) {
    // A rule learned by contrast: the words it was recognised by, and that every trial that worked lies outside it.
    const same = evidence.length > 1 && new Set(evidence.map(failureKey)).size === 1 ? 'the same way' : `(${FAILURE_CLASS_TEXT[rule.class]})`;
    return `failed ${same}, unlike every trial that got further: "${f.evidence.slice(0, 120)}"`;
  }
  return `failed: ${FAILURE_CLASS_TEXT[rule.class]}`;
}

/** "max_model_len >= 2,641" for a one-bound rule, else "avoid a, b and c". */
export function ruleRegionText(avoid: readonly RuleCondition[]): string {
  const only = avoid[0];
  if (avoid.length === 1 && only !== undefined && only.op !== '==') return `${only.knob} ${OPPOSITE[only.op]} ${fmt(only.value)}`;
  return `avoid ${avoid.map((c) => `${c.knob} ${c.op === '==' ? '=' : c.op} ${fmt(c.value)}`).join(' with ')}`;
}

const conditionsKey = (cs: readonly RuleCondition[]): string =>
  cs
    .map((c) => `${c.knob}${c.op}${String(c.value)}`)
    .sort()
    .join('&');

/** Whether region `a` lies inside region `b` (every condition of b is implied by one of a's). */
function within(a: readonly RuleCondition[], b: readonly RuleCondition[]): boolean {
  return b.every((cb) =>
    a.some((ca) => {
      if (ca.knob !== cb.knob) return false;
      if (cb.op === '==') return ca.op === '==' && ca.value === cb.value;
      if (typeof ca.value !== 'number' || typeof cb.value !== 'number') return false;
      if (ca.op === '==') return holds(cb, { [cb.knob]: ca.value });
      const up = (op: RuleOp): boolean => op === '>=' || op === '>';
      if (up(ca.op) !== up(cb.op)) return false;
      return up(cb.op) ? ca.value > cb.value || (ca.value === cb.value && (cb.op === '>=' || ca.op === '>')) : ca.value < cb.value || (ca.value === cb.value && (cb.op === '<=' || ca.op === '<'));
    }),
  );
}

/**
 * The rules a set of failures teaches, merged: failures with the same region share one rule (their
 * trials listed), prompt-length rules keep the longest prompt seen, and a region inside another rule's
 * is dropped (its trials move to the wider rule). `study` names the study the text is written for
 * (its own trials by number, others' as study#number).
 */
export function learnRules(evidence: readonly FailureEvidence[], study?: string, bounds: readonly RuleBound[] = []): FailureRule[] {
  interface Draft {
    cls: FailureClass;
    avoid: RuleCondition[];
    ev: FailureEvidence[];
  }
  const drafts: Draft[] = [];
  for (const e of evidence) {
    const avoid = conditionsFor(e.failure, e.config);
    if (avoid === null) continue;
    if (e.failure.class === 'prompt_too_long') {
      // One prompt-length rule: the longest request any failure proved necessary.
      const prev = drafts.find((d) => d.cls === 'prompt_too_long');
      if (prev !== undefined) {
        const a = prev.avoid[0];
        const b = avoid[0];
        if (a !== undefined && b !== undefined && typeof a.value === 'number' && typeof b.value === 'number') {
          const aNeed = a.op === '<' ? a.value : a.value + 1;
          const bNeed = b.op === '<' ? b.value : b.value + 1;
          if (bNeed > aNeed) prev.avoid = avoid;
        }
        prev.ev.push(e);
        continue;
      }
    }
    const key = conditionsKey(avoid);
    const same = drafts.find((d) => d.cls === e.failure.class && conditionsKey(d.avoid) === key);
    if (same !== undefined) same.ev.push(e);
    else drafts.push({ cls: e.failure.class, avoid, ev: [e] });
  }
  // Failures that name no knob, contrasted with the trials that got further.
  for (const d of contrastDrafts(evidence, bounds)) {
    const key = conditionsKey(d.avoid);
    const same = drafts.find((x) => x.cls === d.cls && conditionsKey(x.avoid) === key);
    if (same !== undefined) same.ev.push(...d.ev.filter((e) => !same.ev.includes(e)));
    else drafts.push({ cls: d.cls, avoid: [...d.avoid], ev: [...d.ev] });
  }
  // Fold regions contained in a wider one into it (the first-found wider region keeps them).
  const kept: Draft[] = [];
  for (const d of drafts) {
    const wider = drafts.find((o) => o !== d && o.cls === d.cls && within(d.avoid, o.avoid) && !(within(o.avoid, d.avoid) && drafts.indexOf(o) > drafts.indexOf(d)));
    if (wider !== undefined) wider.ev.push(...d.ev);
    else kept.push(d);
  }
  return kept.map((d) => {
    const trials = [...new Map(d.ev.map((e) => [`${e.study}#${e.number}`, { study: e.study, number: e.number }])).values()];
    return {
      class: d.cls,
      avoid: d.avoid,
      trials,
      text: `${ruleRegionText(d.avoid)}: ${trialList(trials, study)} ${because({ class: d.cls }, d.ev)}`,
      // Prompt lengths and run-time memory peaks depend on the workload the server saw.
      // Rules learned by contrast stand on what this workload's trials did, not on a stated cause.
      scope: d.cls === 'prompt_too_long' || d.cls === 'oom_runtime' || d.cls === 'unknown' || d.cls === 'crash' || d.cls === 'timeout' ? 'workload' : 'deployment',
    };
  });
}
