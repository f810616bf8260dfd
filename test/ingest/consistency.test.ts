import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseFile, ingestBuffer } from '../../src/ingest/index.js';
import { openStore } from '../../src/store/index.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { contentBytes, fixtureJson, fixtureText, refuses, NIGHTLY_DIR } from './helpers.js';

/**
 * Figures of one file that contradict each other under the tool's own definition (vLLM: request_throughput
 * = completed / duration, …), and figures beyond anything a run measures (a TTFT of 1e300 ms). Each file
 * is refused naming the fields and values; a file rounded as tools and people round is still read. The
 * files are real fixtures with one figure changed.
 */
const text = fixtureText;
const json = fixtureJson;
const bytes = contentBytes;

describe('ingest: rates that contradict the tool\'s own definition', () => {
  // vllm-serve-2025.json: 198 completed over 25.5 s (7.76 req/s), 50688 + 25344 tokens (993.9 and 2981.6 tok/s).
  const r = json('vllm-serve-2025.json');

  it('vllm bench serve: request_throughput ≠ completed / duration is refused, naming both (was stored as written)', () => {
    refuses('rt.json', { ...r, request_throughput: 1.94 }, /^document: request_throughput 1\.94 contradicts completed 198 \/ duration 25\.5 s = 7\.76471: vllm bench serve defines request_throughput as completed \/ duration/);
    refuses('ot.json', { ...r, output_throughput: 1987.8 }, /^document: output_throughput 1987\.8 contradicts total_output_tokens 25344 \/ duration 25\.5 s/);
    refuses('tt.json', { ...r, total_token_throughput: 298.16 }, /^document: total_token_throughput 298\.16 contradicts \(total_input_tokens 50688 \+ total_output_tokens 25344\) \/ duration 25\.5 s/);
    // A duration in ms where seconds belong makes every rate contradict it.
    refuses('ms.json', { ...r, duration: 25500 }, /request_throughput 7\.76 contradicts completed 198 \/ duration 25500 s/);
    // Nothing of the file is stored.
    const store = openStore(':memory:');
    const s = ingestBuffer(store, { name: 'rt.json', bytes: bytes({ ...r, request_throughput: 1.94 }) }, { serverConfig: {}, gpu: 'H100-SXM' });
    assert.deepEqual(s.rejected.map((x) => x.code), ['LMB_ERR_INGEST_REJECTED']);
    assert.equal(store.countRuns(), 0);
    store.close();
  });

  it('vllm bench serve: figures in full precision or rounded as written (7.76, 0.21) are read', () => {
    const full = parseFile('full.json', bytes({ ...r, duration: 25.51234567891, request_throughput: 198 / 25.51234567891, output_throughput: 25344 / 25.51234567891, total_token_throughput: 76032 / 25.51234567891 }));
    assert.equal(full.runs[0]?.result.request_throughput, 198 / 25.51234567891);
    // vLLM's console rounds to 2 decimals; a file copied from it compares as the intervals the figures stand for.
    const console = parseFile('console.json', bytes({ ...r, duration: 150.87, completed: 32, total_input_tokens: 65536, total_output_tokens: 65536, request_throughput: 0.21, output_throughput: 434.4, total_token_throughput: 868.8 }));
    assert.equal(console.runs[0]?.result.request_throughput, 0.21);
    // Off by one unit of its last decimal is no longer rounding.
    refuses('off.json', { ...r, duration: 150.87, completed: 32, total_input_tokens: 65536, total_output_tokens: 65536, request_throughput: 0.22, output_throughput: 434.4, total_token_throughput: 868.8 }, /request_throughput 0\.22 contradicts completed 32/);
  });

  it('a JSON Lines record that contradicts itself is named by its line', () => {
    const line = JSON.stringify(r);
    refuses('a.jsonl', `${line}\n${JSON.stringify({ ...r, request_throughput: 3.88 })}\n`, /^line 2: request_throughput 3\.88 contradicts completed 198/);
  });

  it('an lm-bench export in vLLM\'s format keeps the figures its source tool measured (a GuideLLM mean of rates)', () => {
    // GuideLLM's requests_per_second is a mean over the run, not completed / duration: the export says whose figures they are.
    const exported = { ...r, request_throughput: 7.5, lm_bench_source: 'ingest', lm_bench_content_hash: 'a'.repeat(64) };
    assert.equal(parseFile('export.json', bytes(exported)).runs[0]?.result.request_throughput, 7.5);
  });

  it('SGLang bench_serving: a written request or total throughput is held to completed / duration', () => {
    const lines = text('sglang/llama_3_3_70b_output_online.jsonl').trimEnd().split('\n');
    const first = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    const { duration, completed, total_input_tokens: inTok, total_output_tokens: outTok } = first as Record<string, number>;
    assert.ok(duration !== undefined && completed !== undefined && inTok !== undefined && outTok !== undefined);
    const ok = { ...first, request_throughput: completed / duration, total_throughput: (inTok + outTok) / duration };
    assert.equal(parseFile('ok.jsonl', bytes(`${JSON.stringify(ok)}\n`)).runs[0]?.result.request_throughput, completed / duration);
    refuses('rt.jsonl', `${JSON.stringify({ ...ok, request_throughput: (2 * completed) / duration })}\n`, /^document: request_throughput .* contradicts completed 300 \/ duration .*: SGLang bench_serving defines request_throughput/);
    refuses('tt.jsonl', `${JSON.stringify({ ...ok, total_throughput: outTok / duration })}\n`, /^document: total_throughput .* contradicts \(total_input_tokens .* \+ total_output_tokens .*\) \/ duration/);
    // Its output throughput, written by every version.
    refuses('ot.jsonl', `${JSON.stringify({ ...first, output_throughput: (2 * outTok) / duration })}\n`, /^document: output_throughput .* contradicts total_output_tokens/);
  });

  it('AIPerf: request_throughput is the valid request count / benchmark_duration', () => {
    const name = 'aiperf/v0.1.1-records/profile_export_aiperf.json';
    const a = json(name) as { records: Record<string, Record<string, unknown>> };
    const rt = a.records['request_throughput'];
    assert.ok(rt !== undefined);
    a.records['request_throughput'] = { ...rt, avg: 2 * (rt['avg'] as number) };
    refuses(name, a, /^document: request_throughput 19\.1032.* contradicts request_count 89 \/ benchmark_duration 9\.317788951 s = 9\.55162: AIPerf defines request_throughput as request_count \/ benchmark_duration/);
  });
});

describe('ingest: figures beyond anything a run measures', () => {
  const r = json('vllm-serve-2025.json');

  it('a latency beyond a week, a throughput of 10¹⁸ tokens/s, a duration beyond a year (were stored as measured)', () => {
    refuses('ttft.json', { ...r, mean_ttft_ms: 1e300 }, /^document: mean_ttft_ms: 1e\+300 is beyond a week \(in ms\)/);
    refuses('ttft.json', { ...r, p99_e2el_ms: 7 * 24 * 3600 * 1000 + 1 }, /^document: p99_e2el_ms: 604800001 is beyond a week/);
    refuses('tput.json', { ...r, max_output_tokens_per_s: 1e18 }, /^document: max_output_tokens_per_s: 1000000000000000000 is beyond 10¹⁰ tokens\/s/);
    refuses('dur.json', { ...r, duration: 1e12, request_throughput: 198e-12, output_throughput: 25344e-12, total_token_throughput: 76032e-12 }, /^document: duration: 1000000000000 is beyond a year/);
    refuses('neg.json', { ...r, duration: -25.5 }, /^document: duration: -25\.5 is negative/);
    // A latency of six days is long, but measurable.
    assert.equal(parseFile('slow.json', bytes({ ...r, mean_e2el_ms: 6 * 24 * 3600 * 1000 })).runs[0]?.result.mean_e2el_ms, 518_400_000);
  });

  it('the same bounds hold for lm-bench\'s own result files', () => {
    const lmb = json('lm-bench-result.json');
    refuses('lmb.json', { ...lmb, mean_ttft_ms: 1e300 }, /^document: mean_ttft_ms: 1e\+300 is beyond a week/);
    refuses('lmb.json', { ...lmb, output_throughput: 1e18 }, /^document: output_throughput: 1000000000000000000 is beyond 10¹⁰ tokens\/s/);
  });

  it('-0 is 0, kept as written', () => {
    const run = parseFile('z.json', bytes(JSON.stringify({ ...r, std_itl_ms: 0 }).replace('"std_itl_ms":0', '"std_itl_ms":-0'))).runs[0];
    assert.ok(Object.is(run?.result.std_itl_ms, -0));
  });
});

describe('ingest: the client\'s queue wait', () => {
  it('a negative or non-finite mean_client_queue_time_ms is refused (was stored in the lmb block as measured)', () => {
    const r = json('vllm-serve-2025.json');
    refuses('q.json', { ...r, mean_client_queue_time_ms: -4 }, /^document: mean_client_queue_time_ms: -4 is negative/);
    refuses('q.json', JSON.stringify({ ...r, p99_client_queue_time_ms: 1 }).replace('"p99_client_queue_time_ms":1', '"p99_client_queue_time_ms":NaN'), /^document: p99_client_queue_time_ms: NaN is not a measurement/);
    assert.equal(parseFile('q.json', bytes({ ...r, mean_client_queue_time_ms: 4 })).runs[0]?.result.lmb.mean_client_queue_ms, 4);
  });
});

describe('ingest: vLLM\'s benchmark tables, which state no duration', () => {
  it('a nightly row whose request and output rates imply different durations is refused, naming the columns (was stored)', () => {
    const name = '2024-08-23_18-47-20_vllm_055_nightly_results.json';
    const rows = JSON.parse(readFileSync(join(NIGHTLY_DIR, name), 'utf8')) as Record<string, unknown>[];
    const first = rows[0] ?? {};
    // 500 requests at 1.9218 req/s and 106724 tokens at 410.2 tok/s: both 260.17 s, read as is.
    assert.equal(parseFile(name, bytes(rows)).runs[0]?.result.completed, first['Successful req.']);
    const edited = rows.map((r, i) => (i === 0 ? { ...r, 'Output Tput (tok/s)': 2 * (r['Output Tput (tok/s)'] as number) } : r));
    refuses(name, edited, /^rows\[0\]: Tput \(req\/s\) 1\.92\d* with Successful req\. 500 imply a run of 260\.17\d* s, Output Tput \(tok\/s\) 820\.4\d* with Total output tokens 106724 one of 130\.08\d* s: vLLM measures both rates over the same duration/);
  });

  it('a 2025 table row with token totals is held to the same duration (rounded figures read)', () => {
    const name = 'vllm-perf-table/01_tp8_pp1/benchmark_results.json';
    const rows = json(name) as unknown as Record<string, unknown>[];
    // 200 requests at 0.97 req/s (0.965–0.975 as written: 205–207 s); 42720 output tokens at 208.18 tok/s is 205.2 s.
    const withTotals = rows.map((r, i) => (i === 0 ? { ...r, 'Tput (req/s)': 0.97, 'Output Tput (tok/s)': 208.18, 'Total output tokens': 42720 } : r));
    assert.equal(parseFile('benchmark_results.json', bytes(withTotals)).runs[0]?.result.total_output_tokens, 42720);
    const wrong = rows.map((r, i) => (i === 0 ? { ...r, 'Tput (req/s)': 0.97, 'Output Tput (tok/s)': 208.18, 'Total output tokens': 4272 } : r));
    refuses('benchmark_results.json', wrong, /^rows\[0\]: Tput \(req\/s\) 0\.97 with # of req\. 200 imply a run of 206\.186 s, Output Tput \(tok\/s\) 208\.18 with Total output tokens 4272 one of 20\.5207 s/);
  });
});

describe('ingest: a median and a p50 under linear percentiles', () => {
  it('a vllm bench serve file whose median_ttft_ms and p50_ttft_ms differ is refused (was stored with both)', () => {
    const r = json('vllm-serve-2025.json');
    assert.equal(r['median_ttft_ms'], 55);
    refuses('m.json', { ...r, p50_ttft_ms: 70 }, /^document: median_ttft_ms 55 and p50_ttft_ms 70 differ: with linear percentiles the median is the 50th percentile/);
    // The same figure under both names (vLLM with --metric-percentiles 50), or rounded alike, is read.
    assert.equal(parseFile('m.json', bytes({ ...r, p50_ttft_ms: 55.004 })).runs[0]?.result.p50_ttft_ms, 55.004);
  });
});

describe('ingest: inference-perf with benchmark_time_seconds', () => {
  it('requests_per_sec is successes.count / benchmark_time_seconds; a report that contradicts it is refused', () => {
    const name = 'inference-perf/llm-d-yaml/inference_perf_lifecycle.yaml';
    const report = parseYaml(text(name)) as { benchmark_time_seconds: number; successes: { count: number; throughput: Record<string, number> } };
    // 3 successes over 2.48 s: 1.2097 req/s, as written.
    assert.equal(parseFile('r.json', bytes(report)).runs[0]?.result.request_throughput, report.successes.throughput['requests_per_sec']);
    report.benchmark_time_seconds = 24.8;
    refuses('r.json', report, /^document: successes\.throughput\.requests_per_sec 1\.2096774193548387 contradicts successes\.count 3 \/ benchmark_time_seconds 24\.8 s = 0\.120968: inference-perf defines/);
  });
});
