import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import { STAT_KEYS } from '../../src/domain/index.js';
import type { ExportReport } from '../../src/export/types.js';
import { openStore, runMetric, type RunRecord } from '../../src/store/index.js';
import { captureIo } from '../helpers/cli.js';
import { startSimServe } from '../helpers/sim-serve.js';
import { SMALL_CHAT_WORKLOAD_YAML } from '../helpers/workloads.js';
import { brSchemaErrors } from './br-schema.js';

// export → ingest → the same figures, for every kind of run a history holds, in both formats, through
// the real CLI, a real loopback server and real SQLite files: a measured run (lm-bench run against
// `sim serve`), a simulated run with energy, a study's simulated trials, and foreign runs with figures
// missing (GuideLLM: no ITL; genai-perf: no failure count; a vllm bench serve file with only mean,
// median and p99 of TTFT and TPOT; ML.ENERGY: ITL percentiles without a mean). What a run lacked stays
// absent: never written, never read back as a figure.

const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'ingest');

/** Every figure of a result `export` carries (vLLM's median is its p50: both are compared). */
const FIGURES = [
  'duration', 'completed', 'failed', 'num_prompts', 'total_input_tokens', 'total_output_tokens', 'request_throughput', 'output_throughput',
  'total_token_throughput', 'max_output_tokens_per_s', 'max_concurrent_requests', ...STAT_KEYS,
]; // prettier-ignore
const SETTINGS = ['request_goodput', 'request_rate', 'burstiness', 'max_concurrency', 'date'] as const;

let dir: string;
let db: string;

async function cli(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo(dir, { HF_HUB_OFFLINE: '1', LMB_DB: join(dir, 'unused.db'), LMB_LOOPBACK_ONLY: '1' });
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

function runs(path: string): RunRecord[] {
  const store = openStore(path, { readonly: true });
  try {
    return store.listRuns({}).sort((a, b) => a.id - b.id);
  } finally {
    store.close();
  }
}

/** A vllm bench serve result cut to what a run asked for `--percentile-metrics ttft,tpot --metric-percentiles 99` keeps. */
function thinVllmResult(): string {
  // Python's json writes an infinite burstiness as the bare word Infinity, which JSON.parse refuses: kept as it was.
  const text = readFileSync(join(FIXTURES, 'vllm-serve-newest.json'), 'utf8').replace(/: Infinity\b/g, ': "<Infinity>"');
  const full = JSON.parse(text) as Record<string, unknown>;
  const kept = Object.entries(full).filter(([k]) => !/_(itl|e2el)_ms$/.test(k) && !/^(std|p90|p95|p99\.9)_/.test(k) && !['latencies', 'queue_times'].includes(k));
  return JSON.stringify(Object.fromEntries(kept)).replaceAll('"<Infinity>"', 'Infinity');
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-export-kinds-'));
  db = join(dir, 'history.db');
  writeFileSync(join(dir, 'small.yaml'), SMALL_CHAT_WORKLOAD_YAML);
  const sim = await cli(['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--input-len', '128', '--output-len', '32', '--concurrency', '4', '--num-prompts', '16', '--json']);
  assert.equal(sim.code, 0, sim.err);
  writeFileSync(join(dir, 'sim.json'), sim.out);
  const server = await startSimServe(['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--speed', '40']);
  try {
    const measured = await cli(['run', '--endpoint', `${server.url}/v1/completions`, '--input-len', '64', '--output-len', '16', '--num-prompts', '12', '--max-concurrency', '3', '--output', 'measured.json']);
    assert.equal(measured.code, 0, measured.err);
  } finally {
    await server.close();
  }
  writeFileSync(join(dir, 'thin-vllm.json'), thinVllmResult());
  const foreign = ['guidellm-v0.5.json', 'profile_export_genai_perf.json', join('mlenergy', 'meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat.json')].map((f) => join(FIXTURES, f));
  const ingest = await cli(['ingest', 'sim.json', 'measured.json', 'thin-vllm.json', ...foreign, '--gpu', 'H100-SXM', '--model', 'llama-3.1-8b', '--set', 'max_num_seqs=64', '--db', db]);
  assert.equal(ingest.code, 0, ingest.out + ingest.err);
  const tune = await cli(['tune', '--study', 'kinds', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'small.yaml', '--target', 'sim', '--budget-trials', '2', '--seed', '3', '--no-report', '--db', db]);
  assert.equal(tune.code, 0, tune.err);
  const sources = runs(db).map((r) => `${r.source_format}/${r.result.lmb.source}`);
  for (const kind of ['lm_bench/sim', 'lm_bench/loadgen', 'vllm_bench_serve/ingest', 'guidellm/ingest', 'genai_perf/ingest', 'mlenergy/ingest']) assert.ok(sources.includes(kind), `the history holds a ${kind} run: ${sources.join(', ')}`);
  assert.ok(runs(db).some((r) => r.result.energy?.energy_j !== undefined && r.result.energy.energy_j !== null), 'and one with energy');
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** The exported file's key back to the stored run: vllm's lm_bench_content_hash, llm-d's run.uid. */
function exportedHash(path: string): string {
  const text = readFileSync(path, 'utf8');
  return path.endsWith('.json') ? ((JSON.parse(text) as { lm_bench_content_hash: string }).lm_bench_content_hash) : ((parse(text) as { run: { uid: string } }).run.uid);
}

/** Exports with `select`, ingests the folder into a new history, and pairs each original with its copy. */
async function roundTrip(format: 'vllm' | 'llm-d-br', select: readonly string[], out: string): Promise<{ pairs: [RunRecord, RunRecord][]; report: ExportReport }> {
  const r = await cli(['export', ...select, '--format', format, '--out', out, '--db', db, '--json']);
  assert.equal(r.code, 0, r.err);
  const report = JSON.parse(r.out) as ExportReport;
  const backDb = join(dir, `${out}.db`);
  const back = await cli(['ingest', out, '--db', backDb, '--json']);
  assert.equal(back.code, 0, back.out + back.err);
  assert.equal((JSON.parse(back.out) as { accepted: number }).accepted, report.files.length, 'every file written is read back');
  const orig = runs(db);
  const copies = runs(backDb);
  const pairs = report.files.map((f): [RunRecord, RunRecord] => {
    const hash = exportedHash(f.path);
    const a = orig.find((x) => x.content_hash === hash);
    const b = copies.find((x) => x.source_path === f.path);
    assert.ok(a !== undefined && b !== undefined, f.path);
    return [a, b];
  });
  return { pairs, report };
}

function assertSameRun(a: RunRecord, b: RunRecord, label: string): void {
  const what = `${label}: run ${a.id} (${a.source_format}, ${a.result.lmb.source})`;
  for (const key of FIGURES) assert.equal(runMetric(b, key), runMetric(a, key), `${what} ${key}`);
  // A figure the source lacked is not one in the copy either (a 0 or a derived value would read as measured).
  for (const key of FIGURES) assert.equal(b.meta.unavailable.includes(key), a.meta.unavailable.includes(key), `${what} ${key} available in both or neither`);
  const setting = (r: RunRecord, key: (typeof SETTINGS)[number]): unknown => (r.meta.unavailable.includes(key) ? undefined : r.result[key]);
  for (const key of SETTINGS) assert.deepEqual(setting(b, key), setting(a, key), `${what} ${key}`);
  const queue = (r: RunRecord, key: 'mean_client_queue_ms' | 'p99_client_queue_ms'): number | undefined => (r.meta.unavailable.includes(`lmb.${key}`) || r.result.max_concurrency === null ? undefined : r.result.lmb[key]);
  for (const key of ['mean_client_queue_ms', 'p99_client_queue_ms'] as const) assert.equal(queue(b, key), queue(a, key), `${what} ${key}`);
  const start = (r: RunRecord): number | null => (r.meta.unavailable.includes('lmb.start_epoch_ms') ? null : r.result.lmb.start_epoch_ms);
  assert.equal(start(b), start(a), `${what} start`);
  assert.deepEqual(b.result.energy ?? null, a.result.energy ?? null, `${what} energy`);
  assert.deepEqual(b.result.server_metrics, a.result.server_metrics, `${what} server peaks`);
  assert.equal(b.result.lmb.source === 'sim', a.result.lmb.source === 'sim', `${what}: a simulation stays one, a measurement stays measured`);
  assert.deepEqual([b.hardware, b.model], [a.hardware, a.model], `${what} deployment`);
}

describe('export → ingest of every kind of run the history holds', () => {
  it('--format vllm: measured, simulated with energy, and thin foreign runs come back with the same figures; ML.ENERGY is skipped', async () => {
    const { pairs, report } = await roundTrip('vllm', ['--runs', 'all'], 'v-all');
    assert.deepEqual(report.skipped.map((s) => ('run_id' in s ? s.source_format : s.state)), ['mlenergy', 'mlenergy']);
    assert.equal(pairs.length, runs(db).length - 2);
    for (const [a, b] of pairs) assertSameRun(a, b, 'vllm');
    // Units: vLLM's latencies are ms and its duration s, so no request outlasts the run.
    for (const f of report.files) {
      const doc = JSON.parse(readFileSync(f.path, 'utf8')) as Record<string, number>;
      if (doc['p99_e2el_ms'] !== undefined) assert.ok(doc['p99_e2el_ms'] / 1000 <= (doc['duration'] as number) * 1.0001, `${f.path}: e2el in ms within a duration in s`);
      if (doc['mean_ttft_ms'] !== undefined && doc['mean_e2el_ms'] !== undefined) assert.ok(doc['mean_ttft_ms'] <= doc['mean_e2el_ms'], f.path);
    }
  });

  it('--format llm-d-br: every run, ML.ENERGY included, comes back with the same figures, in ms as its units say', async () => {
    const { pairs, report } = await roundTrip('llm-d-br', ['--runs', 'all'], 'br-all');
    assert.deepEqual(report.skipped, []);
    assert.equal(pairs.length, runs(db).length);
    for (const [a, b] of pairs) assertSameRun(a, b, 'llm-d-br');
    for (const f of report.files) {
      const doc = parse(readFileSync(f.path, 'utf8')) as { run: { time?: { start: string; end?: string } }; results: { request_performance: { aggregate: { latency?: Record<string, { units: string; mean: number }> } } } };
      assert.deepEqual(brSchemaErrors(doc), [], f.path);
      const latency = doc.results.request_performance.aggregate.latency ?? {};
      for (const [name, block] of Object.entries(latency)) assert.equal(block.units, name === 'time_to_first_token' || name === 'request_latency' ? 'ms' : 'ms/token', `${f.path} ${name}`);
      const [a] = pairs.find(([, b]) => b.source_path === f.path) ?? [];
      assert.ok(a !== undefined);
      const e2el = runMetric(a, 'mean_e2el_ms');
      if (e2el !== null) assert.equal(latency['request_latency']?.mean, e2el, `${f.path}: the stored milliseconds, not converted`);
      const duration = runMetric(a, 'duration');
      // RFC 3339 times hold whole milliseconds: the window is the duration within one.
      if (doc.run.time?.end !== undefined && duration !== null) assert.ok(Math.abs(Date.parse(doc.run.time.end) - Date.parse(doc.run.time.start) - duration * 1000) <= 1, `${f.path}: the load window is the duration in s`);
    }
  });

  it('a figure a source lacked is written in neither format: GuideLLM’s ITL, genai-perf’s failures, the thin file’s p90 and ITL', () => {
    const orig = runs(db);
    const of = (format: string): RunRecord[] => orig.filter((r) => r.source_format === format);
    const thin = orig.find((r) => r.source_path?.endsWith('thin-vllm.json'));
    assert.ok(thin !== undefined && of('guidellm').length > 0 && of('genai_perf').length === 1);
    assert.ok(thin.meta.unavailable.includes('p90_ttft_ms') && thin.meta.unavailable.includes('mean_itl_ms'), 'the thin file lacks p90 and ITL');
    const vllm = (r: RunRecord): Record<string, unknown> => JSON.parse(readFileSync(join(dir, 'v-all', `run-${r.id}.json`), 'utf8')) as Record<string, unknown>;
    const br = (r: RunRecord): string => readFileSync(join(dir, 'br-all', `benchmark_report_v0.2,_run-${r.id}.yaml`), 'utf8');
    for (const r of of('guidellm')) {
      assert.ok(!Object.keys(vllm(r)).some((k) => k.endsWith('_itl_ms')), `run ${r.id}: no ITL key`);
      assert.doesNotMatch(br(r), /inter_token_latency/, `run ${r.id}: no ITL block`);
    }
    const genai = of('genai_perf')[0] as RunRecord;
    assert.ok(genai.meta.unavailable.includes('failed'));
    assert.ok(!('failed' in vllm(genai)));
    const genaiBr = parse(br(genai)) as { results: { request_performance: { aggregate: Record<string, unknown> }; observability: { lm_bench_figures: Record<string, unknown> } } };
    assert.equal(genaiBr.results.request_performance.aggregate['requests'], undefined, 'no request total without a failure count');
    assert.ok(!('failed' in genaiBr.results.observability.lm_bench_figures));
    const thinDoc = vllm(thin);
    for (const k of ['p90_ttft_ms', 'p95_ttft_ms', 'std_ttft_ms', 'mean_itl_ms', 'mean_e2el_ms']) assert.ok(!(k in thinDoc), `thin: ${k} left out`);
    assert.equal(thinDoc['p99_ttft_ms'], runMetric(thin, 'p99_ttft_ms'));
  });

  it('a study’s simulated trials, in either format, come back as the simulations they were', async () => {
    for (const format of ['vllm', 'llm-d-br'] as const) {
      const { pairs, report } = await roundTrip(format, ['--study', 'kinds'], `study-${format}`);
      assert.equal(report.files.length, 2, format);
      assert.deepEqual(report.files.map((f) => f.trial), [0, 1]);
      for (const [a, b] of pairs) {
        assertSameRun(a, b, `${format} study`);
        assert.equal(b.result.lmb.source, 'sim');
      }
    }
  });
});
