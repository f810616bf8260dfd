import { ResolvedServerConfig } from '../domain/index.js';
import type { FailureClass } from './failure-classes.js';
import type { FailureEvidence, RuleCondition } from './rule-condition.js';

/**
 * Rules from failures whose words name no knob (an engine's message lm-bench does not know, a crash, a
 * time-out), learned by contrast with the trials that got further. A knob is suspect when the failed
 * configuration lies outside everything that worked: above the highest value that started, below the
 * lowest, or a value no trial that started had. So:
 *
 * - one unclassified failure rules out the dominance region of its suspect knobs (at least as far out
 *   on each, all of them together): the least it proves;
 * - two or more failures with the same class and the same message rule out the whole region past what
 *   worked on the knobs they are all suspect on, the same side each: a failure seen twice is not
 *   proposed a third time, at any value between the last success and the failures.
 *
 * What "worked" means depends on the failure: for a launch failure every trial whose server started;
 * for a failure under load only the measured trials. With nothing to contrast with (no trial got
 * further), or no knob outside what worked, no rule is made: the knobs that failed are then no
 * different from those that worked, and the feasibility classifier learns from the failure instead.
 */
export interface RuleBound {
  readonly study: string;
  readonly number: number;
  readonly config: ResolvedServerConfig;
  /** Measured (complete); false: the server started but the trial failed under load. */
  readonly measured: boolean;
}

export interface ContrastDraft {
  readonly cls: FailureClass;
  readonly avoid: RuleCondition[];
  readonly ev: FailureEvidence[];
}

/** Classes whose failures are contrasted: the ones whose message names no knob (failure-rules.ts `conditionsFor`). */
const ONE_FAILURE: ReadonlySet<FailureClass> = new Set(['unknown']);
const REPEATED: ReadonlySet<FailureClass> = new Set(['unknown', 'crash', 'timeout']);

const KNOBS = ResolvedServerConfig.keyof().options;
type Knob = (typeof KNOBS)[number];
type Value = ResolvedServerConfig[Knob];

type Side = { readonly knob: Knob; readonly side: 'up' | 'down'; readonly value: number; readonly edge: number } | { readonly knob: Knob; readonly side: 'other'; readonly value: string | boolean };

/** The knobs (of those the trial chose) on which `config` lies outside every configuration in `worked`. */
function suspects(config: ResolvedServerConfig, worked: readonly ResolvedServerConfig[], chosen: readonly string[] | undefined): Side[] {
  const out: Side[] = [];
  for (const knob of KNOBS) {
    // A knob the trial left to vLLM is not what it tried; one derived from a chosen knob would only repeat it.
    if (chosen !== undefined && !chosen.includes(knob)) continue;
    const v: Value = config[knob];
    const seen = worked.map((w) => w[knob]);
    if (typeof v === 'number') {
      const nums = seen.filter((x): x is number => typeof x === 'number');
      if (nums.length === 0) continue;
      const hi = Math.max(...nums);
      const lo = Math.min(...nums);
      if (v > hi) out.push({ knob, side: 'up', value: v, edge: hi });
      else if (v < lo) out.push({ knob, side: 'down', value: v, edge: lo });
    } else if (!seen.includes(v)) {
      out.push({ knob, side: 'other', value: v });
    }
  }
  return out;
}

/** What a failure is recognised by when it happens again: its class and its words, numbers aside. */
export function failureKey(e: FailureEvidence): string {
  const words = e.failure.evidence
    .toLowerCase()
    .replace(/^command exited -?\d+:\s*/, '')
    .replace(/0x[0-9a-f]+/g, '#')
    .replace(/\d+(?:[.,]\d+)*/g, '#')
    .replace(/\s+/g, ' ')
    .trim();
  return `${e.failure.class}:${words}`;
}

function workedFor(e: FailureEvidence, bounds: readonly RuleBound[]): ResolvedServerConfig[] {
  // A launch failure is contrasted with everything that started; a failure under load with what was measured.
  const launch = e.started === false;
  return bounds.filter((b) => launch || b.measured).map((b) => b.config);
}

export function contrastDrafts(evidence: readonly FailureEvidence[], bounds: readonly RuleBound[]): ContrastDraft[] {
  const drafts: ContrastDraft[] = [];
  // Failures whose start is unknown (a node that failed, a job the cluster lost) are not the configuration's doing.
  const usable = evidence.filter((e) => e.started !== null && e.started !== undefined && REPEATED.has(e.failure.class));
  for (const e of usable) {
    if (!ONE_FAILURE.has(e.failure.class)) continue;
    const worked = workedFor(e, bounds);
    if (worked.length === 0) continue;
    const sides = suspects(e.config, worked, e.chosen);
    if (sides.length === 0) continue;
    drafts.push({
      cls: e.failure.class,
      avoid: sides.map((s): RuleCondition => (s.side === 'other' ? { knob: s.knob, op: '==', value: s.value } : { knob: s.knob, op: s.side === 'up' ? '>=' : '<=', value: s.value })),
      ev: [e],
    });
  }
  const groups = new Map<string, FailureEvidence[]>();
  for (const e of usable) {
    const k = `${e.started === false ? 'launch' : 'load'}|${failureKey(e)}`;
    const g = groups.get(k);
    if (g === undefined) groups.set(k, [e]);
    else g.push(e);
  }
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const first = group[0] as FailureEvidence;
    const worked = workedFor(first, bounds);
    if (worked.length === 0) continue;
    const each = group.map((e) => suspects(e.config, worked, e.chosen));
    const avoid: RuleCondition[] = [];
    for (const s of each[0] ?? []) {
      const all = each.map((sides) => sides.find((x) => x.knob === s.knob));
      if (s.side === 'other') {
        if (all.every((x) => x?.side === 'other' && x.value === s.value)) avoid.push({ knob: s.knob, op: '==', value: s.value });
      } else if (all.every((x) => x?.side === s.side)) {
        // Past the last value that worked, not only past the failures: the gap between them fails the same way.
        avoid.push({ knob: s.knob, op: s.side === 'up' ? '>' : '<', value: s.edge });
      }
    }
    if (avoid.length > 0) drafts.push({ cls: first.failure.class, avoid, ev: group });
  }
  return drafts;
}
