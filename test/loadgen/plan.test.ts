import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Workload } from '../../src/domain/index.js';
import { LmBenchError } from '../../src/errors.js';
import { BenchConfig, rawConfigOfWorkload } from '../../src/loadgen/config.js';
import { planRun } from '../../src/loadgen/plan.js';
import { parseYaml } from '../../src/util/yaml.js';

// `run` against a real server: rate stages and a prompt pool in a config file (or a workload file)
// become the same Workload the simulator reads.

const yaml = (body: string): BenchConfig => parseYaml(body, BenchConfig, { file: 'c.yaml' });
const synthetic = 'dataset: { kind: synthetic, input_len: 128, output_len: 16 }\n';

test('traffic.stages: a staged Poisson workload whose stages set the request count', () => {
  const plan = planRun(yaml(`${synthetic}traffic:\n  stages: [{ rate_rps: 8, duration_s: 60 }, { rate: 20, duration_s: 30 }]\n  max_concurrency: 64\n`), '/');
  assert.deepEqual(plan.workload.arrival, { kind: 'poisson', rate_rps: 1080 / 90, stages: [{ rate_rps: 8, duration_s: 60 }, { rate_rps: 20, duration_s: 30 }], max_concurrency: 64 });
  assert.equal(plan.workload.num_prompts, 1080);
  const lowered = planRun(yaml(`${synthetic}num_prompts: 100\ntraffic: { stages: [{ rate_rps: 8, duration_s: 60 }] }\n`), '/');
  assert.equal(lowered.workload.num_prompts, 100);
});

test('traffic mistakes: stages with another mode or with burstiness, burstiness with a closed loop, num_prompts above the stages', () => {
  const fails = (body: string, re: RegExp): void => {
    assert.throws(() => planRun(yaml(body), '/'), (e: unknown) => e instanceof LmBenchError && re.test(e.message), body);
  };
  fails(`${synthetic}traffic: { request_rate: 5, stages: [{ rate_rps: 8, duration_s: 60 }] }\n`, /c\.yaml:\d+: traffic: give exactly one of concurrency, request_rate, ramp_up or stages/);
  fails(`${synthetic}traffic: { burstiness: 0.5, stages: [{ rate_rps: 8, duration_s: 60 }] }\n`, /traffic\.burstiness: rate stages are Poisson/);
  fails(`${synthetic}traffic: { burstiness: 0.5, concurrency: 4 }\n`, /traffic\.burstiness: burstiness shapes an open loop's arrivals/);
  assert.throws(
    () => planRun(yaml(`${synthetic}num_prompts: 481\ntraffic: { stages: [{ rate_rps: 8, duration_s: 60 }] }\n`), '/'),
    (e: unknown) => e instanceof LmBenchError && e.code === 'LMB_ERR_WORKLOAD_INVALID' && e.details?.['field'] === 'num_prompts' && /stages hold 480 requests/.test(e.message),
  );
});

test('a workload file with stages and a pool runs as it simulates: `run --workload` keeps both', () => {
  const w = Workload.parse({
    name: 'w',
    input_len: { dist: 'fixed', value: 64 },
    output_len: { dist: 'fixed', value: 8 },
    prompt_pool: { size: 3 },
    arrival: { kind: 'poisson', stages: [{ rate_rps: 2, duration_s: 10 }, { rate_rps: 6, duration_s: 5 }] },
    num_prompts: 40,
  });
  const plan = planRun(BenchConfig.parse(rawConfigOfWorkload(w)), '/');
  assert.deepEqual(plan.workload.arrival, w.arrival);
  assert.deepEqual(plan.workload.prompt_pool, { size: 3 });
  assert.equal(plan.workload.num_prompts, 40);
});

test('dataset.sessions reaches the workload, and a workload file\'s sessions survive `run --workload`', () => {
  const plan = planRun(yaml('dataset: { kind: synthetic, input_len: 64, output_len: 8, sessions: { turns: 3, concurrent: 5 } }\ntraffic: { request_rate: 2 }\nnum_prompts: 30\n'), '/');
  assert.deepEqual(plan.workload.sessions, { turns: 3, concurrent: 5 });
  const again = planRun(BenchConfig.parse(rawConfigOfWorkload(plan.workload)), '/');
  assert.deepEqual(again.workload.sessions, { turns: 3, concurrent: 5 });
});
