import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestRecord, ServerConfig, Slo, Workload } from '../../src/domain/index.js';
import { simulate } from '../../src/sim/index.js';
import { catalog, fixed } from './helpers.js';

// `sim run` keeps no token times (simulate's keepRecords: false): its figures come from each request's
// first and last token, the replicas' pooled gaps and a per-second token count. They must be the
// figures of the full records to the last bit, on runs that exercise every path: preemption, chunked
// prefill, refused requests, prefix caching, several replicas, an SLO's goodput.

interface Case {
  readonly name: string;
  readonly gpu: string;
  readonly count: number;
  readonly model: string;
  readonly config: ServerConfig;
  readonly workload: Workload;
  readonly slo?: Slo;
}

const cases: Case[] = [
  // A small cache for 1,500-token requests: it fills and preempts.
  { name: 'preempting', gpu: 'H100-SXM', count: 1, model: 'llama-3.1-8b', config: { gpu_memory_utilization: 0.3, max_model_len: 4096 }, workload: fixed(1000, 500, { kind: 'burst' }, 300) },
  {
    name: 'open loop over two replicas, with goodput',
    gpu: 'H100-SXM',
    count: 2,
    model: 'llama-3.2-1b',
    config: { data_parallel_size: 2 },
    workload: { ...fixed(300, 40, { kind: 'poisson', rate_rps: 40 }, 300), output_len: { dist: 'uniform', min: 1, max: 80 } },
    slo: { ttft_p99_ms: 16, tpot_p99_ms: 2.2 },
  },
  {
    name: 'some refused, a prefix pool',
    gpu: 'H100-SXM',
    count: 1,
    model: 'llama-3.2-1b',
    config: { max_model_len: 1024, enable_prefix_caching: true },
    workload: { ...fixed(600, 100, { kind: 'closed', concurrency: 16 }, 200), input_len: { dist: 'uniform', min: 100, max: 1100 }, prompt_pool: { size: 20 } },
  },
];

for (const c of cases) {
  test(`sim keeps no token times and reports the same figures: ${c.name}`, () => {
    const input = { config: c.config, hardware: { gpu: c.gpu, count: c.count }, model: c.model, workload: c.workload, seed: 3, catalog, slo: c.slo, runtimeFailures: false };
    const full = simulate(input);
    const streamed: [number, RequestRecord][] = [];
    const lean = simulate({ ...input, keepRecords: false, onRecord: (r, i) => streamed.push([i, structuredClone(r)]) });
    assert.ok(full.ok && lean.ok);
    assert.equal(lean.records.length, 0);
    // Each record handed out whole, once, as the kept ones read.
    assert.equal(streamed.length, full.records.length);
    const byPosition = new Map(streamed);
    full.records.forEach((r, i) => assert.deepEqual(byPosition.get(i), r));
    // The whole result, metrics and all, bit for bit.
    assert.deepEqual(lean.result, full.result);
    const noRecords = simulate({ ...input, keepRecords: false });
    assert.ok(noRecords.ok);
    assert.deepEqual(noRecords.result, full.result);
  });
}

test('the cases exercise what they are named for', () => {
  const out = cases.map((c) => simulate({ config: c.config, hardware: { gpu: c.gpu, count: c.count }, model: c.model, workload: c.workload, seed: 3, catalog, slo: c.slo, runtimeFailures: false }));
  const [pre, dp, refused] = out;
  assert.ok(pre?.ok && dp?.ok && refused?.ok);
  assert.ok((pre.result.server_metrics?.num_preemptions ?? 0) > 0);
  assert.ok(dp.result.request_goodput !== null && dp.result.request_goodput > 0 && dp.result.request_goodput < dp.result.request_throughput);
  assert.ok(refused.result.failed > 0 && (refused.result.server_metrics?.prefix_cache_hit_rate ?? 0) > 0);
});
