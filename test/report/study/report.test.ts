import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { command } from '../../../src/cli/commands/report.js';
import { isLmBenchError } from '../../../src/errors.js';
import { PLOT_KINDS, analyzeStudy, renderReportFromAnalysis, renderStudyPlotSvg, renderStudyReport } from '../../../src/report/study/index.js';
import { defaultCatalog } from '../../../src/catalog/index.js';
import { makeFixture } from './fixture.js';
import { assertWellFormed, marks } from './svg.js';
import { plotSpec } from '../../../src/report/study/plots.js';

/**
 * The whole report from a real study in SQLite: SVG marks, the HTML's content, the one-plot API and the
 * CLI. The full study is analysed once (the surrogate's k-fold fits are most of the cost) and shared.
 */
const full = (async () => {
  const fx = await makeFixture();
  const a = analyzeStudy(fx.store, 'fx', { catalog: defaultCatalog() });
  const report = await renderReportFromAnalysis(a, { generatedAt: 'now' });
  fx.store.close();
  return { a, report };
})();

test('the study report: every plot drawn, with the expected marks', { timeout: 60_000 }, async () => {
  const { a, report } = await full;
  assert.deepEqual(Object.keys(report.svgs).sort(), [...PLOT_KINDS].sort());
  for (const svg of Object.values(report.svgs)) assertWellFormed(svg);
  assert.ok(a.model.available, 'the fixture has enough runs for a surrogate');
  if (!a.model.available) return;

  const measured = a.trials.filter((x) => x.state === 'complete');
  const ttft = report.svgs.pareto_ttft ?? '';
  assert.equal(marks(ttft, 'measured').length, measured.length, 'one circle per measured trial');
  assert.equal(marks(ttft, 'predicted').length, a.model.predictedFront.length);
  assert.ok(a.model.predictedFront.length > 0);
  assert.equal(marks(ttft, 'interval_x').length, a.model.predictedFront.length);
  assert.equal(marks(ttft, 'recommended').length, 1);
  assert.equal(marks(ttft, 'slo').length, 1, 'the TTFT SLO line');
  const faint = marks(ttft, 'measured').filter((m) => /opacity="0.25"/.test(m)).length;
  assert.ok(faint > 0 && faint < measured.length, 'some points dominated, some not');
  // The tooltip fields (the full configuration) are in each point's accessible label too.
  assert.ok(marks(ttft, 'measured').every((m) => m.includes('max_num_seqs: ') && m.includes('kv_cache_dtype: ')));
  assert.equal(marks(report.svgs.pareto_itl ?? '', 'measured').length, measured.length);

  // The energy axis: every simulated trial carries J/token, so each is a point, and the pick is ringed;
  // the trade plot has one point per trial, the TTFT SLO line and the pick with its rule's words.
  assert.ok(measured.every((x) => (x.result?.energy?.energy_per_output_token_j ?? 0) > 0));
  const energy = report.svgs.pareto_energy ?? '';
  assert.equal(marks(energy, 'measured').length, measured.length);
  assert.equal(marks(energy, 'recommended').length, 1);
  assert.equal(marks(energy, 'slo').length, 0, 'no SLO on the energy axis');
  assert.match(energy, /joules per output token/);
  const trade = report.svgs.energy_trade ?? '';
  assert.equal(marks(trade, 'trials').length, measured.length);
  assert.equal(marks(trade, 'recommended').length, 1);
  assert.equal(marks(trade, 'slo').length, 1, 'the TTFT SLO line');
  assert.match(trade, /picked: most throughput per GPU/);

  const history = report.svgs.history ?? '';
  assert.equal(marks(history, 'best_goodput').length, 2, 'the study and its random-search baseline');
  assert.equal(marks(report.svgs.importance ?? '', 'bars').length, Object.keys(a.model.importance).length);
  assert.equal(a.model.partialDependence.length, 3);
  for (let i = 0; i < 3; i++) assert.equal(marks(report.svgs.partial_dependence ?? '', `pd_line_${i}`).length, 1);
  const parityPoints = [0, 1, 2].reduce((n, i) => n + marks(report.svgs.parity ?? '', `parity_points_${i}`).length, 0);
  assert.equal(parityPoints, a.model.parity.length);
  assert.equal(a.model.parityMethod, 'cross_validation');
  assert.equal(a.latency.length, 4, 'three best feasible trials and the defaults');
  assert.ok(a.latency.every((s) => s.source === 'sim_records'));
  assert.equal(marks(report.svgs.latency_cdf ?? '', 'cdf_ttft').length, 4);
  assert.equal(marks(report.svgs.latency_cdf ?? '', 'slo_ttft').length, 1, 'the TTFT SLO on its CDF');
});

test('report.html opens with the answer and holds the why, with nothing fetched from the network', { timeout: 60_000 }, async () => {
  const { html, summary } = (await full).report;
  const rec = summary.recommendation;
  assert.ok(rec !== null);
  const at = (s: string): number => {
    const i = html.indexOf(s);
    assert.ok(i >= 0, `report has ${s}`);
    return i;
  };
  const answer = at('<h2>Answer</h2>');
  assert.ok(answer < at('Pareto front: throughput vs p99 TTFT') && at('Pareto front: throughput vs p99 TTFT') < at('What the rules pruned'));
  at(rec.vllm_command.slice(0, 60));
  at('max-num-seqs: ');
  at('How confident:');
  at('vLLM defaults (trial 0)');
  at('C12: ValueError: No available memory for the cache blocks');
  at('Compared with the random-search study &quot;fx-random&quot;');
  at('<th>rule</th>');
  // Why configurations fell short: each measured trial that missed or saturated, with its class and what to try.
  const why = at('<h2>Why configurations fell short</h2>');
  assert.ok(why < at('What the rules pruned'));
  const short = summary.trials.filter((t) => t.diagnosis !== null && t.diagnosis.bottleneck !== 'none');
  assert.ok(short.length > 0, 'the fixture has trials that missed the SLOs');
  at(`${short.length} of ${summary.trials.filter((t) => t.diagnosis !== null).length} measured trials missed the SLOs or saturated`);
  at('The measured Pareto set: what limits each member');
  at('<th>bottleneck</th>');
  assert.ok(summary.trials.every((t) => (t.state === 'complete') === (t.diagnosis?.source === 'simulated')), 'sim trials are diagnosed from the simulator');
  assert.equal((html.match(/<div class="chart"/g) ?? []).length, PLOT_KINDS.length);
  assert.doesNotMatch(html, /<(script|img|link|iframe)[^>]+(src|href)\s*=\s*["']?(https?:)?\/\//i, 'no external resources');
  assert.match(html, /vegaEmbed/);
});

test('“Why these flags”: the pick simplified within the study’s noise, and the path from vLLM’s measured defaults', { timeout: 60_000 }, async () => {
  const { a, report } = await full;
  const x = a.explanation;
  assert.ok(x !== null && x.simplification !== null && x.attribution !== null);
  const s = x.simplification;
  const before = Object.keys(s.before.changed);
  assert.ok(Object.keys(s.after.changed).every((k) => before.includes(k)), 'the simplified pick sets only flags the pick set');
  assert.equal(s.tolerance_rel, a.summary.noise.rel, 'the tolerance is the study’s run-to-run noise');
  assert.ok((s.after.figure ?? 0) >= (s.before.figure ?? 0) * (1 - s.tolerance_rel) - 1e-9 && s.after.meets_slo);
  // The study measured vLLM's defaults (trial 0): the path starts from that measurement.
  assert.equal(x.attribution.defaults.source, 'measured');
  const trial0 = a.summary.trials.find((t) => t.origin === 'default');
  assert.equal(x.attribution.defaults.figure, trial0?.metrics?.output_throughput_per_gpu);
  assert.deepEqual(x.attribution.steps.flatMap((st) => Object.keys(st.knobs)).sort(), Object.keys(s.after.changed).sort());
  // Knobs are plotted over values this one-GPU deployment can take.
  if (a.model.available) for (const pd of a.model.partialDependence) if (pd.knob === 'tensor_parallel_size' || pd.knob === 'data_parallel_size') assert.deepEqual(pd.points.map((p) => p.value), [1]);
  const html = report.html;
  const why = html.indexOf('<h2>Why these flags</h2>');
  assert.ok(why > html.indexOf('<h2>Answer</h2>') && why < html.indexOf('Pareto front: throughput vs p99 TTFT'));
  assert.ok(html.includes('From vLLM’s defaults to the pick, one flag a step'));
});

test('an all-zero importance is not drawn: the report says the surrogate cannot rank the knobs and points to the attribution', { timeout: 60_000 }, async () => {
  const { a } = await full;
  assert.ok(a.model.available);
  if (!a.model.available) return;
  const flat = { ...a, model: { ...a.model, importance: Object.fromEntries(Object.keys(a.model.importance).map((k) => [k, 0])), partialDependence: [] } };
  for (const kind of ['importance', 'partial_dependence'] as const) {
    const out = plotSpec(flat, kind);
    assert.equal(out.ok, false, kind);
    if (!out.ok) assert.match(out.reason, /cannot rank the knobs.*Why these flags/);
  }
  assert.equal(plotSpec(a, 'importance').ok, true, 'the fixture’s own surrogate ranks them');
});

test('a --baseline study that is not a random search of this deployment is not called one', { timeout: 60_000 }, async () => {
  const { a, report } = await full;
  assert.ok(a.baseline !== null && a.baseline.random && a.baseline.sameDeployment, 'the fixture’s own baseline is found in the store');
  assert.match(report.html, /Compared with the random-search study &quot;fx-random&quot; on the same deployment and SLOs/);
  const other = await renderReportFromAnalysis({ ...a, baseline: { ...a.baseline, name: 'guided', random: false, sameDeployment: false } }, { interactive: false });
  assert.doesNotMatch(other.html, /random-search study &quot;guided&quot;|same deployment and SLOs/);
  assert.match(other.html, /Compared with study &quot;guided&quot; \(not a random search; a different deployment, workload or SLOs\)/);
  assert.doesNotMatch(other.svgs.history ?? '', /guided \(random search\)/);
});

/** A study too small for a surrogate (4 measured runs), shared by the tests below. */
const thin = await makeFixture({ trials: 3, baseline: false });

test('without enough history the report says there is no model instead of plotting', { timeout: 60_000 }, async () => {
  const fx = thin;
  const report = await renderStudyReport(fx.store, 'fx', { interactive: false });
  for (const k of ['importance', 'partial_dependence', 'parity'] as const) {
    assert.equal(report.svgs[k], undefined);
    assert.match(report.missing[k] ?? '', /No model-based plot: no saved surrogate covers llama-3\.1-8b on H100-SXM: the store held fewer than 8 measured runs/);
  }
  assert.equal(marks(report.svgs.pareto_ttft ?? '', 'predicted').length, 0);
  assert.equal(marks(report.svgs.pareto_ttft ?? '', 'measured').length, 4);
  assert.match(report.html, /No model-based plot/);
  assert.match(report.html, /no baseline curve/);
  assert.doesNotMatch(report.html, /vegaEmbed/, 'static page: no libraries');
});

test('renderStudyPlotSvg draws one plot and refuses what it cannot draw', { timeout: 60_000 }, async () => {
  const fx = thin;
  const svg = await renderStudyPlotSvg(fx.store, 'fx', 'history');
  assertWellFormed(svg);
  assert.equal(marks(svg, 'best_goodput').length, 1);
  await assert.rejects(renderStudyPlotSvg(fx.store, fx.store.getStudy('fx'), 'parity'), (e: unknown) => isLmBenchError(e, 'LMB_ERR_NOT_FOUND'));
  await assert.rejects(renderStudyPlotSvg(fx.store, 'fx', 'nope' as never), (e: unknown) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT'));
  await assert.rejects(renderStudyPlotSvg(fx.store, 'missing', 'history'), (e: unknown) => isLmBenchError(e, 'LMB_ERR_STUDY_NOT_FOUND'));
});

function sink(): Writable & { text: () => string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(c: Buffer, _e, cb) {
      chunks.push(c.toString());
      cb();
    },
  }) as Writable & { text: () => string };
  w.text = () => chunks.join('');
  return w;
}

test('lm-bench report writes report.html and one SVG per plot', { timeout: 60_000 }, async (t) => {
  const fx = thin;
  t.after(() => fx.store.close());
  const db = join(fx.dir, 'db.sqlite');
  const stdout = sink();
  const stderr = sink();
  const code = await command.run(['--study', 'fx', '--out', 'out', '--db', db, '--json'], { stdout, stderr, env: {}, cwd: fx.dir });
  t.diagnostic(stderr.text());
  assert.equal(code, 0);
  const out = JSON.parse(stdout.text()) as { files: string[]; missing: Record<string, string>; recommendation: { trial: number } | null };
  assert.ok(existsSync(join(fx.dir, 'out', 'report.html')));
  assert.deepEqual(out.files.map((f) => f.slice(join(fx.dir, 'out').length + 1)).sort(), ['energy_trade.svg', 'history.svg', 'latency_cdf.svg', 'pareto_energy.svg', 'pareto_itl.svg', 'pareto_ttft.svg', 'report.html']);
  assert.deepEqual(Object.keys(out.missing).sort(), ['importance', 'parity', 'partial_dependence']);
  assert.match(readFileSync(join(fx.dir, 'out', 'pareto_ttft.svg'), 'utf8'), /^<svg/);
  await assert.rejects(command.run(['--out', 'x', '--db', db], { stdout, stderr, env: {}, cwd: fx.dir }), (e: unknown) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT'));
});
