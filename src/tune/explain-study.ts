import type { Catalog } from '../catalog/index.js';
import { meetsSlo, servableModel, vllmServeArgs, type KnobValue, type ServerConfig, type StudySpec, type Trial } from '../domain/index.js';
import { targetsOf, type TargetName, type TargetValues } from '../surrogate/targets.js';
import { meetsConstraints, pickRule, sloConstraints } from '../optimize/objectives.js';
import type { PriorSimulator } from '../calibration/prior-simulator.js';
import { attributePath, contextWarnings, simplificationReport, simplifyPick, spaceJudges, type Attribution, type Evaluate, type Evaluation, type SimplificationReport } from '../optimize/simplify.js';
import type { SearchSpace } from '../space/index.js';
import { shellQuote } from '../util/shell.js';
import { featureContext } from './study-runner.js';
import { oomRiskText, RUNTIME_OOM_DOUBT_PER_RUN } from '../optimize/doubts.js';
import type { StudySummary } from './summary.js';

/**
 * The end of a study, defended (issue 30): the measured pick with every knob whose change is within
 * the study's run-to-run noise back at vLLM's default, and the path from the defaults to it one flag a
 * step. A configuration the study measured is judged by its measurements (their mean; it meets the SLOs
 * only if every measurement did); one it did not is simulated and corrected by the pick's own residual
 * (measured ÷ simulated, per figure), so a revert is compared on the pick's scale, and labelled
 * `predicted`. Without a simulator only measured configurations can be judged.
 */
export interface StudyExplanation {
  readonly simplification: SimplificationReport | null;
  readonly attribution: Attribution | null;
  readonly warnings: string[];
  /** `vllm serve` with the simplified pick's flags (null: no pick). */
  readonly vllm_command: string | null;
}

export interface ExplainStudyOptions {
  readonly summary: StudySummary;
  readonly trials: readonly Trial[];
  readonly spec: StudySpec;
  readonly space: SearchSpace;
  readonly catalog: Catalog;
  readonly simulator: PriorSimulator | null;
}

function meanValues(all: readonly TargetValues[]): TargetValues {
  const out: TargetValues = {};
  const keys = new Set(all.flatMap((v) => Object.keys(v) as TargetName[]));
  for (const k of keys) {
    const xs = all.map((v) => v[k]).filter((x): x is number => x !== undefined);
    if (xs.length === all.length) out[k] = xs.reduce((a, b) => a + b, 0) / xs.length;
  }
  return out;
}

export function explainStudyPick(opts: ExplainStudyOptions): StudyExplanation {
  const rec = opts.summary.recommendation;
  if (rec === null) return { simplification: null, attribution: null, warnings: [], vllm_command: null };
  const ctx = featureContext(opts.spec, opts.catalog);
  const gpus = opts.spec.hardware.count;
  const judges = spaceJudges(opts.space, ctx);
  // Configurations are the same when vLLM runs them the same (an unset knob at its derived default).
  const keyOf = (c: ServerConfig): string => JSON.stringify(Object.entries(judges.resolve(c)).sort(([a], [b]) => (a < b ? -1 : 1)));
  const measured = new Map<string, Evaluation>();
  const groups = new Map<string, NonNullable<Trial['result']>[]>();
  for (const t of opts.trials) {
    if (t.state !== 'complete' || t.result === null || t.result === undefined) continue;
    const key = keyOf(t.config);
    groups.set(key, [...(groups.get(key) ?? []), t.result]);
  }
  for (const [key, results] of groups) {
    measured.set(key, { values: meanValues(results.map((r) => targetsOf(r, gpus))), meetsSlo: results.every((r) => meetsSlo(opts.spec.slo, r)), source: 'measured' });
  }
  const pick = rec.config;
  // The summary picked it as meeting the SLOs (by its mean over its measurements): that is the verdict.
  const pickKey = keyOf(pick);
  const pickMeasured = measured.get(pickKey);
  if (pickMeasured !== undefined) measured.set(pickKey, { ...pickMeasured, meetsSlo: true });
  const constraints = sloConstraints(opts.spec.slo);
  // The simulator on the pick's scale: each figure times the pick's measured ÷ simulated.
  const simulatedPick = opts.simulator?.simulate(pick) ?? null;
  const residual: TargetValues = {};
  if (simulatedPick !== null && pickMeasured !== undefined) {
    const sim = targetsOf(simulatedPick, gpus);
    for (const [k, v] of Object.entries(pickMeasured.values) as [TargetName, number][]) {
      const s = sim[k];
      if (s !== undefined && s > 0) residual[k] = v / s;
    }
  }
  const evaluate: Evaluate = (configs) =>
    configs.map((c) => {
      const m = measured.get(keyOf(c));
      if (m !== undefined) return m;
      const r = opts.simulator?.simulate(c) ?? null;
      if (r === null) return null;
      const values: TargetValues = {};
      for (const [k, v] of Object.entries(targetsOf(r, gpus)) as [TargetName, number][]) values[k] = v * (residual[k] ?? 1);
      return { values, meetsSlo: meetsConstraints(values, constraints), source: 'predicted' };
    });
  // The pick finished its measured runs, but a few hundred requests seldom show a rare run-time OOM:
  // the memory model's risk for the flags as printed is a warning of its own.
  const oomWarnings = (config: ServerConfig): string[] => {
    const risk = opts.simulator?.runtimeOomRisk(config) ?? null;
    return risk !== null && risk.perRun >= RUNTIME_OOM_DOUBT_PER_RUN ? [`the study's runs of the pick finished, but ${oomRiskText(risk)}`] : [];
  };
  const rule = pickRule(rec.objective);
  const s = simplifyPick({ pick, rule, toleranceRel: opts.summary.noise.rel, evaluate, ...judges });
  if (s === null) return { simplification: null, attribution: null, warnings: [...contextWarnings(rec.config, ctx.model, ctx.workload), ...oomWarnings(rec.config)], vllm_command: rec.vllm_command };
  const simplification = simplificationReport(s, rule);
  const sparse = simplification.after.changed as Record<string, KnobValue>;
  return {
    simplification,
    attribution: attributePath({ target: s.config, rule, evaluate, feasible: judges.feasible }),
    warnings: [...contextWarnings(sparse, ctx.model, ctx.workload), ...oomWarnings(s.config)],
    // Served as the summary's command is (domain/served-model.ts), whose warning says why.
    vllm_command: shellQuote(['vllm', ...vllmServeArgs(servableModel(ctx.model).hf_name, sparse)]),
  };
}
