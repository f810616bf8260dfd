import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { ResultMetric, ResultStat } from '../../src/domain/index.js';
import { benchmarkReport, benchmarkReportYaml } from '../../src/export/llm-d-br.js';
import type { ExportItem } from '../../src/export/types.js';
import { at, BR_FIXTURES, brSchemaErrors, objectAt } from './br-schema.js';
import { buildHistory, stored, type History } from './history.js';

// `export --format llm-d-br`: every report of a real study and of real ingested runs validates against
// llm-d's v0.2 JSON Schema, and every figure in it is the stored one (or absent where lm-bench has none).

let h: History;
before(async () => {
  h = await buildHistory();
});
after(() => h.cleanup());

/** The report as a reader gets it: the YAML text written to disk, parsed back. */
const report = (item: ExportItem): unknown => parse(benchmarkReportYaml(item));
const aggregate = (doc: unknown, ...path: (string | number)[]): unknown => at(doc, 'results', 'request_performance', 'aggregate', ...path);

const LATENCY: readonly [string, ResultMetric, string][] = [
  ['time_to_first_token', 'ttft', 'ms'],
  ['time_per_output_token', 'tpot', 'ms/token'],
  ['inter_token_latency', 'itl', 'ms/token'],
  ['request_latency', 'e2el', 'ms'],
];
/** vLLM's stat → llm-d's Statistics key (vLLM's median is its p50). */
const STAT_NAMES: readonly [ResultStat, string][] = [['mean', 'mean'], ['std', 'stddev'], ['p50', 'p50'], ['p90', 'p90'], ['p95', 'p95'], ['p99', 'p99']];
/** The off-by-default switches vLLM takes as `--flag` alone, with no `--no-` form. */
const SWITCHES = ['enforce_eager', 'async_scheduling', 'enable_expert_parallel'];

/** Every figure the report carries equals the stored one; one the run lacks is absent, never 0. */
function assertFigures(doc: unknown, item: ExportItem): void {
  const completed = stored(item, 'completed') as number | undefined;
  const failed = stored(item, 'failed') as number | undefined;
  if (completed === undefined || failed === undefined) assert.equal(aggregate(doc, 'requests'), undefined, 'no request counts without both counts');
  else {
    assert.equal(aggregate(doc, 'requests', 'total'), completed + failed);
    assert.equal(aggregate(doc, 'requests', 'failures'), failed);
    const tin = stored(item, 'total_input_tokens') as number | undefined;
    assert.equal(aggregate(doc, 'requests', 'input_length', 'mean'), tin === undefined || completed === 0 ? undefined : tin / completed);
  }
  for (const [name, metric, units] of LATENCY) {
    if (stored(item, `mean_${metric}_ms`) === undefined) {
      assert.equal(aggregate(doc, 'latency', name), undefined, `${name}: the source had no mean`);
      continue;
    }
    assert.equal(aggregate(doc, 'latency', name, 'units'), units);
    for (const [s, key] of STAT_NAMES) assert.equal(aggregate(doc, 'latency', name, key), stored(item, `${s}_${metric}_ms`), `${name}.${key}`);
  }
  assert.equal(aggregate(doc, 'throughput', 'output_token_rate', 'mean'), stored(item, 'output_throughput'));
  assert.equal(aggregate(doc, 'throughput', 'output_token_rate', 'max'), stored(item, 'max_output_tokens_per_s'));
  assert.equal(aggregate(doc, 'throughput', 'total_token_rate', 'mean'), stored(item, 'total_token_throughput'));
  assert.equal(aggregate(doc, 'throughput', 'request_rate', 'mean'), stored(item, 'request_throughput'));
  assert.equal(aggregate(doc, 'throughput', 'request_rate', 'units'), 'queries/s');
  const engine = (...p: string[]): unknown => at(doc, 'scenario', 'stack', 0, 'standardized', ...p);
  assert.equal(engine('accelerator', 'model'), item.hardware.gpu);
  assert.equal(engine('accelerator', 'count'), item.hardware.count);
  assert.equal(engine('model', 'name'), 'meta-llama/Llama-3.1-8B-Instruct');
  assert.equal(engine('accelerator', 'parallelism', 'tp'), item.server_config.tensor_parallel_size ?? 1);
  const args = objectAt(doc, 'scenario', 'stack', 0, 'native', 'args');
  // vLLM's flags: `--flag value`; `--flag` / `--no-flag` for booleans; `--quantization none` is its unset.
  for (const [knob, value] of Object.entries(item.server_config)) {
    const flag = `--${knob.replaceAll('_', '-')}`;
    const no = `--no-${knob.replaceAll('_', '-')}`;
    if (value === true) assert.equal(args[flag], null, flag);
    else if (value === false && SWITCHES.includes(knob)) assert.ok(!(flag in args), flag);
    else if (value === false) assert.equal(args[no], null, no);
    else if (knob === 'quantization' && value === 'none') assert.ok(!(flag in args));
    else assert.equal(args[flag], value, flag);
  }
}

describe('export --format llm-d-br', () => {
  it("the validator accepts llm-d's own example and refuses broken reports (controls)", () => {
    const example: unknown = parse(readFileSync(join(BR_FIXTURES, 'br_v0_2_example.yaml'), 'utf8'));
    // JSON Schema has no infinity: the example's `concurrency: .inf` is the one value no validator takes.
    assert.ok(brSchemaErrors(example).some((e) => e.startsWith('/scenario/load/standardized/concurrency')));
    delete objectAt(example, 'scenario', 'load', 'standardized')['concurrency'];
    assert.deepEqual(brSchemaErrors(example), []);
    const broken = (mutate: (doc: unknown) => void): string[] => {
      const doc = structuredClone(example);
      mutate(doc);
      return brSchemaErrors(doc);
    };
    assert.ok(broken((d) => delete objectAt(d, 'run')['uid']).some((e) => e.includes("must have required property 'uid'")));
    assert.ok(broken((d) => delete objectAt(d, 'results', 'request_performance', 'aggregate', 'latency', 'time_to_first_token')['mean']).length > 0, 'a statistic needs its mean');
    assert.ok(broken((d) => (objectAt(d, 'results', 'request_performance', 'aggregate', 'latency', 'time_to_first_token')['units'] = 'fortnights')).length > 0);
    assert.ok(broken((d) => (objectAt(d, 'results', 'request_performance', 'aggregate')['bogus'] = 1)).length > 0, 'aggregate takes no unknown keys');
    assert.ok(broken((d) => (objectAt(d, 'run', 'time')['start'] = 'yesterday')).some((e) => e.includes('date-time')));
  });

  it("a simulated study: each trial's report validates and carries the trial's figures, config, GPU and workload", () => {
    for (const item of h.trials) {
      const doc = report(item);
      assert.deepEqual(brSchemaErrors(doc), []);
      assert.equal(at(doc, 'version'), '0.2');
      assertFigures(doc, item);
      const r = item.result;
      assert.equal(at(doc, 'run', 'time', 'start'), new Date(r.lmb.start_epoch_ms).toISOString());
      assert.equal(at(doc, 'run', 'time', 'duration'), `PT${r.duration}S`);
      assert.match(String(at(doc, 'run', 'description')), /^meta-llama\/Llama-3\.1-8B-Instruct \[lm-bench study exp-study trial \d, simulated\]$/);
      assert.equal(at(doc, 'scenario', 'stack', 0, 'standardized', 'tool'), 'lm-bench-sim', 'a simulated trial says so');
      const load = (...p: string[]): unknown => at(doc, 'scenario', 'load', 'standardized', ...p);
      // small-chat: lognormal lengths (mean 256, std 128, 16–1024 tokens), 32 users in a closed loop.
      assert.deepEqual(load('input_seq_len'), { distribution: 'other', value: 256, std_dev: 128, min: 16, max: 1024 });
      assert.deepEqual(load('output_seq_len'), { distribution: 'other', value: 96, std_dev: 48, min: 8, max: 256 });
      assert.equal(load('concurrency'), 32);
      assert.equal(load('rate_qps'), undefined, 'a closed loop has no rate');
      const energy = r.energy;
      assert.ok(energy !== null && energy !== undefined && energy.avg_power_w !== null && energy.energy_j !== null, 'simulated trials carry power');
      assert.deepEqual(at(doc, 'results', 'observability', 'components'), [{ component_label: 'vllm-0', aggregate: { power_consumption: { units: 'Watts', mean: energy.avg_power_w } } }]);
      assert.equal(at(doc, 'results', 'observability', 'lm_bench_energy', 'energy_per_output_token_j'), energy.energy_per_output_token_j);
      assert.equal(at(doc, 'results', 'observability', 'lm_bench_energy', 'energy_j'), energy.energy_j);
    }
    const [a, b] = h.trials.map(report);
    assert.equal(at(a, 'run', 'eid'), at(b, 'run', 'eid'), "a study's trials share the experiment id");
    assert.notEqual(at(a, 'run', 'uid'), at(b, 'run', 'uid'));
  });

  it('ingested runs: each report validates; what the source lacked is left out, not written as 0', () => {
    for (const item of h.runs) {
      const doc = report(item);
      assert.deepEqual(brSchemaErrors(doc), []);
      assertFigures(doc, item);
      assert.deepEqual(at(doc, 'run', 'keywords'), ['lm-bench', 'ingest']);
      // GuideLLM records when its load began; vLLM and genai-perf files do not.
      if (item.unavailable.includes('lmb.start_epoch_ms')) assert.equal(at(doc, 'run', 'time'), undefined);
      else assert.equal(at(doc, 'run', 'time', 'start'), new Date(item.result.lmb.start_epoch_ms).toISOString());
    }
    assert.ok(h.runs.some((r) => r.unavailable.includes('lmb.start_epoch_ms')) && h.runs.some((r) => !r.unavailable.includes('lmb.start_epoch_ms')), 'both cases were seen');
    const guidellm = h.runs.filter((r) => r.subject.kind === 'run' && r.subject.source_format === 'guidellm');
    assert.equal(guidellm.length, 3);
    for (const item of guidellm) {
      assert.ok(item.unavailable.includes('mean_itl_ms'), 'GuideLLM has no pooled ITL');
      const doc = report(item);
      assert.equal(aggregate(doc, 'latency', 'inter_token_latency'), undefined);
      assert.equal(aggregate(doc, 'throughput', 'output_token_rate', 'max'), undefined, 'nor a peak output rate');
      assert.equal(at(doc, 'scenario', 'load', 'standardized', 'tool'), 'guidellm');
    }
    const vllm = h.runs.find((r) => r.subject.kind === 'run' && r.subject.source_format === 'vllm_bench_serve');
    assert.ok(vllm);
    const doc = report(vllm);
    assert.equal(at(doc, 'scenario', 'load', 'standardized', 'tool'), 'vllm-benchmark', "llm-d's name for vllm bench serve");
    // The workload was reconstructed on ingest: its lengths are the measured means, not a fixed length.
    assert.ok(vllm.workload_derived);
    assert.deepEqual(at(doc, 'scenario', 'load', 'standardized', 'input_seq_len'), { distribution: 'other', value: 100 });
    assert.equal(at(doc, 'scenario', 'load', 'standardized', 'rate_qps'), 4);
    assert.deepEqual(at(doc, 'scenario', 'stack', 0, 'native', 'args'), { '--max-num-seqs': 128, '--enable-prefix-caching': null });
  });

  it('a run with no completed request keeps its counts and leaves every latency out', () => {
    const base = h.trials[0];
    assert.ok(base);
    const doc = benchmarkReport({ ...base, result: { ...base.result, completed: 0, failed: 7 } });
    assert.deepEqual(brSchemaErrors(doc), []);
    assert.deepEqual(aggregate(doc, 'requests'), { total: 7, failures: 7 });
    assert.equal(aggregate(doc, 'latency'), undefined);
  });

  it('a run whose source lacked the token totals and the counts has no load section and no request block', () => {
    const base = h.runs[0];
    assert.ok(base);
    const doc = benchmarkReport({ ...base, workload: null, workload_derived: false, unavailable: [...base.unavailable, 'completed', 'total_input_tokens'] });
    assert.deepEqual(brSchemaErrors(doc), []);
    assert.equal(at(doc, 'scenario', 'load'), undefined, 'the load needs an input length');
    assert.equal(aggregate(doc, 'requests'), undefined);
  });
});
