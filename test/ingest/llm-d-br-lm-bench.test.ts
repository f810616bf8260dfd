import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse, stringify } from 'yaml';
import { isLmBenchError } from '../../src/errors.js';
import { parseFile } from '../../src/ingest/parse-file.js';
import { fixtureBytes } from './helpers.js';

// An llm-d report's run time and lm-bench's own blocks: llm-d's harness writes when the experiment began
// (for a report of one stage of several, minutes before that stage's load), so only lm-bench's own
// report, whose run.time.start is the load's start, gives the run a start time; the blocks lm-bench adds
// under results.observability are read back, and a figure out of range in them refuses the file.

const EXAMPLE = 'llm-d-br/br_v0_2_example.yaml';
type Obj = Record<string, unknown>;
const example = (): Obj => parse(new TextDecoder().decode(fixtureBytes(EXAMPLE))) as Obj;
/** The object at a path of the report (the fixture has every one these tests reach). */
const obj = (doc: Obj, ...path: string[]): Obj => path.reduce((o, k) => o[k] as Obj, doc);
const read = (doc: unknown) => parseFile('report.yaml', new TextEncoder().encode(stringify(doc)));

describe('ingest llm-d report: run time and lm-bench blocks', () => {
  it("llm-d's own report (inference-perf stage 3): run.time.start is the experiment's, so the start stays unavailable", () => {
    const run = read(example()).runs[0];
    assert.ok(run);
    assert.ok(run.meta.unavailable.includes('lmb.start_epoch_ms'));
    assert.ok(run.meta.unavailable.includes('date'));
  });

  it("lm-bench's report: run.time.start (with its zone) is the load's start; without a zone it is no instant", () => {
    const doc = example();
    obj(doc, 'run')['keywords'] = ['lm-bench', 'loadgen'];
    const run = read(doc).runs[0];
    assert.ok(run);
    assert.equal(run.result.lmb.start_epoch_ms, Date.parse('2025-11-05T18:00:42Z'));
    // Its date is the run's own, in lm_bench_figures, never one made up from the start.
    assert.ok(run.meta.unavailable.includes('date'));
    obj(doc, 'run', 'time')['start'] = '2025-11-05T18:00:42';
    const local = read(doc).runs[0];
    assert.ok(local?.meta.unavailable.includes('lmb.start_epoch_ms'));
  });

  it('lm_bench_energy, lm_bench_server_metrics and lm_bench_latency are read back; a negative power refuses the file', () => {
    const doc = example();
    const energy = { source: 'nvidia-smi', gpus: 2, avg_power_w: 700, energy_per_output_token_j: 0.2 };
    const observability = obj(doc, 'results', 'observability');
    observability['lm_bench_energy'] = energy;
    observability['lm_bench_server_metrics'] = { kv_cache_usage_peak: 0.5, num_preemptions: 3 };
    // An ITL the source recorded no mean of: in lm-bench's block, not the report's own.
    delete obj(doc, 'results', 'request_performance', 'aggregate', 'latency')['inter_token_latency'];
    observability['lm_bench_latency'] = { inter_token_latency: { units: 's/token', p50: 0.012, p99: 0.05 } };
    const run = read(doc).runs[0];
    assert.ok(run);
    assert.deepEqual(run.result.energy, { ...energy, window: null, energy_j: null, output_tokens_per_joule: null, unavailable_reason: null });
    assert.equal(run.result.server_metrics?.kv_cache_usage_peak, 0.5);
    assert.equal(run.result.server_metrics?.num_preemptions, 3);
    assert.equal(run.result.server_metrics?.prefix_cache_hit_rate, null);
    assert.equal(run.result.p50_itl_ms, 12);
    assert.equal(run.result.p99_itl_ms, 50);
    assert.ok(run.meta.unavailable.includes('mean_itl_ms'));

    observability['lm_bench_energy'] = { ...energy, avg_power_w: -1 };
    assert.throws(() => read(doc), (err: unknown) => isLmBenchError(err, 'LMB_ERR_INGEST_REJECTED') && /lm_bench_energy: avg_power_w/.test(err.message));
  });
});
