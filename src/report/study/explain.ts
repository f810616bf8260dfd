import { vllmServeArgs, type KnobValue } from '../../domain/index.js';
import type { AttributionStep } from '../../optimize/simplify.js';
import { shellQuote } from '../../util/shell.js';
import { escapeHtml, type Section } from '../html.js';
import type { StudyAnalysis } from './types.js';

/**
 * "Why these flags": the study's pick simplified to the flags that matter (tune/explain-study.ts),
 * the search's pick beside it, and the path from vLLM's defaults one flag a step with the gain each
 * brings, labelled measured (the study ran that configuration) or predicted (simulated, on the pick's
 * measured scale). What a reviewer asks before accepting a deployment setting.
 */
const UNITS: Record<string, { readonly unit: string; readonly digits: number }> = {
  output_throughput_per_gpu: { unit: 'tok/s per GPU', digits: 0 },
  energy_per_output_token_j: { unit: 'J per output token', digits: 4 },
};
const fmt = (x: number | null, digits: number): string => (x === null || !Number.isFinite(x) ? '–' : x.toFixed(digits));
/**
 * The flags as `vllm serve` takes them, written by the serve command's own vllmServeArgs (as `tune`
 * prints them): a false boolean is `--no-flag` (or nothing, for enforce_eager), never `--flag false`,
 * which vLLM refuses, so a line can be pasted.
 */
const flags = (c: Readonly<Record<string, KnobValue>>): string => shellQuote(vllmServeArgs('', c).slice(2)) || '(vLLM defaults)';

export function explainSection(a: StudyAnalysis): Section | null {
  const x = a.explanation;
  if (x === null || x.simplification === null) return null;
  const s = x.simplification;
  const u = UNITS[s.figure] ?? { unit: s.figure, digits: 2 };
  const tol = `±${(s.tolerance_rel * 100).toFixed(1)}%`;
  const simplified =
    s.reverted.length === 0
      ? `<p>Every flag the pick sets matters: each back at vLLM’s default alone costs more than the ${tol} run-to-run noise.</p>`
      : `<p>${s.reverted.length} of the ${Object.keys(s.before.changed).length} flags the search’s pick set made no difference beyond the ${tol} run-to-run noise and are back at vLLM’s defaults (${escapeHtml(s.reverted.map((r) => r.knob).join(', '))}):</p>
<table><thead><tr><th></th><th>${escapeHtml(u.unit)}</th><th>flags</th></tr></thead><tbody>
<tr><td>search’s pick (measured)</td><td class="num">${fmt(s.before.figure, u.digits)}</td><td><code>${escapeHtml(flags(s.before.changed))}</code></td></tr>
<tr><td>simplified (${s.source})</td><td class="num">${fmt(s.after.figure, u.digits)}</td><td><code>${escapeHtml(flags(s.after.changed))}</code></td></tr></tbody></table>
${x.vllm_command === null ? '' : `<pre style="white-space:pre-wrap;overflow-wrap:anywhere">${escapeHtml(x.vllm_command)}</pre>`}`;
  const at = x.attribution;
  const row = (name: string, st: AttributionStep): string =>
    `<tr><td><code>${escapeHtml(name)}</code></td><td class="num">${fmt(st.figure, u.digits)}</td><td class="num">${st.gain_pct === null ? '–' : `${st.gain_pct >= 0 ? '+' : ''}${st.gain_pct.toFixed(1)}%`}</td><td class="num">${fmt(st.p99_ttft_ms, 0)}</td><td class="num">${fmt(st.p99_itl_ms, 1)}</td><td>${st.meets_slo === null ? 'does not start' : st.meets_slo ? 'yes' : 'no'}</td><td>${st.source ?? '–'}</td></tr>`;
  const path =
    at === null || at.steps.length === 0
      ? ''
      : `<p>From vLLM’s defaults to the pick, one flag a step, the biggest gain first:</p>
<table><thead><tr><th>step</th><th>${escapeHtml(u.unit)}</th><th>gain</th><th>p99 TTFT (ms)</th><th>p99 ITL (ms)</th><th>meets SLOs</th><th>figures</th></tr></thead><tbody>
${row('vLLM defaults', at.defaults)}${at.steps.map((st) => row(`+ ${flags(st.knobs)}`, st)).join('')}</tbody></table>`;
  const warnings = x.warnings.map((w) => `<p><b>Warning:</b> ${escapeHtml(w)}</p>`).join('');
  return { kind: 'html', title: 'Why these flags', html: `${simplified}${path}${warnings}` };
}
