import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Workload, stagesMeanRate, type WorkloadInput } from '../../src/domain/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';
import { LmBenchError } from '../../src/errors.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const base: WorkloadInput = {
  name: 'w',
  input_len: { dist: 'fixed', value: 100 },
  output_len: { dist: 'fixed', value: 10 },
  arrival: { kind: 'poisson', stages: [{ rate_rps: 8, duration_s: 600 }, { rate: 20, duration_s: 600 }] },
};

const issues = (raw: unknown): string[] => {
  const r = Workload.safeParse(raw);
  assert.equal(r.success, false, 'expected a parse failure');
  return r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
};

test('rate stages: num_prompts defaults to the requests they hold, rate_rps to their mean, `rate` reads as rate_rps', () => {
  const w = Workload.parse(base);
  assert.equal(w.num_prompts, 8 * 600 + 20 * 600);
  assert.ok(w.arrival.kind === 'poisson');
  assert.equal(w.arrival.rate_rps, 14);
  assert.deepEqual(w.arrival.stages, [{ rate_rps: 8, duration_s: 600 }, { rate_rps: 20, duration_s: 600 }]);
  // What a result stores parses again to the same workload (rate_rps equal to the mean is accepted).
  assert.deepEqual(Workload.parse(JSON.parse(JSON.stringify(w))), w);
});

test('rate stages: num_prompts may lower the count but not exceed it; a pause stage counts in the mean', () => {
  assert.equal(Workload.parse({ ...base, num_prompts: 100 }).num_prompts, 100);
  assert.deepEqual(issues({ ...base, num_prompts: 16_801 }), ['num_prompts: the stages hold 16800 requests; num_prompts (16801) can only lower that']);
  const paused = Workload.parse({ ...base, arrival: { kind: 'poisson', stages: [{ rate_rps: 10, duration_s: 60 }, { rate_rps: 0, duration_s: 60 }] } });
  assert.equal(paused.num_prompts, 600);
  assert.equal(paused.arrival.kind === 'poisson' ? paused.arrival.rate_rps : null, 5);
  assert.equal(stagesMeanRate([{ rate_rps: 1, duration_s: 30 }, { rate_rps: 4, duration_s: 10 }]), 1.75);
});

test('rate-stage mistakes name their field', () => {
  const arr = (a: unknown): unknown => ({ ...base, arrival: a });
  assert.deepEqual(issues(arr({ kind: 'poisson', stages: [{ duration_s: 10 }] })), ['arrival.stages.0.rate_rps: give the stage one rate: rate_rps (or rate)']);
  assert.deepEqual(issues(arr({ kind: 'poisson', stages: [{ rate: 1, rate_rps: 1, duration_s: 10 }] })), ['arrival.stages.0.rate_rps: give the stage one rate: rate_rps (or rate)']);
  assert.match(issues(arr({ kind: 'poisson', stages: [{ rate_rps: 1, duration_s: 0 }] }))[0] ?? '', /^arrival\.stages\.0\.duration_s: /);
  assert.deepEqual(issues(arr({ kind: 'poisson', stages: [] })).map((s) => s.split(':')[0]), ['arrival.stages']);
  assert.deepEqual(issues(arr({ kind: 'poisson', stages: [{ rate_rps: 0, duration_s: 10 }] })), ['arrival.stages: every stage has rate 0: no request would be sent']);
  assert.deepEqual(issues(arr({ kind: 'poisson', stages: [{ rate_rps: 0.01, duration_s: 10 }] })), ['arrival.stages: the stages hold no request (rate × duration_s rounds to 0 in each)']);
  assert.deepEqual(issues(arr({ kind: 'poisson', rate_rps: 3, stages: [{ rate_rps: 2, duration_s: 10 }] })), ["arrival.rate_rps: rate_rps (3) differs from the stages' mean rate (2); leave it out"]);
  assert.deepEqual(issues({ ...base, num_prompts: 5, arrival: { kind: 'poisson' } }), ['arrival.rate_rps: give rate_rps, or stages of {rate_rps, duration_s}']);
  // Without stages, num_prompts stays required.
  assert.deepEqual(issues({ ...base, arrival: { kind: 'poisson', rate_rps: 2 } }), ['num_prompts: num_prompts is required unless the arrival has rate stages']);
});

test('a refused stage gets its own error and nothing else: no false "every stage has rate 0" beside it', () => {
  const arr = (stages: unknown[], extra: Record<string, unknown> = {}): unknown => ({ ...base, arrival: { kind: 'poisson', stages }, ...extra });
  const cases: [unknown, string[]][] = [
    [arr([{ rate: 5, duration_s: -10 }]), ['arrival.stages.0.duration_s']],
    [arr([{ rate: -1, duration_s: 10 }]), ['arrival.stages.0.rate']],
    [arr([{ rate_rps: -1, duration_s: 10 }]), ['arrival.stages.0.rate_rps']],
    [arr([{ rate: 1e12, duration_s: 1e9 }]), ['arrival.stages.0.rate', 'arrival.stages.0.duration_s']],
    // Beside a good stage, and with num_prompts the refused stage's raw count would be compared with.
    [arr([{ rate_rps: 2, duration_s: 10 }, { rate_rps: 5e6, duration_s: 1 }], { num_prompts: 30 }), ['arrival.stages.1.rate_rps']],
  ];
  for (const [raw, paths] of cases) {
    const got = issues(raw);
    assert.deepEqual(got.map((i) => i.split(':')[0]), paths, got.join(' | '));
    assert.ok(got.every((i) => !/every stage has rate 0|hold no request|the stages hold/.test(i)), got.join(' | '));
  }
  // A mistake elsewhere in the file does not hide a true one in the stages.
  assert.deepEqual(issues({ ...base, input_len: { dist: 'fixed', value: -1 }, arrival: { kind: 'poisson', stages: [{ rate_rps: 0, duration_s: 10 }] } }).map((i) => i.split(':')[0]), ['input_len.value', 'arrival.stages']);
});

test('prompt_pool: a positive size, and not beside a trace that replays its own prompts', () => {
  assert.deepEqual(Workload.parse({ ...base, prompt_pool: { size: 50 } }).prompt_pool, { size: 50 });
  assert.match(issues({ ...base, prompt_pool: { size: 0 } })[0] ?? '', /^prompt_pool\.size: /);
  assert.match(issues({ ...base, prompt_pool: { size: 5, extra: 1 } })[0] ?? '', /^prompt_pool: /);
  const trace = {
    source: 't.jsonl', format: 'jsonl', sha256: 'a'.repeat(64), requests: 2,
    data: { arrival_ms: [0, 10], input_tokens: [5, 6], output_tokens: [1, 2] },
  };
  assert.deepEqual(issues({ ...base, arrival: { kind: 'burst' }, num_prompts: 2, trace, prompt_pool: { size: 1 } }), [
    "prompt_pool: a trace replays its own prompts; prompt_pool cannot go with the trace's data",
  ]);
});

test('the bundled staged workload loads; a bad stage in a file is a catalog error naming file, line and field', () => {
  const w = loadYamlFile(new URL('../../data/workloads/chat-stages.yaml', import.meta.url).pathname, Workload, 'LMB_ERR_WORKLOAD_INVALID');
  assert.equal(w.num_prompts, 16_800);
  assert.deepEqual(w.prompt_pool, { size: 500 });
  const dir = mkdtempSync(join(tmpdir(), 'lmb-stages-'));
  const file = join(dir, 'bad.yaml');
  writeFileSync(file, 'name: b\ninput_len: { dist: fixed, value: 8 }\noutput_len: { dist: fixed, value: 8 }\narrival:\n  kind: poisson\n  stages:\n    - { rate_rps: 2, duration_s: 5 }\n    - { duration_s: 5 }\n');
  assert.throws(
    () => loadYamlFile(file, Workload, 'LMB_ERR_WORKLOAD_INVALID'),
    (e: unknown) => e instanceof LmBenchError && e.code === 'LMB_ERR_WORKLOAD_INVALID' && /bad\.yaml:8: arrival\.stages\.1\.rate_rps: give the stage one rate/.test(e.message),
  );
});
