import { FAILURE_CLASS_TEXT } from '../../optimize/failure-classes.js';
import { formatSloString, SLO_STATS, type ServerConfig, type Trial } from '../../domain/index.js';
import type { NearestMiss } from '../../tune/summary.js';
import type { Cell, Section } from '../html.js';
import { escapeHtml } from '../html.js';
import type { Interval } from '../../optimize/recommend.js';
import type { TargetName } from '../../surrogate/targets.js';
import type { StudyAnalysis } from './types.js';
import { bottleneckLabel } from '../../diagnose/text.js';

/**
 * The report's non-plot sections: the answer first (recommended flags, measured and predicted figures,
 * confidence, the comparison with vLLM's defaults), then pruning, failures and the full trial table.
 */
const fmt = (x: number | null | undefined, digits = 0): string => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits));
const iv = (i: Interval | undefined, digits = 0): string => (i === undefined ? '–' : `${fmt(i.mean, digits)} [${fmt(i.low, digits)}, ${fmt(i.high, digits)}]`);

export function configText(c: ServerConfig): string {
  const entries = Object.entries(c).filter(([, v]) => v !== undefined);
  return entries.length === 0 ? '(vLLM defaults)' : entries.map(([k, v]) => `${k}=${String(v)}`).join(' ');
}

/** The latency metrics whose SLO headroom the answer states, in the order it states them. */
const HEADROOM_METRICS = [
  ['ttft', 'TTFT'],
  ['itl', 'ITL'],
  ['tpot', 'TPOT'],
  ['e2el', 'E2EL'],
] as const;

/**
 * When nothing met the SLOs: the configuration that came nearest, how far off, and its command under a
 * heading that says it does not meet them, so it is not pasted as the study's answer.
 */
function nearestMissHtml(n: NearestMiss | null): string {
  if (n === null) return '';
  const text = `${n.text.charAt(0).toUpperCase()}${n.text.slice(1)}.`;
  const wouldMeet = n.would_meet === null ? '' : ` Its figures would meet <code>${escapeHtml(formatSloString(n.would_meet))}</code>.`;
  return `<p><b>Nearest miss:</b> ${escapeHtml(text)}${wouldMeet}</p>
<h3>Command line of the nearest miss — does NOT meet the SLOs</h3><pre class="nearest-miss" style="white-space:pre-wrap;overflow-wrap:anywhere"># does not meet the SLOs: the nearest miss, not a recommendation\n${escapeHtml(n.vllm_command)}</pre>${n.warnings.map((w) => `<p><b>Warning:</b> ${escapeHtml(w)}</p>`).join('')}`;
}

export function answerSection(a: StudyAnalysis): Section {
  const s = a.summary;
  const spec = a.study.spec;
  const rec = s.recommendation;
  const intro = `<p class="meta">${escapeHtml(spec.model)} on ${spec.hardware.count}× ${escapeHtml(spec.hardware.gpu)}, workload <b>${escapeHtml(spec.workload.name)}</b>, SLOs ${escapeHtml(
    Object.entries(spec.slo)
      .filter((e): e is [string, number] => typeof e[1] === 'number')
      .map(([k, v]) => `${k} ≤ ${v}`)
      .join(', ') || 'none',
  )}; target ${escapeHtml(a.targetKind)}; ${s.trials.length} trials (${s.counts.complete} measured, ${s.counts.failed} failed, ${s.counts.feasible} meet the SLOs); stopped: ${escapeHtml(s.stop_reason ?? s.study.state)}.</p>`;
  if (rec === null) {
    return { kind: 'html', title: 'Answer', html: `${intro}<p><b>No measured configuration met the SLOs.</b> Loosen the SLOs, add GPUs, or give the study more trials (\`lm-bench tune --study ${escapeHtml(spec.name)}\` resumes it).</p>${nearestMissHtml(s.nearest_miss ?? null)}` };
  }
  const m = rec.measured;
  const pred = a.model.available ? (a.model.recommendedPredicted?.predicted ?? {}) : {};
  const def = s.trials.find((t) => t.number === rec.vs_default.default_trial);
  const dm = def?.metrics ?? null;
  const slo = spec.slo;
  type Row = [string, number | null, TargetName | null, number | null | undefined, number | undefined, number];
  const rows: Row[] = [
    ['output tok/s per GPU', m.output_throughput_per_gpu, 'output_throughput_per_gpu', dm?.output_throughput_per_gpu, undefined, 0],
    ['output tok/s (all GPUs)', m.output_throughput, 'output_throughput', dm?.output_throughput, undefined, 0],
    ['p99 TTFT (ms)', m.p99_ttft_ms, 'ttft_p99_ms', dm?.p99_ttft_ms, slo.ttft_p99_ms, 0],
    ['p99 ITL (ms)', m.p99_itl_ms, 'itl_p99_ms', dm?.p99_itl_ms, slo.itl_p99_ms, 1],
    ['p99 TPOT (ms)', m.p99_tpot_ms, 'tpot_p99_ms', dm?.p99_tpot_ms, slo.tpot_p99_ms, 1],
    ['p99 E2EL (ms)', m.p99_e2el_ms, 'e2el_p99_ms', dm?.p99_e2el_ms, slo.e2el_p99_ms, 0],
    ['GPU memory reserved (GiB)', m.gpu_memory_reserved_gib, 'gpu_memory_reserved_gib', dm?.gpu_memory_reserved_gib, undefined, 1],
    ['J per output token (all GPUs)', m.energy_per_output_token_j, 'energy_per_output_token_j', dm?.energy_per_output_token_j, undefined, 4],
    ['average power, all GPUs (W)', m.avg_power_w, null, dm?.avg_power_w, undefined, 0],
  ];
  const table = `<table><thead><tr><th>metric</th><th>measured</th><th>predicted (±2σ)</th><th>vLLM defaults${def === undefined ? '' : ` (trial ${def.number})`}</th><th>SLO</th></tr></thead><tbody>${rows
    .map(([name, meas, t, d, limit, digits]) => `<tr><td>${name}</td><td class="num">${fmt(meas, digits)}</td><td class="num">${t === null ? '–' : iv(pred[t], digits)}</td><td class="num">${fmt(d, digits)}</td><td class="num">${limit === undefined ? '–' : `≤ ${limit}`}</td></tr>`)
    .join('')}</tbody></table>`;
  const v = rec.vs_default;
  const energyObjective = rec.objective === 'tokens_per_joule';
  const jChange = v.energy_per_output_token_change_pct;
  const vsEnergy = jChange === null ? '' : ` ${jChange >= 0 ? '+' : ''}${jChange.toFixed(1)}% joules per output token.`;
  const vs =
    v.default_trial === null
      ? 'vLLM’s defaults were not measured in this study.'
      : v.default_meets_slo === true && v.throughput_gain_pct !== null
        ? `<b>${v.throughput_gain_pct >= 0 ? '+' : ''}${v.throughput_gain_pct.toFixed(1)}%</b> output throughput over vLLM’s defaults (trial ${v.default_trial}) on the same workload, both measured;${vsEnergy || ' no energy figure to compare.'}`
        : v.default_meets_slo === false
          ? `vLLM’s defaults (trial ${v.default_trial}) miss the SLOs on this workload${dm === null ? '' : ` (p99 TTFT ${fmt(dm.p99_ttft_ms)} ms, p99 ITL ${fmt(dm.p99_itl_ms, 1)} ms)`}; the recommendation meets them.`
          : `vLLM’s defaults (trial ${v.default_trial}) did not produce a measurement.`;
  const conf: string[] = [];
  // Headroom on every latency limit the SLOs set (a p90 or mean limit too, not only p99: otherwise a study
  // with `ttft_p95_ms` read "no latency SLO set"), each on the mean of that statistic over the pick's runs.
  const runs = a.trials.filter((t) => rec.measurements.includes(t.number) && t.result !== null).map((t) => t.result as NonNullable<Trial['result']>);
  const room = HEADROOM_METRICS.flatMap(([metric, label]) =>
    SLO_STATS.flatMap((stat) => {
      const limit = slo[`${metric}_${stat}_ms`];
      if (limit === undefined || runs.length === 0) return [];
      const value = runs.reduce((sum, r) => sum + r[`${stat}_${metric}_ms`], 0) / runs.length;
      return [`${stat} ${label} ${fmt(value, 1)} ms of ${limit} ms (${fmt((1 - value / limit) * 100)}% headroom)`];
    }),
  );
  const times = rec.measurements.length > 1 ? `Measured ${rec.measurements.length} times (trials ${rec.measurements.join(', ')}; the figures are their mean)` : `Measured once (trial ${rec.trial})`;
  conf.push(`${times}; ${room.length > 0 ? `SLO headroom: ${room.join(', ')}.` : 'no latency SLO set.'}`);
  const noise = `±${(s.noise.rel * 100).toFixed(1)}% run-to-run noise (${s.noise.source === 'repeats' ? `estimated from ${s.noise.dof} repeat(s)` : 'assumed, no repeats'})`;
  if (v.within_noise === true) conf.push(`The gain over vLLM’s defaults${energyObjective ? ' (in joules per token)' : ''} is within the ${noise}: not a measured gain.`);
  if (a.model.available) {
    const e = a.model.mape.output_throughput_per_gpu;
    const method = a.model.parityMethod === 'cross_validation' ? `${a.model.folds}-fold cross-validated` : 'in-sample (too few runs to hold any out)';
    const saved = a.model.savedBy === null ? `model ${a.model.modelId}, from lm-bench surrogate train` : `model ${a.model.modelId}, saved by study “${a.model.savedBy}”`;
    conf.push(`The surrogate (${saved}; ${a.model.measuredRows} measured runs for this GPU and model) has a ${method} throughput error of ${e === undefined ? '–' : `${(e * 100).toFixed(1)}%`}.`);
    const hi = (t: TargetName): number | undefined => pred[t]?.high;
    const risky = ([['ttft_p99_ms', slo.ttft_p99_ms], ['itl_p99_ms', slo.itl_p99_ms], ['tpot_p99_ms', slo.tpot_p99_ms]] as const).filter(([t, lim]) => lim !== undefined && (hi(t) ?? 0) > lim).map(([t]) => t);
    conf.push(risky.length === 0 ? 'The upper ends of its predicted latency intervals stay within the SLOs.' : `The upper end of its predicted interval for ${risky.join(', ')} exceeds the SLO: re-measure before relying on the headroom.`);
    conf.push(a.model.trust.level === 'ok' ? 'Trust: ok.' : `Trust: thin — ${a.model.trust.reasons.join('; ')}.`);
  } else {
    conf.push(`No surrogate: ${a.model.reason}.`);
  }
  const k = rec.precision_keeping;
  const numerics =
    rec.numerics_changes.length === 0
      ? '<p>It keeps the checkpoint’s numerics (no fp8 weights or KV cache).</p>'
      : `<p><b>It changes the model’s numerics:</b> ${escapeHtml(rec.numerics_changes.join(', '))}. ${
          k === null
            ? 'No measured configuration that keeps the checkpoint’s precision met the SLOs (tune with <code>--keep-precision</code> to search only those).'
            : `The best measured configuration that keeps the checkpoint’s precision is trial ${k.trial}: ${fmt(k.measured.output_throughput)} tok/s (${k.throughput_vs_pick_pct.toFixed(1)}% against the pick), p99 TTFT ${fmt(k.measured.p99_ttft_ms)} ms, p99 ITL ${fmt(k.measured.p99_itl_ms, 1)} ms:</p><pre style="white-space:pre-wrap;overflow-wrap:anywhere">${escapeHtml(k.vllm_command)}</pre><p>`
        }</p>`;
  // The study's figure: throughput, or joules per token when it minimised energy.
  const figure = (tput: number, j: number | null): string => (energyObjective ? `${fmt(j, 4)} J/token` : `${fmt(tput)} tok/s`);
  const cost =
    rec.cost === null || rec.cost.usd_per_million_output_tokens === null
      ? ''
      : `<p><b>Cost:</b> $${rec.cost.usd_per_million_output_tokens.toFixed(3)} per million output tokens at its measured goodput ($${rec.cost.usd_per_hour.toFixed(2)}/h for ${spec.hardware.count} GPU${spec.hardware.count === 1 ? '' : 's'}; ${escapeHtml(rec.cost.price_source)}).</p>`;
  const html = `${intro}
${
  rec.tied_with.length === 0
    ? `<p><b>Recommended: trial ${rec.trial}</b> (${escapeHtml(s.trials.find((t) => t.number === rec.trial)?.origin ?? '')}), ${escapeHtml(rec.rule)}, clear of the others beyond the ${escapeHtml(noise)}.</p>`
    : `<p><b>No single winner.</b> Trial ${rec.trial} has the best mean (${figure(m.output_throughput, m.energy_per_output_token_j)}), but ${rec.tied_with.map((t) => `trial ${t.trial} (${figure(t.output_throughput, t.energy_per_output_token_j)}${t.measurements > 1 ? `, ${t.measurements} runs` : ''})`).join(', ')} ${rec.tied_with.length === 1 ? 'is' : 'are'} within the ${escapeHtml(noise)} of it: any of them will do, and more measurements would tell them apart. Trial ${rec.trial}’s configuration is shown. The rule: ${escapeHtml(rec.rule)}.</p>`
}
${cost}
<h3>Command line</h3><pre style="white-space:pre-wrap;overflow-wrap:anywhere">${escapeHtml(rec.vllm_command)}</pre>${rec.warnings.map((w) => `<p><b>Warning:</b> ${escapeHtml(w)}</p>`).join('')}
<h3><code>vllm serve --config config.yaml</code></h3><pre>${escapeHtml(rec.vllm_config_yaml)}</pre>
${numerics}
${table}
<p>${vs}</p>
<p><b>How confident:</b> ${conf.map(escapeHtml).join(' ')}</p>`;
  return { kind: 'html', title: 'Answer', html };
}

export function pruneSection(a: StudyAnalysis): Section {
  const p = a.prune;
  if (p === null) return { kind: 'text', title: 'What the rules pruned', text: 'The study’s search space could not be loaded, so pruning is not reported.' };
  const rows: Cell[][] = p.rules.map((r) => [r.id, r.kind, r.removed, p.points_before > 0 ? `${((r.removed / p.points_before) * 100).toFixed(2)}%` : '–', r.message, r.source]);
  return {
    kind: 'html',
    title: 'What the rules pruned',
    html: `<p>The discretised space of <code>${escapeHtml(p.space)}</code> holds ${p.points_before.toLocaleString('en-US')} configurations for this GPU, model and workload; ${p.points_after.toLocaleString('en-US')} (${p.points_before > 0 ? ((p.points_after / p.points_before) * 100).toFixed(2) : '–'}%) survive the rules. Each removed point counts for the first rule (file order) it breaks.${p.method === 'estimate' ? ` These counts are estimated from ${(p.samples ?? 0).toLocaleString('en-US')} configurations drawn uniformly from the grid: counting every point would have cost too much.` : ''}</p>
<table><thead><tr><th>rule</th><th>kind</th><th>removed</th><th>of the space</th><th>message</th><th>source</th></tr></thead><tbody>${rows
      .map((r) => `<tr>${r.map((c) => (typeof c === 'number' ? `<td class="num">${c.toLocaleString('en-US')}</td>` : `<td>${escapeHtml(String(c ?? '–'))}</td>`)).join('')}</tr>`)
      .join('')}</tbody></table>`,
  };
}

export function failuresSection(a: StudyAnalysis): Section {
  const failed = a.trials.filter((t) => t.state === 'failed' || t.state === 'pruned');
  const title = 'What failed and what we learned from it';
  if (failed.length === 0) return { kind: 'text', title, text: 'No trial failed.' };
  const classOf = new Map(a.summary.trials.map((t) => [t.number, t.failure_class]));
  const rows = failed.map((t) => {
    const cls = classOf.get(t.number) ?? null;
    return [String(t.number), t.origin, t.started === null ? 'unknown' : t.started ? 'yes' : 'no (launch failure)', cls === null ? '–' : FAILURE_CLASS_TEXT[cls], t.failure_reason ?? '–', configText(t.config)];
  });
  const rules = a.summary.failures.rules;
  const learned =
    rules.length === 0
      ? '<p>No rule on the knobs: these failures name no knob (time-outs, crashes, unknown messages), so only the feasibility model learns from them.</p>'
      : `<p>Each failure whose message names its cause became a rule that pruned the space for the rest of the study and for later studies of this deployment:</p><ul>${rules.map((r) => `<li><code>${escapeHtml(r.text)}</code></li>`).join('')}</ul>`;
  return {
    kind: 'html',
    title: `${title} (${failed.length} failed)`,
    html: `${learned}<table><thead><tr><th>trial</th><th>origin</th><th>started</th><th>class</th><th>what the target said</th><th>configuration</th></tr></thead><tbody>${rows
      .map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`)
      .join('')}</tbody></table>`,
  };
}

export function trialTableSection(a: StudyAnalysis): Section {
  const preds = a.model.available ? a.model.trialPredictions : {};
  return {
    kind: 'table',
    title: `All trials (${a.trials.length})`,
    columns: ['trial', 'state', 'origin', 'meets SLOs', 'requests lost', 'bottleneck', 'out tok/s/GPU', 'predicted tok/s/GPU', 'p99 TTFT ms', 'p99 ITL ms', 'p99 TPOT ms', 'memory GiB', 'configuration (as set; the rest at vLLM defaults)'],
    rows: a.summary.trials.map((t): Cell[] => {
      const m = t.metrics;
      const p = preds[t.number]?.output_throughput_per_gpu;
      return [
        t.number,
        t.state,
        t.repeat_of === null ? t.origin : `${t.origin} of ${t.repeat_of}`,
        t.meets_slo === null ? null : t.meets_slo ? 'yes' : 'no',
        t.requests === null ? null : `${t.requests.lost} of ${t.requests.total}`,
        t.diagnosis === null ? null : bottleneckLabel(t.diagnosis),
        m?.output_throughput_per_gpu ?? null,
        p === undefined ? null : iv(p),
        m?.p99_ttft_ms ?? null,
        m?.p99_itl_ms ?? null,
        m?.p99_tpot_ms ?? null,
        m?.gpu_memory_reserved_gib ?? null,
        configText(t.config),
      ];
    }),
  };
}
