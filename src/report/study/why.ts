import type { Diagnosis } from '../../domain/index.js';
import { bottleneckLabel, evidenceText, adviceText } from '../../diagnose/text.js';
import { escapeHtml, type Section } from '../html.js';
import type { TrialSummary } from '../../tune/summary.js';
import { configText } from './sections.js';
import type { StudyAnalysis } from './types.js';

/**
 * Why configurations fell short: for every measured trial that missed the SLOs or saturated, the
 * bottleneck seen while it ran (diagnose/classify.ts), its numbers and the knob changes that address
 * it; and for the measured Pareto set, what stops each member from doing more.
 */
function row(t: TrialSummary, d: Diagnosis): string {
  const cells = [
    String(t.number),
    t.meets_slo === null ? '–' : t.meets_slo ? 'yes' : 'no',
    bottleneckLabel(d),
    evidenceText(d).join('; '),
    adviceText(d) === '' ? '–' : adviceText(d),
    configText(t.config),
  ];
  return `<tr>${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`;
}

const HEAD = '<table><thead><tr><th>trial</th><th>meets SLOs</th><th>bottleneck</th><th>evidence</th><th>try</th><th>configuration</th></tr></thead><tbody>';

export function whySection(a: StudyAnalysis): Section {
  const measured = a.summary.trials.filter((t): t is TrialSummary & { diagnosis: Diagnosis } => t.diagnosis !== null);
  const short = measured.filter((t) => t.diagnosis.bottleneck !== 'none');
  const front = new Set(a.summary.front);
  const pareto = measured.filter((t) => front.has(t.number));
  const counts = new Map<string, number>();
  for (const t of short) counts.set(bottleneckLabel(t.diagnosis), (counts.get(bottleneckLabel(t.diagnosis)) ?? 0) + 1);
  const tally = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
  // With nothing measured there is nothing to diagnose: "every measured trial met the SLOs" would be vacuously true and read as good news.
  const intro =
    measured.length === 0
      ? '<p>No trial was measured, so there is no run to diagnose (see what failed below).</p>'
      : short.length === 0
        ? '<p>Every measured trial met the SLOs without a standing queue.</p>'
        : `<p>${short.length} of ${measured.length} measured trials missed the SLOs or saturated: ${escapeHtml(tally)}. Each is classified from what was seen while it ran (the server’s queue, batch, KV cache and preemptions, vLLM’s queue and prefill times, and the load generator’s own health); the knob changes address that limit.</p>`;
  const paretoHtml =
    pareto.length === 0
      ? ''
      : `<h3>The measured Pareto set: what limits each member</h3>${HEAD}${pareto.map((t) => row(t, t.diagnosis)).join('')}</tbody></table>`;
  return {
    kind: 'html',
    title: 'Why configurations fell short',
    html: `${intro}${short.length === 0 ? '' : `${HEAD}${short.map((t) => row(t, t.diagnosis)).join('')}</tbody></table>`}${paretoHtml}`,
  };
}
