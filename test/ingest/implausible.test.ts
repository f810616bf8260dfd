import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ingestBuffer, parseFile } from '../../src/ingest/index.js';
import { openStore } from '../../src/store/index.js';
import { contentBytes, fixtureJson, fixtureText, refuses } from './helpers.js';

/**
 * Figures no tool measures: a negative latency, count or rate, a NaN or negative power, percentiles
 * that fall as the percentile rises. Each file is refused, naming the record and the field, rather
 * than stored as a measurement. The files are real fixtures with one figure changed.
 */
const text = fixtureText;
const json = fixtureJson;
const bytes = contentBytes;

describe('ingest: figures no tool measures are refused', () => {
  it('a negative latency or throughput in a vllm bench serve result (was stored as measured)', () => {
    const r = json('vllm-serve-2025.json');
    refuses('neg-ttft.json', { ...r, mean_ttft_ms: -5 }, /^document: mean_ttft_ms: -5 is negative/);
    refuses('neg-tput.json', { ...r, output_throughput: -3 }, /^document: output_throughput: -3 is negative/);
    refuses('neg-std.json', { ...r, std_itl_ms: -0.5 }, /std_itl_ms: -0\.5 is negative/);
  });

  it('a duration of 0 s for a run that completed requests (was stored, with every derived rate infinite)', () => {
    const r = json('vllm-serve-2025.json');
    refuses('zero.json', { ...r, duration: 0 }, /^document: duration: 0 s with 198 completed requests/);
    // A run where nothing completed may well have taken no time.
    const all = text('vllm-2025/all-failed.json').replace(/"duration": [0-9.]+/, '"duration": 0');
    assert.equal(parseFile('none.json', bytes(all)).runs[0]?.result.duration, 0);
  });

  it('a request rate or burstiness at or below 0 (was stored as the run\'s load)', () => {
    const r = json('vllm-serve-2025.json');
    refuses('rate.json', { ...r, request_rate: -1 }, /request_rate: -1 is not positive/);
    refuses('burst.json', { ...r, burstiness: 0 }, /burstiness: 0 is not positive/);
    refuses('goodput.json', { ...r, request_goodput: -2 }, /request_goodput: -2 is not non-negative/);
  });

  it('a bad figure on one line of a JSON Lines file names that line', () => {
    const lines = text('sglang/llama_3_3_70b_output_online.jsonl').trimEnd().split('\n');
    const third = lines[2] ?? '';
    assert.match(third, /"median_ttft_ms": [0-9.]+/);
    const withValue = (v: string) => [...lines.slice(0, 2), third.replace(/"median_ttft_ms": [0-9.]+/, `"median_ttft_ms": ${v}`), ...lines.slice(3)].join('\n');
    refuses('x.jsonl', withValue('-3'), /^line 3: median_ttft_ms: -3 is negative/);
    // NaN was refused before, but without saying which of the five runs held it.
    refuses('x.jsonl', withValue('NaN'), /^line 3: median_ttft_ms: NaN is not a measurement/);
  });

  it('an lm-bench result with a negative latency, burstiness or concurrency (its schema allows any number)', () => {
    const r = json('lm-bench-result.json');
    refuses('lmb.json', { ...r, p99_ttft_ms: -1 }, /^document: p99_ttft_ms: -1 is negative/);
    refuses('lmb.json', { ...r, burstiness: -1 }, /^document: burstiness: -1 is not positive/);
    refuses('lmb.json', { ...r, max_concurrency: -16 }, /^document: max_concurrency: -16 is not positive/);
  });

  it('ML.ENERGY: a NaN or negative power or J/token is refused, and nothing of the file is stored', () => {
    const name = 'mlenergy/meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat.json';
    const withFirst = (patch: Record<string, unknown>) => {
      const r = json(name) as { configurations: Record<string, unknown>[] };
      r.configurations[0] = { ...r.configurations[0], ...patch };
      return r;
    };
    refuses('m.json', withFirst({ avg_power_watts: -669.2 }), /^configurations\[0\]: avg_power_watts: -669\.2 is not a measurement/);
    refuses('m.json', withFirst({ energy_per_token_joules: -0.1 }), /^configurations\[0\]: energy_per_token_joules: -0\.1 is not a measurement/);
    // Python's json.dump writes a bare NaN; it was stored in the energy block as NaN watts.
    const nan = JSON.stringify(withFirst({ avg_power_watts: 1234.5 })).replace('1234.5', 'NaN');
    refuses('m.json', nan, /^configurations\[0\]: avg_power_watts: NaN is not a measurement/);
    const store = openStore(':memory:');
    const s = ingestBuffer(store, { name: 'm.json', bytes: bytes(nan) });
    assert.deepEqual(s.rejected.map((x) => x.code), ['LMB_ERR_INGEST_REJECTED']);
    assert.equal(store.countRuns(), 0, 'the good second configuration is not stored either');
    store.close();
  });

  it('percentiles that fall as the percentile rises are mislabelled, not measured', () => {
    const r = json('vllm-serve-2025.json');
    assert.equal(r['median_ttft_ms'], 55);
    refuses('p.json', { ...r, p99_ttft_ms: 10 }, /^document: p50_ttft_ms 55 is above p99_ttft_ms 10: a higher percentile cannot be lower/);
    // A table with P99 and median swapped, in a format whose percentiles are read by name.
    const table = JSON.parse(text('vllm-perf-table/01_tp8_pp1/benchmark_results.json')) as Record<string, unknown>[];
    const row = table.findIndex((x) => typeof x['P99 TTFT (ms)'] === 'number' && typeof x['Median TTFT (ms)'] === 'number' && x['P99 TTFT (ms)'] > x['Median TTFT (ms)']);
    assert.ok(row >= 0);
    const swapped = table.map((x, i) => (i === row ? { ...x, 'Median TTFT (ms)': x['P99 TTFT (ms)'], 'P99 TTFT (ms)': x['Median TTFT (ms)'] } : x));
    refuses('benchmark_results.json', swapped, new RegExp(`^rows\\[${row}\\]: p50_ttft_ms .* is above p99_ttft_ms`));
    // Equal percentiles (one request, or a 2-decimal rounding) are fine.
    const one = parseFile('ok.json', bytes({ ...r, p99_ttft_ms: 55, median_ttft_ms: 55 }));
    assert.equal(one.runs[0]?.result.p99_ttft_ms, 55);
  });
});

describe('ingest: units and empty samples', () => {
  it('AIPerf: benchmark_duration in another unit is converted, an unknown unit refused (ns was read as seconds)', () => {
    const name = 'aiperf/v0.10.0-schema1.3/profile_export_aiperf.json';
    const r = json(name) as Record<string, Record<string, unknown>>;
    const sec = r['benchmark_duration']?.['avg'] as number;
    const inUnit = (unit: string, avg: number) => ({ ...r, benchmark_duration: { ...r['benchmark_duration'], unit, avg } });
    const ns = parseFile(name, bytes(inUnit('ns', sec * 1e9))).runs[0];
    assert.ok(Math.abs((ns?.result.duration ?? 0) - sec) < 1e-9, `${String(ns?.result.duration)} s`);
    refuses(name, inUnit('min', sec / 60), /benchmark_duration\.unit "min" is not a time unit/);
  });

  it('GuideLLM: TPOT of a run whose requests produced one token each is unavailable, not a measured 0 ms', () => {
    // The report keeps every request, so the stats are recomputed from them (and were summarised from none).
    const report = json('guidellm-v0.7.json') as { benchmarks: { requests: { successful: Record<string, unknown>[] } }[] };
    for (const b of report.benchmarks) for (const q of b.requests.successful) q['output_tokens'] = 1;
    const run = parseFile('one-token.json', bytes(report)).runs[0];
    assert.ok(run?.meta.unavailable.includes('mean_tpot_ms'), 'mean_tpot_ms unavailable');
    assert.ok(run?.meta.unavailable.includes('p99_tpot_ms'));
    assert.ok(!run?.meta.unavailable.includes('mean_ttft_ms'), 'TTFT is still measured');
    assert.ok(run?.meta.notes.some((n) => n.startsWith('tpot unavailable')));

    // Without the requests, a distribution with count 0 is the same empty sample.
    const v5 = json('guidellm-v0.5.json') as { benchmarks: { metrics: Record<string, { successful: Record<string, unknown> }> }[] };
    const b0 = v5.benchmarks[0];
    assert.ok(b0 !== undefined);
    b0.metrics['inter_token_latency_ms'] = { ...b0.metrics['inter_token_latency_ms'], successful: { mean: 0, median: 0, std_dev: 0, count: 0, total_sum: 0, percentiles: { p50: 0, p90: 0, p95: 0, p99: 0 } } };
    const empty = parseFile('v5.json', bytes(v5)).runs[0];
    assert.ok(empty?.meta.unavailable.includes('mean_tpot_ms'));
  });
});

describe('ingest: a CSV cut off inside its last figure', () => {
  it('is refused, not stored with the figure cut short (778649.65 tokens/s read as 778)', () => {
    const name = 'aiperf/v0.8.0-schema1.0/profile_export_aiperf.csv';
    const whole = text(name);
    assert.match(whole, /Total Token Throughput \(tokens\/sec\),778649\.65\n$/);
    assert.equal(parseFile(name, bytes(whole)).runs[0]?.result.total_token_throughput, 778649.65);
    const cut = whole.slice(0, whole.lastIndexOf('649.65'));
    refuses(name, cut, /profile_export_aiperf\.csv line \d+: the file ends inside a row, with no line break after it/);
    // The same file cut at a row's end is whole rows: read, nothing cut short (the missing throughput is
    // derived from the token totals and the duration, and noted).
    const atRow = whole.slice(0, whole.lastIndexOf('Total Token Throughput'));
    const run = parseFile(name, bytes(atRow)).runs[0];
    assert.ok(run?.meta.notes.some((n) => n.startsWith('total_token_throughput derived')));
  });
});
