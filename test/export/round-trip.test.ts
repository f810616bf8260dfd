import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import { STAT_KEYS } from '../../src/domain/index.js';
import type { ExportReport } from '../../src/export/types.js';
import { openStore, runMetric, type RunRecord } from '../../src/store/index.js';
import { captureIo } from '../helpers/cli.js';
import { brSchemaErrors } from './br-schema.js';

// export → ingest, through the real CLI and real SQLite files, for the runs whose figures go beyond
// vLLM's key set: a simulated run (energy, server peaks, a wall-clock start, `lmb.source` sim) and
// ML.ENERGY windows (power and J/token, no counts, no duration). A figure measured comes back; one the
// source lacked is neither written nor invented.

const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'ingest');
const MLENERGY = join(FIXTURES, 'mlenergy', 'meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat.json');

let dir: string;
let db: string;

async function cli(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo(dir, { HF_HUB_OFFLINE: '1', LMB_DB: join(dir, 'unused.db') });
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

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-export-rt-'));
  db = join(dir, 'history.db');
  const sim = await cli(['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--input-len', '256', '--output-len', '64', '--concurrency', '8', '--num-prompts', '40', '--json']);
  assert.equal(sim.code, 0, sim.err);
  writeFileSync(join(dir, 'sim.json'), sim.out);
  const ingest = await cli(['ingest', join(dir, 'sim.json'), MLENERGY, join(FIXTURES, 'vllm-serve-newest.json'), '--set', 'max_num_seqs=64', '--gpu', 'H100-SXM', '--model', 'llama-3.1-8b', '--db', db]);
  assert.equal(ingest.code, 0, ingest.out + ingest.err);
  const stored = runs(db);
  assert.deepEqual(stored.map((r) => r.source_format), ['lm_bench', 'mlenergy', 'mlenergy', 'vllm_bench_serve']);
  assert.equal(stored[0]?.result.lmb.source, 'sim');
  assert.ok(stored[0]?.result.energy?.energy_j, 'the simulated run has energy');
  assert.ok(stored[0]?.result.server_metrics !== null, 'and server peaks');
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('export → ingest round trip', () => {
  it('--format vllm skips the ML.ENERGY windows (no duration, no counts) with the reason; every file written is read back', async () => {
    const r = await cli(['export', '--runs', 'all', '--format', 'vllm', '--out', 'v', '--db', db, '--json']);
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(r.out) as ExportReport;
    assert.deepEqual(report.files.map((f) => f.run_id), [1, 4]);
    assert.deepEqual(
      report.skipped.map((s) => ('run_id' in s ? [s.run_id, s.source_format] : null)),
      [
        [2, 'mlenergy'],
        [3, 'mlenergy'],
      ],
    );
    for (const s of report.skipped) assert.match(s.reason, /duration, completed, total_input_tokens, total_output_tokens, request_throughput/);
    assert.equal(existsSync(join(dir, 'v', 'run-2.json')), false, 'no file vLLM would never write');
    assert.equal((JSON.parse(readFileSync(join(dir, 'v', 'summary.json'), 'utf8')) as unknown[]).length, 2);

    const backDb = join(dir, 'back-v.db');
    const back = await cli(['ingest', 'v', '--db', backDb, '--json']);
    assert.equal(back.code, 0, back.out + back.err);
    assert.equal((JSON.parse(back.out) as { accepted: number }).accepted, 2);
    // What vLLM has no key for comes back too: the simulation stays one, with its energy, peaks and start.
    const [a, b] = [runs(db)[0], runs(backDb).find((r) => r.source_path?.endsWith('run-1.json'))];
    assert.ok(a !== undefined && b !== undefined);
    assert.equal(b.result.lmb.source, 'sim');
    assert.deepEqual(b.result.energy, a.result.energy);
    assert.deepEqual(b.result.server_metrics, a.result.server_metrics);
    assert.equal(b.result.lmb.start_epoch_ms, a.result.lmb.start_epoch_ms);
    assert.ok(!b.meta.unavailable.includes('lmb.start_epoch_ms'));
    assert.equal(b.content_hash, a.content_hash, "stored under the run's own dedupe key");

    const text = await cli(['export', '--runs', 'all', '--format', 'vllm', '--out', 'v2', '--db', db]);
    assert.match(text.out, /skipped run 2 \(mlenergy\): its source did not record duration/);
  });

  it('--format vllm of nothing but ML.ENERGY windows: refused, nothing written', async () => {
    const r = await cli(['export', '--runs', 'source_format=mlenergy', '--format', 'vllm', '--out', 'none', '--db', db]);
    assert.equal(r.code, 2);
    assert.match(r.err, /LMB_ERR_INVALID_ARGUMENT: nothing to write as `vllm bench serve` result JSON: run 2 \(mlenergy\)/);
    assert.equal(existsSync(join(dir, 'none')), false);
  });

  it('--format llm-d-br: energy, server peaks, start time, token totals, percentiles without a mean and a simulation come back as stored', async () => {
    const r = await cli(['export', '--runs', 'all', '--format', 'llm-d-br', '--out', 'br', '--db', db, '--json']);
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(r.out) as ExportReport;
    assert.equal(report.files.length, 4);
    for (const f of report.files) assert.deepEqual(brSchemaErrors(parse(readFileSync(f.path, 'utf8'))), [], f.path);
    const backDb = join(dir, 'back-br.db');
    const back = await cli(['ingest', 'br', '--db', backDb, '--json']);
    assert.equal(back.code, 0, back.out + back.err);
    const summary = JSON.parse(back.out) as { files: { path: string; run_ids: number[] }[] };
    const copies = runs(backDb);
    const orig = runs(db);
    for (const f of report.files) {
      const a = orig.find((x) => x.id === f.run_id);
      const id = summary.files.find((x) => x.path === f.path)?.run_ids[0];
      const b = copies.find((x) => x.id === id);
      assert.ok(a !== undefined && b !== undefined, f.path);
      assert.deepEqual(b.result.energy ?? null, a.result.energy ?? null, `run ${a.id} energy`);
      assert.deepEqual(b.result.server_metrics, a.result.server_metrics, `run ${a.id} server peaks`);
      assert.equal(runMetric(b, 'total_input_tokens'), runMetric(a, 'total_input_tokens'), `run ${a.id} input tokens`);
      // Every figure exactly (not duration re-derived from a rate), and every latency statistic, ML.ENERGY's
      // ITL percentiles (no mean) included; vLLM's median is its p50.
      const keys = ['completed', 'failed', 'duration', 'total_output_tokens', 'request_throughput', 'output_throughput', 'max_output_tokens_per_s', 'max_concurrent_requests'];
      for (const key of [...keys, ...STAT_KEYS.filter((k) => !k.startsWith('median_'))]) assert.equal(runMetric(b, key), runMetric(a, key), `run ${a.id} ${key}`);
      const setting = (r: RunRecord, key: 'request_goodput' | 'request_rate' | 'burstiness' | 'max_concurrency' | 'date'): unknown => (r.meta.unavailable.includes(key) ? undefined : r.result[key]);
      for (const key of ['request_goodput', 'request_rate', 'burstiness', 'max_concurrency', 'date'] as const) assert.deepEqual(setting(b, key), setting(a, key), `run ${a.id} ${key}`);
      assert.equal(b.result.lmb.source, a.result.lmb.source === 'sim' ? 'sim' : 'ingest', `run ${a.id} source`);
      const start = (r: RunRecord): number | null => (r.meta.unavailable.includes('lmb.start_epoch_ms') ? null : r.result.lmb.start_epoch_ms);
      assert.equal(start(b), start(a), `run ${a.id} start`);
      if (start(a) !== null) assert.equal(b.result.date, a.result.date, `run ${a.id} date`);
    }
    // The ML.ENERGY window's J/token (it states no energy total) is in the report, not only its power.
    const ml = parse(readFileSync(join(dir, 'br', 'benchmark_report_v0.2,_run-2.yaml'), 'utf8')) as { results: { observability: { lm_bench_energy: { energy_per_output_token_j: number } } } };
    assert.equal(ml.results.observability.lm_bench_energy.energy_per_output_token_j, orig[1]?.result.energy?.energy_per_output_token_j);
    assert.ok(readdirSync(join(dir, 'br')).every((n) => n.endsWith('.yaml')));
  });

  it('an export ingested into the history it came from is recognised as the runs it holds, in either format', async () => {
    for (const format of ['vllm', 'llm-d-br']) {
      const out = `again-${format}`;
      const r = await cli(['export', '--runs', 'all', '--format', format, '--out', out, '--db', db]);
      assert.equal(r.code, 0, r.err);
      const back = await cli(['ingest', out, '--db', db, '--json']);
      assert.equal(back.code, 0, back.out + back.err);
      const summary = JSON.parse(back.out) as { accepted: number; skipped: number; files: { stored: { run_id: number | null }[] }[] };
      assert.equal(summary.accepted, 0, `${format}: nothing stored twice`);
      assert.equal(summary.skipped, format === 'vllm' ? 2 : 4);
      // Each is reported with the id it has in the history, whatever format it was first ingested from.
      assert.ok(summary.files.every((f) => f.stored.every((x) => x.run_id !== null)), format);
    }
    assert.equal(runs(db).length, 4);
  });
});
