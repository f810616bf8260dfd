import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { BenchmarkResult, ServerConfig, StudySpec, Trial } from '../../src/domain/index.js';
import { main } from '../../src/cli/main.js';
import { TuneJson } from '../../src/cli/json-output.js';
import { ServiceConfig } from '../../src/http/config.js';
import { StudyDetail } from '../../src/http/schemas.js';
import { startServer } from '../../src/http/server.js';
import { valuesFromResult } from '../../src/optimize/study.js';
import { analyzeStudy } from '../../src/report/study/analysis.js';
import { answerSection } from '../../src/report/study/sections.js';
import { simulate } from '../../src/sim/index.js';
import { openStore } from '../../src/store/index.js';
import { formatSummary, NearestMiss, summarizeStudy, type StudySummary } from '../../src/tune/summary.js';
import { trialInputOf } from '../../src/tune/study-runner.js';
import { specOf } from '../report/study/fixture.js';
import { TOKEN } from '../http/helpers.js';
import { captureIo } from '../helpers/cli.js';
import { SMALL_CHAT_WORKLOAD_YAML } from '../helpers/workloads.js';

// A study no trial of which met the SLOs names the one that came nearest (the worst SLO's measured ÷
// limit), in the text summary, the service's study summary (and so `tune --json`) and the HTML report,
// its `vllm serve` line marked as not meeting the SLOs. Real simulated runs in a real SQLite file.

const catalog = defaultCatalog();
let dir: string;
let db: string;

const CONFIGS: ServerConfig[] = [{}, { max_num_seqs: 32 }, { max_num_seqs: 64, max_num_batched_tokens: 4096 }, { max_num_seqs: 8 }];

/** A study of the configurations above, each simulated; `tweak` may change a trial's result before it is stored. */
function seedStudy(name: string, slo: StudySpec['slo'], tweak: (n: number, r: BenchmarkResult) => BenchmarkResult = (_n, r) => r): void {
  const base = specOf(name);
  const spec: StudySpec = { ...base, workload: { ...base.workload, num_prompts: 40 }, slo };
  const store = openStore(db);
  try {
    const study = store.createStudy(spec);
    CONFIGS.forEach((config, i) => {
      const trial = store.createTrial(study.id, { config, origin: i === 0 ? 'default' : 'space_filling', state: 'running' });
      const input = trialInputOf(spec, trial);
      const out = simulate({ config, hardware: input.hardware, model: input.model, workload: input.workload, seed: input.seed, catalog });
      assert.ok(out.ok, JSON.stringify(config));
      const result = tweak(trial.number, out.result);
      store.completeTrial(trial.id, { values: valuesFromResult(result, spec.objectives, spec.slo, spec.hardware.count), result });
    });
    store.setStudyState(study.id, 'done');
  } finally {
    store.close();
  }
}

function summaryOf(name: string): { summary: StudySummary; trials: Trial[] } {
  const store = openStore(db, { readonly: true });
  try {
    const study = store.getStudy(name);
    const trials = store.listTrials(study.id);
    return { summary: summarizeStudy({ study, trials, front: [], model: catalog.model(study.spec.model), hardware: catalog.gpu(study.spec.hardware.gpu), stopReason: 'budget', prices: null }), trials };
  } finally {
    store.close();
  }
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-nearest-miss-'));
  db = join(dir, 'history.db');
  // p99 TTFT under 1 ms is out of reach; ITL's limit is loose, so it is met.
  seedStudy('unreachable', { ttft_p99_ms: 1, itl_p99_ms: 10_000 });
  seedStudy('reachable', { ttft_p99_ms: 600_000 });
  // The trial with the lowest p99 TTFT saturated: it is ranked after every run that kept up.
  const ttfts = summaryOf('unreachable').trials.map((t) => [t.number, t.result?.p99_ttft_ms ?? Infinity] as const);
  const lowest = [...ttfts].sort((a, b) => a[1] - b[1])[0]?.[0];
  seedStudy('saturated', { ttft_p99_ms: 1, itl_p99_ms: 10_000 }, (n, r) =>
    n === lowest ? { ...r, saturation: { saturated: true, offered_rps: 10, sustained_rps: 5, backlog_growth_rps: 5, window_start_s: 0, window_end_s: 10 } } : r,
  );
  // The same trial lost half its requests: more than a p99 limit allows (1%).
  seedStudy('lossy', { ttft_p99_ms: 1, itl_p99_ms: 10_000 }, (n, r) => (n === lowest ? { ...r, failed: r.completed } : r));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('the nearest miss of a study nothing of which met the SLOs', () => {
  it('names the trial whose worst SLO came nearest its limit, how far off, and the limits it met', () => {
    const { summary, trials } = summaryOf('unreachable');
    assert.equal(summary.recommendation, null);
    assert.equal(summary.counts.feasible, 0);
    const n = summary.nearest_miss;
    assert.ok(n !== null);
    NearestMiss.parse(n);
    const best = [...trials].sort((a, b) => (a.result?.p99_ttft_ms ?? Infinity) - (b.result?.p99_ttft_ms ?? Infinity))[0] as Trial;
    const ttft = best.result?.p99_ttft_ms as number;
    assert.equal(n.trial, best.number);
    assert.deepEqual(n.config, best.config);
    assert.equal(n.meets_slo, false);
    assert.ok(Math.abs((n.worst_ratio ?? 0) - ttft / 1) < 1e-9, `${n.worst_ratio} vs ${ttft}`);
    assert.deepEqual(n.checks.map((c) => [c.slo, c.met]), [['ttft_p99_ms', false], ['itl_p99_ms', true]]);
    assert.equal(n.would_meet?.itl_p99_ms, 10_000);
    assert.ok((n.would_meet?.ttft_p99_ms ?? 0) >= ttft);
    assert.match(n.text, new RegExp(`^trial ${best.number} came nearest: p99 TTFT ${ttft >= 100 ? ttft.toFixed(0) : ttft.toFixed(1)} ms against 1 ms \\(\\d+×\\); p99 ITL met \\(`));
    assert.match(n.vllm_command, /^vllm serve /);
  });

  it('the text summary says it, with its command marked as not meeting the SLOs', () => {
    const { summary } = summaryOf('unreachable');
    const n = summary.nearest_miss as NearestMiss;
    const lines = formatSummary(summary).split('\n');
    const at = lines.findIndex((l) => l.startsWith(`Trial ${n.trial} came nearest: p99 TTFT`));
    assert.ok(at > 0, lines.join('\n'));
    assert.match(lines[at - 1] ?? '', /^No measured configuration met the SLOs/);
    const cmd = lines.indexOf(`  ${n.vllm_command}`);
    assert.ok(cmd > at, lines.join('\n'));
    assert.match(lines[cmd - 1] ?? '', /does NOT meet the SLOs/);
  });

  it('a saturated run is ranked after every run that kept up, whatever its percentiles', () => {
    const plain = summaryOf('unreachable').summary.nearest_miss as NearestMiss;
    const n = summaryOf('saturated').summary.nearest_miss as NearestMiss;
    assert.notEqual(n.trial, plain.trial, 'the saturated trial had the lowest TTFT and is not named');
    assert.equal(n.saturated, false);
    assert.ok((n.worst_ratio ?? 0) > (plain.worst_ratio ?? 0));
  });

  it('a run that lost more requests than the SLOs allow is ranked after every run that did not', () => {
    const plain = summaryOf('unreachable').summary.nearest_miss as NearestMiss;
    const n = summaryOf('lossy').summary.nearest_miss as NearestMiss;
    assert.notEqual(n.trial, plain.trial, 'the lossy trial had the lowest TTFT and is not named');
    assert.deepEqual(n.lost_breaks, []);
    assert.ok((n.worst_ratio ?? 0) > (plain.worst_ratio ?? 0));
  });

  it('a study with a pick has no nearest miss', () => {
    const { summary } = summaryOf('reachable');
    assert.ok(summary.recommendation !== null);
    assert.equal(summary.nearest_miss, null);
    assert.doesNotMatch(formatSummary(summary), /came nearest/);
  });

  it('the HTML report names it and heads its command as not meeting the SLOs', () => {
    const store = openStore(db, { readonly: true });
    try {
      const a = analyzeStudy(store, 'unreachable', { catalog, withModel: false, withLatency: false, withPrune: false, withExplanation: false });
      const section = answerSection(a);
      assert.equal(section.kind, 'html');
      const html = section.kind === 'html' ? section.html : '';
      const n = a.summary.nearest_miss as NearestMiss;
      assert.match(html, new RegExp(`<b>Nearest miss:</b> Trial ${n.trial} came nearest: p99 TTFT`));
      assert.match(html, /<h3>Command line of the nearest miss — does NOT meet the SLOs<\/h3><pre class="nearest-miss"[^>]*># does not meet the SLOs[^\n]*\nvllm serve /);
    } finally {
      store.close();
    }
  });

  it("the service's study summary carries it, as its schema declares", { timeout: 120_000 }, async (t) => {
    const server = await startServer({ config: ServiceConfig.parse({ host: '127.0.0.1', port: 0 }), dbPath: db, env: { LMB_API_TOKEN: TOKEN }, logger: false, signals: false });
    t.after(() => server.close());
    const res = await request(`${server.url}/v1/studies/unreachable`);
    const text = await res.body.text();
    assert.equal(res.statusCode, 200, text);
    const body = StudyDetail.strict().parse(JSON.parse(text));
    const direct = summaryOf('unreachable').summary.nearest_miss as NearestMiss;
    assert.equal(body.nearest_miss?.trial, direct.trial);
    assert.equal(body.nearest_miss?.meets_slo, false);
    assert.equal(body.nearest_miss?.vllm_command, direct.vllm_command);
    assert.equal(body.recommendation, null);
  });

  it('`tune --json` carries it, as its schema declares, beside the null recommendation', { timeout: 300_000 }, async () => {
    writeFileSync(join(dir, 'small.yaml'), SMALL_CHAT_WORKLOAD_YAML);
    const io = captureIo(dir, { HF_HUB_OFFLINE: '1', LMB_DB: join(dir, 'unused.db') });
    const args = ['tune', '--study', 'cli-unreachable', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'small.yaml', '--target', 'sim', '--slo', 'ttft_p99_ms=1', '--budget-trials', '2', '--no-report', '--db', join(dir, 'cli.db'), '--json'];
    assert.equal(await main(args, io), 0, io.err());
    const out = TuneJson.strict().parse(JSON.parse(io.out()));
    assert.equal(out.recommendation, null);
    const n = out.nearest_miss;
    assert.ok(n !== null && n !== undefined);
    const measured = out.trials.filter((t) => t.metrics !== null);
    assert.ok(measured.length > 0);
    assert.ok(measured.some((t) => t.number === n.trial));
    // Its configuration has the study's lowest p99 TTFT (the one limit set; the mean of its measurements).
    for (const t of measured.filter((x) => !n.measurements.includes(x.number))) assert.ok((t.metrics?.p99_ttft_ms ?? 0) >= n.measured.p99_ttft_ms, `trial ${t.number}`);
    assert.match(n.text, new RegExp(`^trial ${n.trial} came nearest`));
    assert.equal(n.meets_slo, false);
  });
});
