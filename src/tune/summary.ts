import type { BenchmarkResult, Diagnosis, ModelSpec, ServerConfig, Study, Trial } from '../domain/index.js';
import { withDiagnosis } from '../diagnose/classify.js';
import { checkSlo, vllmServeArgs } from '../domain/index.js';
import { FAILURE_CLASS_TEXT, type FailureClass } from '../optimize/failure-classes.js';
import type { FailureRule } from '../optimize/failure-rules.js';
import { vllmConfigYaml } from '../optimize/recommend.js';
import { shellQuote } from '../util/shell.js';
import { trialFailure } from './failure-book.js';
import type { StopReason } from './loop.js';

/**
 * What a finished (or stopped) study says: every trial, the measured Pareto front, and the
 * recommendation — the SLO-feasible trial with the most output throughput per GPU, measured, not
 * predicted — beside vLLM's defaults on the same workload.
 */
export interface TrialSummary {
  readonly number: number;
  readonly state: Trial['state'];
  readonly origin: Trial['origin'];
  readonly config: ServerConfig;
  readonly meets_slo: boolean | null;
  readonly metrics: {
    readonly output_throughput: number;
    readonly output_throughput_per_gpu: number;
    readonly p99_ttft_ms: number;
    readonly p99_itl_ms: number;
    readonly p99_tpot_ms: number;
    readonly p99_e2el_ms: number;
    readonly gpu_memory_reserved_gib: number | null;
  } | null;
  readonly failure_reason: string | null;
  /** The failure's class (failure-classes.ts), from what the target said; null when it did not fail. */
  readonly failure_class: FailureClass | null;
  /** Why a measured trial missed the SLOs or saturated (`none` when it did neither); null when not measured. */
  readonly diagnosis: Diagnosis | null;
}

export interface StudyRecommendation {
  readonly trial: number;
  readonly config: ServerConfig;
  readonly vllm_command: string;
  readonly vllm_config_yaml: string;
  readonly measured: NonNullable<TrialSummary['metrics']>;
  readonly vs_default: { readonly default_trial: number | null; readonly default_meets_slo: boolean | null; readonly throughput_gain_pct: number | null };
  /** `knob=value` of the knobs whose values change the model's numerics (fp8 weights or KV cache). */
  readonly numerics_changes: string[];
  /**
   * When the pick changes numerics: the best measured trial meeting the SLOs that keeps the
   * checkpoint's precision, with its throughput relative to the pick; null when there is none.
   */
  readonly precision_keeping: { readonly trial: number; readonly config: ServerConfig; readonly vllm_command: string; readonly measured: NonNullable<TrialSummary['metrics']>; readonly throughput_vs_pick_pct: number } | null;
}

export interface StudySummary {
  readonly study: { readonly id: number; readonly name: string; readonly state: Study['state']; readonly spec: Study['spec'] };
  readonly stop_reason: StopReason | null;
  readonly trials: TrialSummary[];
  readonly front: number[];
  readonly recommendation: StudyRecommendation | null;
  readonly counts: { readonly complete: number; readonly failed: number; readonly failed_to_start: number; readonly feasible: number };
  /** What failed and what was learned from it: failures per class and the rules they became. */
  readonly failures: { readonly by_class: Partial<Record<FailureClass, number[]>>; readonly rules: FailureRule[] };
}

function metricsOf(r: BenchmarkResult, gpus: number): NonNullable<TrialSummary['metrics']> {
  return {
    output_throughput: r.output_throughput,
    output_throughput_per_gpu: r.output_throughput / gpus,
    p99_ttft_ms: r.p99_ttft_ms,
    p99_itl_ms: r.p99_itl_ms,
    p99_tpot_ms: r.p99_tpot_ms,
    p99_e2el_ms: r.p99_e2el_ms,
    gpu_memory_reserved_gib: r.server_metrics?.gpu_memory_reserved_gib ?? null,
  };
}

export function summarizeStudy(opts: {
  readonly study: Study;
  readonly trials: readonly Trial[];
  readonly front: readonly Trial[];
  readonly model: ModelSpec;
  readonly stopReason: StopReason | null;
  /** The space's `numericsChanges`; without it, no configuration is taken to change numerics. */
  readonly numericsChanges?: (config: ServerConfig) => string[];
  /** Rules learned from this study's failures (failure-book.ts `studyRules`). */
  readonly rules?: readonly FailureRule[];
}): StudySummary {
  const changes = opts.numericsChanges ?? (() => []);
  const { study, model } = opts;
  const gpus = study.spec.hardware.count;
  const trials: TrialSummary[] = opts.trials.map((t) => ({
    number: t.number,
    state: t.state,
    origin: t.origin,
    config: t.config,
    meets_slo: t.result === null ? null : checkSlo(study.spec.slo, t.result).every((c) => c.ok),
    metrics: t.result === null ? null : metricsOf(t.result, gpus),
    failure_reason: t.failure_reason,
    failure_class: trialFailure(t)?.class ?? null,
    // Trials stored before runs carried a diagnosis get one from what their result holds.
    diagnosis: t.result === null ? null : (withDiagnosis(t.result, t.config, study.spec.slo).diagnosis ?? null),
  }));
  const byClass: Partial<Record<FailureClass, number[]>> = {};
  for (const t of trials) if (t.failure_class !== null) (byClass[t.failure_class] ??= []).push(t.number);
  const feasible = trials.filter((t) => t.state === 'complete' && t.meets_slo === true && t.metrics !== null);
  feasible.sort((a, b) => (b.metrics?.output_throughput ?? 0) - (a.metrics?.output_throughput ?? 0));
  const best = feasible[0];
  const def = trials.find((t) => t.origin === 'default');
  let recommendation: StudyRecommendation | null = null;
  if (best?.metrics) {
    const defTput = def?.meets_slo === true ? (def.metrics?.output_throughput ?? null) : null;
    const bestChanges = changes(best.config);
    const keeper = bestChanges.length === 0 ? undefined : feasible.find((t) => changes(t.config).length === 0);
    recommendation = {
      trial: best.number,
      config: best.config,
      vllm_command: shellQuote(['vllm', ...vllmServeArgs(model.hf_name, best.config)]),
      vllm_config_yaml: vllmConfigYaml(model, best.config),
      measured: best.metrics,
      vs_default: {
        default_trial: def?.number ?? null,
        default_meets_slo: def?.meets_slo ?? null,
        throughput_gain_pct: defTput === null || defTput === 0 ? null : (best.metrics.output_throughput / defTput - 1) * 100,
      },
      numerics_changes: bestChanges,
      precision_keeping:
        keeper?.metrics == null
          ? null
          : {
              trial: keeper.number,
              config: keeper.config,
              vllm_command: shellQuote(['vllm', ...vllmServeArgs(model.hf_name, keeper.config)]),
              measured: keeper.metrics,
              throughput_vs_pick_pct: (keeper.metrics.output_throughput / best.metrics.output_throughput - 1) * 100,
            },
    };
  }
  return {
    study: { id: study.id, name: study.spec.name, state: study.state, spec: study.spec },
    stop_reason: opts.stopReason,
    trials,
    front: opts.front.map((t) => t.number),
    recommendation,
    counts: {
      complete: trials.filter((t) => t.state === 'complete').length,
      failed: trials.filter((t) => t.state === 'failed').length,
      failed_to_start: opts.trials.filter((t) => t.state === 'failed' && t.started === false).length,
      feasible: feasible.length,
    },
    failures: { by_class: byClass, rules: [...(opts.rules ?? [])] },
  };
}

/** "What failed and what we learned from it", in lines (empty when nothing failed). */
export function formatFailures(f: StudySummary['failures']): string[] {
  const classes = Object.entries(f.by_class) as [FailureClass, number[]][];
  if (classes.length === 0) return [];
  const lines = ['', 'What failed and what we learned from it:'];
  for (const [cls, nums] of classes) lines.push(`  ${FAILURE_CLASS_TEXT[cls]}: ${nums.length === 1 ? 'trial' : 'trials'} ${nums.join(', ')}`);
  if (f.rules.length === 0) lines.push('  no rule on the knobs (these classes name no knob; the feasibility model learns from them)');
  for (const r of f.rules) lines.push(`  rule: ${r.text}`);
  return lines;
}

export function formatSummary(s: StudySummary): string {
  const lines: string[] = [];
  const sp = s.study.spec;
  lines.push(`Study "${s.study.name}": ${sp.model} on ${sp.hardware.count}× ${sp.hardware.gpu}, workload ${sp.workload.name}, stopped: ${s.stop_reason ?? s.study.state}`);
  lines.push(`Trials: ${s.trials.length} (${s.counts.complete} measured, ${s.counts.failed} failed, ${s.counts.failed_to_start} of them failed to start; ${s.counts.feasible} meet the SLOs)`);
  const r = s.recommendation;
  if (r === null) {
    lines.push('No measured configuration met the SLOs: loosen them, add GPUs, or give the study more trials.');
    lines.push(...formatFailures(s.failures));
    return lines.join('\n');
  }
  const m = r.measured;
  lines.push('', `Recommended (trial ${r.trial}, measured):`, `  ${r.vllm_command}`);
  lines.push(`  output ${m.output_throughput.toFixed(0)} tok/s (${m.output_throughput_per_gpu.toFixed(0)} per GPU), p99 TTFT ${m.p99_ttft_ms.toFixed(0)} ms, p99 ITL ${m.p99_itl_ms.toFixed(1)} ms, p99 TPOT ${m.p99_tpot_ms.toFixed(1)} ms`);
  const v = r.vs_default;
  if (v.default_trial !== null) {
    lines.push(
      v.default_meets_slo === true && v.throughput_gain_pct !== null
        ? `  vs vLLM defaults (trial ${v.default_trial}): ${v.throughput_gain_pct >= 0 ? '+' : ''}${v.throughput_gain_pct.toFixed(1)}% output throughput`
        : `  vs vLLM defaults (trial ${v.default_trial}): the defaults ${v.default_meets_slo === false ? 'miss the SLOs' : 'did not run'}`,
    );
  } else {
    lines.push("  vs vLLM defaults: not measured (the search space's rules, or failures of earlier studies, say they cannot start on this deployment)");
  }
  if (r.numerics_changes.length > 0) {
    lines.push(`  changes the model's numerics: ${r.numerics_changes.join(', ')} (run with --keep-precision to rule that out)`);
    const k = r.precision_keeping;
    if (k === null) lines.push('  no measured configuration that keeps the checkpoint\'s precision met the SLOs');
    else {
      lines.push(`  best that keeps the checkpoint's precision (trial ${k.trial}): ${k.measured.output_throughput.toFixed(0)} tok/s (${k.throughput_vs_pick_pct.toFixed(1)}% vs the pick), p99 TTFT ${k.measured.p99_ttft_ms.toFixed(0)} ms`);
      lines.push(`    ${k.vllm_command}`);
    }
  }
  lines.push('', '  vllm serve --config:', ...r.vllm_config_yaml.trimEnd().split('\n').map((l) => `    ${l}`));
  lines.push('', `Pareto front (trial numbers): ${s.front.join(', ') || '–'}`);
  lines.push(...formatFailures(s.failures));
  return lines.join('\n');
}
