import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'yaml';
import { isLmBenchError } from '../../src/errors.js';
import { arrivalOf, BenchConfig, expandSweep, TrafficConfig } from '../../src/loadgen/config.js';
import { planRun } from '../../src/loadgen/plan.js';
import { syntheticRequests } from '../../src/loadgen/prompts.js';
import { scheduleTimes } from '../../src/loadgen/arrivals.js';
import { createRng } from '../../src/util/rng.js';
import { parseYaml } from '../../src/util/yaml.js';
import { sampleRequests, trafficStreams } from '../../src/workload/sample.js';

const shipped = new URL('../../configs/llama3-8b-throughput.yaml', import.meta.url);
const fixtures = new URL('../fixtures/loadgen/', import.meta.url).pathname;

test('the shipped config sweeps 5 input lengths × 4 concurrencies', () => {
  const text = readFileSync(shipped, 'utf8');
  const cfg = parseYaml(text, BenchConfig, { file: 'llama3-8b-throughput.yaml' });
  const points = expandSweep(parse(text) as Record<string, unknown>, cfg);
  assert.equal(points.length, 20);
  const lens = new Set(points.map((p) => (p.config.dataset.kind === 'synthetic' && p.config.dataset.input_len.dist === 'fixed' ? p.config.dataset.input_len.value : 0)));
  assert.deepEqual([...lens], [128, 256, 512, 1024, 2048]);
  assert.deepEqual([...new Set(points.map((p) => p.config.traffic.concurrency))], [1, 4, 16, 64]);
  const plan = planRun((points[19] as (typeof points)[number]).config, fixtures);
  assert.deepEqual(plan.workload.arrival, { kind: 'closed', concurrency: 64 });
  assert.deepEqual(plan.workload.input_len, { dist: 'fixed', value: 2048 });
});

test('an invalid config names the line and the field', () => {
  const text = ['name: bad', 'dataset:', '  kind: synthetic', '  input_len: 128', '  output_len: -4', 'traffic:', '  concurrency: 4', '  bogus: 1', ''].join('\n');
  assert.throws(
    () => parseYaml(text, BenchConfig, { file: 'bad.yaml' }),
    (e) => {
      assert.ok(isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID'));
      const msg = (e as Error).message;
      assert.match(msg, /bad\.yaml:5: dataset\.output_len/);
      assert.match(msg, /bad\.yaml:\d+: traffic: unknown field\(s\) "bogus"/);
      return true;
    },
  );
});

test('traffic: exactly one mode; each maps onto the shared Arrival', () => {
  assert.equal(TrafficConfig.safeParse({ concurrency: 4, request_rate: 2 }).success, false);
  assert.equal(TrafficConfig.safeParse({}).success, false);
  assert.deepEqual(arrivalOf(TrafficConfig.parse({ concurrency: 8 })), { kind: 'closed', concurrency: 8 });
  assert.deepEqual(arrivalOf(TrafficConfig.parse({ request_rate: 'inf', max_concurrency: 3 })), { kind: 'burst', max_concurrency: 3 });
  assert.deepEqual(arrivalOf(TrafficConfig.parse({ request_rate: 5 })), { kind: 'poisson', rate_rps: 5 });
  assert.deepEqual(arrivalOf(TrafficConfig.parse({ request_rate: 5, burstiness: 'inf' })), { kind: 'constant', rate_rps: 5 });
  assert.deepEqual(arrivalOf(TrafficConfig.parse({ request_rate: 5, burstiness: 0.5 })), { kind: 'gamma', rate_rps: 5, burstiness: 0.5 });
});

test('ramp-up follows vLLM: the gap shrinks as the rate climbs from start to end', () => {
  const t = scheduleTimes({ kind: 'poisson', rate_rps: 20 }, 50, createRng(1), { strategy: 'linear', start_rps: 1, end_rps: 20 }, Number.POSITIVE_INFINITY);
  assert.ok(t !== null);
  assert.equal(t[0], 0);
  assert.ok(Math.abs((t[1] as number) - 1) < 1e-12); // first gap at 1 req/s
  assert.ok(Math.abs((t[49] as number) - (t[48] as number) - 1 / (1 + (19 * 48) / 49)) < 1e-12);
  const e = scheduleTimes({ kind: 'poisson', rate_rps: 16 }, 5, createRng(1), { strategy: 'exponential', start_rps: 1, end_rps: 16 }, Number.POSITIVE_INFINITY);
  assert.ok(e !== null && Math.abs((e[2] as number) - (e[1] as number) - 1 / 2) < 1e-12);
});

test('synthetic prompts are deterministic from the seed and use the shared sampler lengths', () => {
  const cfg = BenchConfig.parse({ dataset: { kind: 'synthetic', input_len: { dist: 'zipf', s: 1.1, min: 8, max: 64 }, output_len: { dist: 'uniform', min: 4, max: 9 }, shared_prefix: { groups: 2, length: 16 } }, traffic: { concurrency: 2 }, num_prompts: 30, seed: 9 });
  const { workload } = planRun(cfg, fixtures);
  const a = syntheticRequests(workload, 9);
  const b = syntheticRequests(workload, 9);
  assert.deepEqual(a, b);
  assert.notDeepEqual(syntheticRequests(workload, 10).map((r) => r.prompt), a.map((r) => r.prompt));
  const specs = sampleRequests(workload, trafficStreams(9).requests);
  a.forEach((r, i) => {
    assert.equal(r.maxTokens, specs[i]?.outputTokens);
    assert.equal(r.clientTokens, (specs[i]?.inputTokens ?? 0) + 16);
    assert.equal(r.prompt.split(' ').length, r.clientTokens);
  });
  // Requests of one prefix group share their first 16 words.
  const groups = new Map<string, number>();
  for (const r of a) groups.set(r.prompt.split(' ').slice(0, 16).join(' '), 1);
  assert.equal(groups.size, 2);
});

test('ShareGPT and JSONL datasets are read, filtered and shuffled by seed', () => {
  const share = planRun(BenchConfig.parse({ dataset: { kind: 'sharegpt', path: 'sharegpt-small.json' }, traffic: { concurrency: 1 }, num_prompts: 8, seed: 1 }), fixtures);
  assert.equal(share.requests?.length, 8);
  assert.ok(share.requests?.every((r) => r.prompt.startsWith('Tell me about topic')));
  const jsonl = planRun(BenchConfig.parse({ dataset: { kind: 'jsonl', path: 'prompts.jsonl', output_len: 7 }, traffic: { concurrency: 1 }, num_prompts: 3, seed: 2 }), fixtures);
  assert.deepEqual(new Set(jsonl.requests?.map((r) => r.maxTokens)), new Set([12, 7, 5]));
  assert.throws(
    () => planRun(BenchConfig.parse({ dataset: { kind: 'jsonl', path: 'sharegpt-small.json' }, traffic: { concurrency: 1 } }), fixtures),
    (e) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID') && /sharegpt-small\.json:1:/.test((e as Error).message),
  );
  assert.throws(() => planRun(BenchConfig.parse({ dataset: { kind: 'jsonl', path: 'missing.jsonl' }, traffic: { concurrency: 1 } }), fixtures), (e) => isLmBenchError(e, 'LMB_ERR_FILE_NOT_FOUND'));
});
