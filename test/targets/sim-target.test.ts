import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Workload, type ServerConfig, type Slo } from '../../src/domain/index.js';
import { simulate } from '../../src/sim/index.js';
import { createSimTarget } from '../../src/targets/sim-target.js';
import type { TrialInput } from '../../src/targets/types.js';
import { readTraceFile, traceName, traceWorkload } from '../../src/trace/index.js';
import { catalog, fixed, workloadFile } from '../sim/helpers.js';

/**
 * A sim trial keeps no token's time (simulate's keepRecords: false): what a tuning study stores of it is
 * its result, and the result (figures, lost requests and their errors, the evidence and the diagnosis)
 * must be the one the full records give, bit for bit, on trials that exercise what a study reads.
 */
const dir = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));
const mooncake = readTraceFile(`${dir}mooncake-conversation-head300.jsonl`, 'mooncake-conversation-head300.jsonl');
const sessions = Workload.parse({ ...traceWorkload(mooncake, traceName(mooncake), { name: 'mc', embed: true, speed: 0.25 }).workload, num_prompts: 80 });

interface Case {
  readonly name: string;
  readonly model: string;
  readonly count: number;
  readonly config: ServerConfig;
  readonly workload: Workload;
  readonly slo: Slo;
}

const cases: Case[] = [
  { name: 'chat under SLOs it breaks', model: 'llama-3.1-8b', count: 1, config: {}, workload: { ...workloadFile('chat'), num_prompts: 120 }, slo: { ttft_p99_ms: 1, itl_p99_ms: 50 } },
  // An open loop past what one small cache sustains: preemption, a saturated queue, the diagnosis of it.
  { name: 'saturated open loop', model: 'llama-3.1-8b', count: 1, config: { gpu_memory_utilization: 0.3, max_model_len: 4096 }, workload: fixed(1000, 300, { kind: 'poisson', rate_rps: 60 }, 300), slo: { ttft_p99_ms: 500 } },
  // Requests longer than the context are refused: lost requests, with vLLM's error text.
  { name: 'some refused', model: 'llama-3.2-1b', count: 1, config: { max_model_len: 1024 }, workload: { ...fixed(600, 100, { kind: 'closed', concurrency: 16 }, 200), input_len: { dist: 'uniform', min: 100, max: 1400 } }, slo: {} },
  { name: 'a trace with shared prefixes over two replicas', model: 'llama-3.2-1b', count: 2, config: { data_parallel_size: 2, enable_prefix_caching: true, max_model_len: 131072 }, workload: sessions, slo: { ttft_p99_ms: 200 } },
];

for (const c of cases) {
  test(`a sim trial's result is the full records' result: ${c.name}`, async () => {
    const startMs = 1_760_000_000_000;
    const input: TrialInput = { trial_id: 1, study: 's', seed: 11, config: c.config, workload: c.workload, hardware: { gpu: 'H100-SXM', count: c.count }, model: c.model, slo: c.slo };
    const out = await createSimTarget({ catalog, now: () => startMs }).runTrial(input);
    const full = simulate({ config: c.config, hardware: input.hardware, model: c.model, workload: c.workload, seed: input.seed, slo: c.slo, catalog, startEpochMs: startMs });
    assert.ok(full.ok && out.status === 'ok', out.status === 'failed' ? out.reason : 'the full run failed');
    assert.ok(full.records.length > 0, 'the full run keeps its records');
    assert.deepEqual(out.result, full.result);
  });
}

test('the cases exercise what a study reads of a trial: lost requests, a saturated run, a diagnosis, prefix hits', () => {
  const results = cases.map((c) => {
    const out = simulate({ config: c.config, hardware: { gpu: 'H100-SXM', count: c.count }, model: c.model, workload: c.workload, seed: 11, slo: c.slo, catalog, keepRecords: false });
    assert.ok(out.ok);
    return out.result;
  });
  assert.ok(results.some((r) => r.failed > 0), 'a run that lost requests');
  assert.ok(results.some((r) => r.saturation?.saturated === true), 'a saturated run');
  assert.ok(results.some((r) => r.diagnosis !== null && r.diagnosis !== undefined && r.diagnosis.bottleneck !== 'none'), 'a diagnosis');
  assert.ok(results.some((r) => (r.server_metrics?.prefix_cache_hit_rate ?? 0) > 0), 'prefix hits');
});
