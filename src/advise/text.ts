import { formatSloString } from '../domain/index.js';
import { sloConstraints } from '../optimize/objectives.js';
import { explanationLines } from '../optimize/simplify-text.js';
import type { Interval, RecommendedConfig } from '../optimize/recommend.js';
import { bottleneckLabel, hasBottleneck, knobText, saturationText } from '../diagnose/text.js';
import type { Answer } from './answer.js';
import { MEASURED_PREFIX } from './measured.js';

const isMeasured = (reason: string): boolean => reason.startsWith(MEASURED_PREFIX);

/** An answer as the terminal shows it (`lm-bench recommend` without --json). */
const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const iv = (i: Interval | undefined): string => (i === undefined ? '–' : `${fmt(i.mean)} [${fmt(i.low)}, ${fmt(i.high)}]`);
const knobs = (c: RecommendedConfig): string => Object.entries(c.config).map(([k, v]) => `${k}=${String(v)}`).join(' ');

function block(title: string, c: RecommendedConfig, command: string | null): string[] {
  const p = c.predicted;
  return [
    `${title} (predicted mean [±2σ]):`,
    `  output throughput per GPU  ${iv(p.output_throughput_per_gpu)} tok/s`,
    `  p99 TTFT                   ${iv(p.ttft_p99_ms)} ms`,
    `  p99 ITL                    ${iv(p.itl_p99_ms)} ms`,
    `  P(starts) ${(c.p_start * 100).toFixed(0)}%, P(meets SLOs) ${(c.p_meets_slo * 100).toFixed(0)}%`,
    c.numerics_changes.length === 0 ? '  keeps the checkpoint’s numerics' : `  changes the model’s numerics: ${c.numerics_changes.join(', ')}`,
    ...limitLines(c),
    ...(c.doubts ?? []).map((d) => `  the simulator doubts it: ${d}`),
    '',
    `  ${command ?? ''}`,
  ];
}

/** What limits a configuration on the workload (simulated), when something does. */
function limitLines(c: RecommendedConfig): string[] {
  // A simulated run that could not keep up with the arrivals: its latencies are no steady state.
  const saturated = saturationText(c.saturation);
  if (saturated !== null) return [`  simulated run: ${saturated}`];
  const d = c.diagnosis;
  if (d === null || d === undefined) return [];
  if (d.bottleneck === 'none') return ['  simulated run: no bottleneck at this load'];
  return [`  simulated run: ${bottleneckLabel(d)}${d.saturated ? ', saturated' : ''}; to push further: ${d.knobs.slice(0, 2).map(knobText).join('; ') || '–'}`];
}

export function formatAnswer(a: Answer): string {
  const lines: string[] = [];
  const from =
    a.source.kind === 'simulator'
      ? `the simulator, from ${a.source.simulator?.simulated ?? 0} simulated runs (${a.source.simulator?.profile ?? 'default profile'}); not learned from measured runs of this GPU and model — SIMULATED, not measured`
      : a.source.study === null
        ? `surrogate ${String(a.surrogate_id)} (lm-bench surrogate train)`
        : `surrogate ${String(a.surrogate_id)}, saved by study "${a.source.study}"`;
  lines.push(`Rule: ${a.rule}.`, `Answered by ${from}${a.source.validated || a.source.kind === 'simulator' ? '' : ', not cross-validated'}.`, '');
  if (a.best === null) {
    // The rule's floor on P(meets the SLOs), not the means, decides: a Pareto member below may meet them on its means.
    const limits = sloConstraints(a.slo);
    const onMeans = limits.length > 0 && a.pareto.some((m) => limits.every((c) => (m.predicted[c.target]?.mean ?? Number.POSITIVE_INFINITY) <= c.limitMs));
    lines.push(`No configuration is predicted to start and meet the SLOs as the rule asks${onMeans ? ' (the Pareto set below holds some that meet them on their means, less surely than that)' : ''}.`);
    // The history's own evidence (measured.ts) stands with the verdict it contradicts, before any prediction.
    const measured = a.trust.reasons.filter(isMeasured);
    if (measured.length > 0) lines.push('', 'But your history holds measured runs that met these SLOs (MEASURED, not predicted):', ...measured.map((r) => `  - ${r.slice(MEASURED_PREFIX.length).trim()}`));
    lines.push(...nearestLines(a));
    // With no pick there are no flags to warn about: what is left is how the limits were judged (judged-on.ts).
    for (const w of a.warnings) lines.push('', `Warning: ${w}`);
  }
  else {
    lines.push(...block(a.source.kind === 'simulator' ? 'Recommended configuration (simulated)' : 'Recommended configuration', a.best, a.vllm_command));
    if (a.cost !== undefined && a.cost !== null) {
      const perM = a.cost.usd_per_million_output_tokens === null ? '' : `, $${a.cost.usd_per_million_output_tokens.toFixed(3)} per million output tokens at its predicted throughput`;
      lines.push(`  cost: $${a.cost.usd_per_hour.toFixed(2)}/h${perM} (${a.cost.price_source})`);
    }
    lines.push(...explanationLines(a));
    lines.push('', '  # vllm serve --config config.yaml', ...(a.vllm_config_yaml ?? '').trimEnd().split('\n').map((l) => `  ${l}`));
    if (a.precision_keeping !== null) {
      lines.push('', ...block('Best that keeps the checkpoint’s precision (no fp8 weights or KV cache)', a.precision_keeping, a.precision_keeping_command));
    } else if (a.best.numerics_changes.length > 0) {
      lines.push('', 'No configuration that keeps the checkpoint’s precision is predicted to meet the SLOs.');
    }
  }
  if (a.keep_precision) lines.push('', '(--keep-precision: quantization and KV-cache dtype held at the checkpoint’s own.)');
  if (a.pareto.length > 0) {
    lines.push('', `Pareto set (${a.pareto.length}): throughput/GPU vs p99 TTFT (predicted means)`);
    for (const c of a.pareto.slice(0, 10)) {
      const mark = c.recommended ? '→' : ' ';
      lines.push(`${mark} ${fmt(c.predicted.output_throughput_per_gpu?.mean ?? 0).padStart(7)} tok/s  ${fmt(c.predicted.ttft_p99_ms?.mean ?? 0).padStart(7)} ms  ${knobs(c)}`);
      if (c.note !== null) lines.push(`      ${c.note}`);
      if (hasBottleneck(c.diagnosis)) lines.push(`      limited by: ${bottleneckLabel(c.diagnosis)} (simulated)`);
    }
  }
  if (a.trust.level === 'thin') {
    // Measured evidence was printed with the verdict (above) where there is no pick.
    lines.push('', 'Do not trust this yet:', ...a.trust.reasons.filter((r) => a.best !== null || !isMeasured(r)).map((r) => `  - ${r}`));
    if (a.measure_next.length > 0) {
      lines.push(
        a.source.kind === 'simulator'
          ? 'Measure these next (the runs that would most change this answer: the pick, its strongest rival, the best one the error leaves unsure): start each server, then load it:'
          : 'Measure these next (most expected improvement under the SLOs): start each server, then load it:',
      );
      a.measure_next.forEach((m, i) => lines.push(`  ${i + 1}. ${m.vllm_serve}`, `     ${m.lm_bench_run}`));
      if (a.enqueue_command !== null) {
        // --vllm-version names the simulator's release: a study on real servers refuses it.
        const onGpus = a.enqueue_command.includes(' --vllm-version ') ? 'drop --vllm-version and add --target vllm, endpoint or command' : 'add --target vllm, endpoint or command';
        lines.push(`Or queue them all in a study, where they run first (${onGpus} to measure on your GPUs):`, `  ${a.enqueue_command}`);
      }
    }
  }
  lines.push('', `(${a.candidates_scored} candidates scored${a.source.kind === 'simulator' ? `, ${a.source.simulator?.simulated ?? 0} simulated` : ''})`);
  return lines.join('\n');
}

/**
 * The figure an SLO key is judged on where it is not the key's own (objectives.ts `sloConstraints`: a
 * p90 or p95 limit against the p99 figure, a mean against the median, no other being predicted), so
 * the number printed beside `ttft_p90_ms` is not read as a p90.
 */
function judgedOn(key: string): string {
  const target = sloConstraints({ [key]: 1 }).at(0)?.target;
  if (target === undefined || target === key) return '';
  const [metric, stat] = target.split('_') as [string, string];
  return ` (as ${stat} ${metric.toUpperCase()})`;
}

/** What comes nearest when nothing meets the SLOs, and what would make one meet them. */
function nearestLines(a: Answer): string[] {
  const n = a.nearest;
  if (n === null) return [];
  const out: string[] = [];
  const sat = n.saturated ?? null;
  if (sat !== null) {
    const which = sat.count === sat.of ? `Every one of the ${sat.of}` : `${sat.count} of the ${sat.of}`;
    out.push('', `${which} simulated configurations cannot sustain this load: the best sustains ${fmt(sat.best_sustained_rps)} req/s of ${fmt(sat.offered_rps)} offered, so its queue grows without bound and no SLO holds.`);
  }
  if (n.candidates.length > 0) {
    out.push('', 'Nearest (what each would meet instead):');
    n.candidates.forEach((c, i) => {
      const miss = c.misses.map((m) => `${m.slo}${judgedOn(m.slo)} ${fmt(m.predicted)} ms against ${m.limit}`).join(', ');
      // One whose figures meet the limits misses only the rule's margin: it is said so, not "misses" nothing.
      const short = c.misses.length === 0 ? 'meets the SLOs on its figures, less surely than the rule asks' : `misses ${miss}`;
      out.push(`  ${i + 1}. ${fmt(c.values.output_throughput_per_gpu ?? 0)} tok/s/GPU; ${short}; meets ${formatSloString(c.would_meet)}`, `     ${c.vllm_command}`);
    });
  }
  if (n.changes.length > 0) {
    out.push('', 'To make one meet the SLOs:');
    for (const c of n.changes) out.push(`  - ${c.description}`, `      ${c.vllm_command}`);
  } else out.push('', 'No change tried (a relaxed SLO, more GPUs, fp8) makes a configuration meet the SLOs.');
  return out;
}
