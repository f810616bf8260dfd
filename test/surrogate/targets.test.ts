import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { Workload } from '../../src/domain/index.js';
import { simulate } from '../../src/sim/index.js';
import { datasetFromObservations } from '../../src/surrogate/dataset.js';
import { QUEUE_TARGETS, saturatedResult, targetsOf, trainingTargetsOf } from '../../src/surrogate/targets.js';
import { encoder } from './fixtures.js';
import { sampleResult } from '../store/samples.js';

const catalog = defaultCatalog();
const saturation = (saturated: boolean) => ({ saturated, offered_rps: 20, sustained_rps: saturated ? 8 : 20, backlog_growth_rps: saturated ? 12 : 0, window_start_s: 30, window_end_s: 60 });

test('a saturated run teaches no queue figures; its throughput and step latencies stay', () => {
  const sat = sampleResult({ saturation: saturation(true) });
  const all = targetsOf(sat, 1);
  const kept = trainingTargetsOf(sat, 1);
  for (const t of QUEUE_TARGETS) {
    assert.ok(all[t] !== undefined, t);
    assert.equal(kept[t], undefined, t);
  }
  assert.equal(kept.output_throughput, all.output_throughput);
  assert.equal(kept.itl_p99_ms, all.itl_p99_ms);
  assert.equal(kept.tpot_p50_ms, all.tpot_p50_ms);
  // A run that kept up, and one with no verdict (closed loop, a foreign file), teach everything.
  assert.deepEqual(trainingTargetsOf(sampleResult({ saturation: saturation(false) }), 1), targetsOf(sampleResult({ saturation: saturation(false) }), 1));
  assert.deepEqual(trainingTargetsOf(sampleResult(), 1), targetsOf(sampleResult(), 1));
  assert.equal(saturatedResult(sampleResult()), false);
});

test('the training set marks a simulated run far above capacity saturated, without its TTFT', () => {
  const workload = (rateRps: number): Workload => ({
    name: `fixed-r${rateRps}`,
    api: 'completions',
    input_len: { dist: 'fixed', value: 512 },
    output_len: { dist: 'fixed', value: 256 },
    arrival: { kind: 'poisson', rate_rps: rateRps },
    num_prompts: 500,
    ignore_eos: true,
  });
  const obs = [200, 10].map((rate) => {
    const out = simulate({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: workload(rate), seed: 3, catalog });
    assert.ok(out.ok);
    return { config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: workload(rate), result: out.result };
  });
  const d = datasetFromObservations(obs, catalog, encoder);
  const [over, easy] = d.rows;
  assert.equal(over?.saturated, true);
  assert.equal(over?.targets.ttft_p99_ms, undefined);
  assert.ok((over?.targets.output_throughput ?? 0) > 0);
  assert.equal(easy?.saturated, false);
  assert.ok((easy?.targets.ttft_p99_ms ?? 0) > 0);
});
