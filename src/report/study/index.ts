import { defaultCatalog } from '../../catalog/index.js';
import type { Study } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import type { StudySummary } from '../../tune/summary.js';
import { htmlPage, type Section } from '../html.js';
import { renderSvg } from '../render.js';
import { analyzeStudy, isRandomStudy, type AnalyzeOptions } from './analysis.js';
import { PLOT_TITLES, plotSpec } from './plots.js';
import { answerSection, failuresSection, pruneSection, trialTableSection } from './sections.js';
import { explainSection } from './explain.js';
import { whySection } from './why.js';
import { PLOT_KINDS, type PlotKind, type StudyAnalysis } from './types.js';

/**
 * The deployment report of one study (`lm-bench report`, and the HTTP service's report route): one
 * self-contained HTML page and one SVG per plot. It opens with the answer and then shows why.
 */
export { PLOT_KINDS, isPlotKind, type PlotKind, type StudyAnalysis } from './types.js';
export { analyzeStudy, findBaseline, type AnalyzeOptions } from './analysis.js';
export { plotSpec, PLOT_TITLES, type PlotOutcome } from './plots.js';

export interface StudyReportOptions extends Partial<AnalyzeOptions> {
  /** Inline vega for interactive charts with tooltips (default true). */
  readonly interactive?: boolean;
  /** The "generated at" stamp (ISO text); left out when absent, so output is reproducible. */
  readonly generatedAt?: string;
}

export interface StudyReport {
  readonly html: string;
  /** One SVG per plot that could be drawn. */
  readonly svgs: Partial<Record<PlotKind, string>>;
  /** Why each missing plot is missing. */
  readonly missing: Partial<Record<PlotKind, string>>;
  readonly summary: StudySummary;
}

const MODEL_PLOTS: ReadonlySet<PlotKind> = new Set(['pareto_ttft', 'pareto_itl', 'pareto_energy', 'importance', 'partial_dependence', 'parity']);

function analyzeOptions(opts: Partial<AnalyzeOptions>, extra: Partial<AnalyzeOptions> = {}): AnalyzeOptions {
  return { ...opts, ...extra, catalog: opts.catalog ?? defaultCatalog() };
}

/** What the history's second curve is: a study named with --baseline is described as it is, not as the random search of the same deployment a found one is. */
function baselineText(b: NonNullable<StudyAnalysis['baseline']>): string {
  if (b.random && b.sameDeployment) return `Compared with the random-search study "${b.name}" on the same deployment and SLOs.`;
  const what = [b.random ? null : 'not a random search', b.sameDeployment ? null : 'a different deployment, workload or SLOs'].filter((x): x is string => x !== null);
  return `Compared with study "${b.name}" (${what.join('; ')}): its trials are judged against this study’s SLOs, so its curve is not a random-search baseline of this deployment.`;
}

/** Renders the whole report from an analysis (pure apart from SVG rendering). */
export async function renderReportFromAnalysis(a: StudyAnalysis, opts: Pick<StudyReportOptions, 'interactive' | 'generatedAt'> = {}): Promise<StudyReport> {
  const svgs: Partial<Record<PlotKind, string>> = {};
  const missing: Partial<Record<PlotKind, string>> = {};
  const chart = async (kind: PlotKind, intro?: string): Promise<Section[]> => {
    const p = plotSpec(a, kind);
    const out: Section[] = [];
    if (!p.ok) {
      missing[kind] = p.reason;
      return [{ kind: 'text', title: PLOT_TITLES[kind], text: p.reason }];
    }
    const svg = await renderSvg(p.spec);
    svgs[kind] = svg;
    if (intro !== undefined) out.push({ kind: 'text', title: PLOT_TITLES[kind], text: intro });
    out.push({ kind: 'chart', ...(intro === undefined ? { title: PLOT_TITLES[kind] } : {}), spec: p.spec, svg });
    return out;
  };
  const baselineNote = isRandomStudy(a.trials)
    ? 'This study is itself a random search (the baseline a surrogate-guided study is compared with).'
    : a.baseline === null
      ? 'No random-search study of the same deployment is in the store, so there is no baseline curve (run one with `lm-bench tune --sampler random` under another name).'
      : baselineText(a.baseline);
  const model = a.model;
  const why = explainSection(a);
  const sections: Section[] = [
    answerSection(a),
    ...(why === null ? [] : [why]),
    ...(await chart('pareto_ttft', 'Each filled circle is a measured configuration (the mean of its runs when it was re-measured, as the answer above states it), coloured by the GPU memory it reserved; faint ones are dominated (another has more throughput and less latency). Hollow diamonds are configurations the surrogate predicts on its Pareto set, never measured, with ±2σ intervals on both axes. The dashed red line is the SLO. Hover a point for its full configuration.')),
    ...(await chart('pareto_itl')),
    ...(await chart('pareto_energy', 'The energy axis of the Pareto set: joules per output token of all the deployment’s GPUs (the simulator’s power model, or the power a real run measured) against throughput per GPU, measured and predicted as above. On one deployment the two move together (joules per token are the GPUs’ power over the throughput), so the front is short; where it bends, more throughput costs more power.')),
    ...(await chart('energy_trade', 'Each measured configuration’s joules per output token against its p99 TTFT (the mean of its runs when it was re-measured), coloured by its batch limit (max_num_seqs): a bigger batch spreads each step’s power over more tokens and saves joules, at a latency cost. The dashed line is the TTFT SLO; the ring is the study’s pick under its objective.')),
    ...(await chart('history', baselineNote)),
    ...(await chart(
      'importance',
      model.available
        ? `Permutation importance of the saved surrogate (model ${model.modelId}${model.savedBy === null ? '' : `, saved by study “${model.savedBy}”`}; fitted on ${model.rows} rows of the store’s history for this GPU and model, ${model.measuredRows} measured), ${model.parityMethod === 'cross_validation' ? `on held-out rows of a ${model.folds}-fold split` : 'on its own training rows (the study stopped before its validated model was saved)'}.`
        : undefined,
    )),
    ...(await chart('partial_dependence')),
    ...(await chart('parity')),
    ...(await chart('latency_cdf')),
    whySection(a),
    pruneSection(a),
    failuresSection(a),
    trialTableSection(a),
  ];
  const html = htmlPage({
    title: `lm-bench report: study ${a.study.spec.name}`,
    sections,
    ...(opts.interactive === undefined ? {} : { interactive: opts.interactive }),
    ...(opts.generatedAt === undefined ? {} : { generatedAt: opts.generatedAt }),
  });
  return { html, svgs, missing, summary: a.summary };
}

/** The full report of a study: HTML plus one SVG per plot. */
export async function renderStudyReport(store: Store, studyIdOrName: number | string, opts: StudyReportOptions = {}): Promise<StudyReport> {
  const a = analyzeStudy(store, studyIdOrName, analyzeOptions(opts));
  return renderReportFromAnalysis(a, opts);
}

/**
 * One plot as SVG (the service's plot route). Fits the surrogate only for the plots that need it and
 * re-simulates only for the latency plot. A plot that cannot be drawn throws LMB_ERR_NOT_FOUND with the reason.
 */
export async function renderStudyPlotSvg(store: Store, study: number | string | Study, kind: PlotKind, opts: Partial<AnalyzeOptions> = {}): Promise<string> {
  if (!PLOT_KINDS.includes(kind)) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `unknown plot kind "${String(kind)}" (one of ${PLOT_KINDS.join(', ')})`);
  const ref = typeof study === 'object' ? study.id : study;
  const a = analyzeStudy(store, ref, analyzeOptions(opts, { withModel: MODEL_PLOTS.has(kind), withLatency: kind === 'latency_cdf', withPrune: false }));
  const p = plotSpec(a, kind);
  if (!p.ok) throw new LmBenchError('LMB_ERR_NOT_FOUND', p.reason, { details: { kind } });
  return renderSvg(p.spec);
}
