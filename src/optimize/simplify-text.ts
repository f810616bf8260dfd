import { vllmServeArgs, type ServerConfig } from '../domain/index.js';
import { shellQuote } from '../util/shell.js';
import type { Attribution, SimplificationReport } from './simplify.js';

/** What `recommend`, the end of `tune` and the report print about a simplified pick (simplify.ts). */
export interface Explanation {
  readonly simplification: SimplificationReport | null;
  readonly attribution: Attribution | null;
  readonly warnings: readonly string[];
}

// Below 1 (joules per token: 0.0622) three significant digits, or two steps 5% apart print alike.
const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 || x === 0 ? x.toFixed(2) : x.toPrecision(3));
const FIGURE_WORDS: Record<string, string> = { output_throughput_per_gpu: 'tok/s/GPU', energy_per_output_token_j: 'J/token' };
/**
 * The flags as `vllm serve` (and `lm-bench sim run`) take them, so a line can be pasted: rendered by the
 * serve command's own vllmServeArgs, which writes a false boolean as `--no-flag`, never `--flag false`.
 */
const flagsOf = (changed: Readonly<ServerConfig>): string => shellQuote(vllmServeArgs('', changed).slice(2)) || '(vLLM defaults)';
const figText = (f: number | null, unit: string): string => (f === null ? '–' : `${fmt(f)} ${unit}`);

/** The simplified pick against the search's, and the path from vLLM's defaults to it. */
export function explanationLines(a: Explanation): string[] {
  const out: string[] = [];
  const s = a.simplification;
  if (s !== null) {
    const unit = FIGURE_WORDS[s.figure] ?? s.figure;
    const label = s.source === 'simulated' ? 'simulated' : s.source === 'measured' ? 'measured' : 'predicted';
    if (s.reverted.length > 0) {
      out.push(
        '',
        `Simplified: ${s.reverted.length} of the search's ${Object.keys(s.before.changed).length} changed flags made no difference beyond ±${(s.tolerance_rel * 100).toFixed(1)}% (${label}) and are back at vLLM's defaults:`,
        `  search's pick  ${figText(s.before.figure, unit).padStart(14)}  ${flagsOf(s.before.changed)}`,
        `  simplified     ${figText(s.after.figure, unit).padStart(14)}  ${flagsOf(s.after.changed)}`,
      );
    } else out.push('', `Every flag the pick changes matters (each alone back at its default costs more than ±${(s.tolerance_rel * 100).toFixed(1)}%, ${label}).`);
  }
  const at = a.attribution;
  if (at !== null && at.steps.length > 0) {
    const unit = FIGURE_WORDS[at.figure] ?? at.figure;
    const row = (name: string, st: (typeof at.steps)[number]): string =>
      `  ${name.padEnd(40)} ${figText(st.figure, unit).padStart(14)}  ${st.gain_pct === null ? '       ' : `${st.gain_pct >= 0 ? '+' : ''}${st.gain_pct.toFixed(1)}%`.padStart(7)}  p99 TTFT ${st.p99_ttft_ms === null ? '–' : fmt(st.p99_ttft_ms)} ms, ITL ${st.p99_itl_ms === null ? '–' : fmt(st.p99_itl_ms)} ms${st.meets_slo === false ? ', misses the SLOs' : st.meets_slo === null ? ', does not start' : ''} (${st.source ?? '–'})`;
    out.push('', 'Why each flag (from vLLM\'s defaults, one flag a step, the biggest gain first):', row('vLLM defaults', at.defaults), ...at.steps.map((st) => row(`+ ${flagsOf(st.knobs)}`, st)));
  }
  for (const w of a.warnings) out.push('', `Warning: ${w}`);
  return out;
}

