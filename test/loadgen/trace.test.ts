import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { Workload } from '../../src/domain/index.js';
import { LmBenchError } from '../../src/errors.js';
import { BenchConfig, rawConfigOfWorkload } from '../../src/loadgen/config.js';
import { runBenchmark } from '../../src/loadgen/index.js';
import { planRun } from '../../src/loadgen/plan.js';
import { syntheticRequests } from '../../src/loadgen/prompts.js';
import { startSimServer, type SimServer } from '../../src/sim/server.js';
import { countTokens } from '../../src/sim/tokenizer.js';
import { readTraceFile, traceName, traceWorkload } from '../../src/trace/index.js';

const dir = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));
const mooncake = readTraceFile(`${dir}mooncake-conversation-head300.jsonl`, 'mooncake-conversation-head300.jsonl');
const replay = (n: number, speed = 1): Workload => Workload.parse({ ...traceWorkload(mooncake, traceName(mooncake), { name: 'mc', speed, embed: true }).workload, num_prompts: n });

/** Words two prompts share from their start. */
function commonWords(x: readonly string[], y: readonly string[]): number {
  let k = 0;
  while (k < x.length && k < y.length && x[k] === y[k]) k++;
  return k;
}

/** Words requests i and j of the trace must share: as far as their block ids agree (512 words a block), up to the shorter prompt; and those blocks. */
function sharedByBlocks(i: number, j: number): { words: number; blocks: number } {
  const a = mooncake.requests[i]?.hashIds ?? [];
  const b = mooncake.requests[j]?.hashIds ?? [];
  let k = 0;
  while (k < a.length && k < b.length && a[k] === b[k]) k++;
  return { words: Math.min(k * 512, mooncake.requests[i]?.inputTokens ?? 0, mooncake.requests[j]?.inputTokens ?? 0), blocks: k };
}

test('trace prompts: one word a token, max_tokens the output; shared block ids give word-for-word shared prefixes', () => {
  const n = 300;
  const reqs = syntheticRequests(replay(n), 4);
  const words = reqs.map((r) => r.prompt.split(' '));
  reqs.forEach((r, i) => {
    assert.equal(countTokens(r.prompt), mooncake.requests[i]?.inputTokens, `request ${i}`);
    assert.equal(r.clientTokens, mooncake.requests[i]?.inputTokens);
    assert.equal(r.maxTokens, mooncake.requests[i]?.outputTokens);
  });
  // Every pair agrees exactly as far as its block ids do (512 words a block), up to the shorter prompt.
  let checked = 0;
  for (let i = 0; i < 45; i++) {
    for (let j = i + 1; j < n; j++) {
      const { words: expected, blocks: k } = sharedByBlocks(i, j);
      const got = commonWords(words[i] ?? [], words[j] ?? []);
      // Past the shared blocks the words come from other streams: equal by chance for a word or two at most.
      assert.ok(got >= expected && got <= expected + 3, `${i}/${j}: ${got} words shared, ${k} blocks`);
      if (k >= 2) checked++;
    }
  }
  assert.ok(checked > 0, 'the slice has conversations that share more than the system block');
});

test('a salted trace replay keeps its lengths and block sharing in words no unsalted replay sends', () => {
  const n = 120;
  const plain = syntheticRequests(replay(n), 4);
  const salted = syntheticRequests(replay(n), 4, 'replay-2');
  const words = salted.map((r) => r.prompt.split(' '));
  salted.forEach((r, i) => {
    assert.equal(countTokens(r.prompt), mooncake.requests[i]?.inputTokens, `request ${i}`);
    assert.ok(commonWords(words[i] ?? [], plain[i]?.prompt.split(' ') ?? []) <= 3, `request ${i}: new words from the first`);
  });
  for (let i = 0; i < 20; i++) {
    for (let j = i + 1; j < n; j++) {
      const { words: expected, blocks: k } = sharedByBlocks(i, j);
      const got = commonWords(words[i] ?? [], words[j] ?? []);
      assert.ok(got >= expected && got <= expected + 3, `${i}/${j}: ${got} words shared, ${k} blocks`);
    }
  }
});

test('a trace dataset brings its own arrivals: traffic modes and max_tokens are refused; num_prompts defaults to the whole trace', () => {
  const ds = { kind: 'trace', path: `${dir}burstgpt-1-head400.csv` };
  const bad = BenchConfig.safeParse({ dataset: ds, traffic: { concurrency: 4 } });
  assert.equal(bad.success, false);
  assert.match(JSON.stringify(bad.error?.issues), /a trace brings its own arrival times/);
  assert.equal(BenchConfig.safeParse({ dataset: ds, sampling: { max_tokens: 8 } }).success, false);
  assert.match(JSON.stringify(BenchConfig.safeParse({ dataset: { kind: 'synthetic', input_len: 8, output_len: 8 } }).error?.issues), /give exactly one of concurrency, request_rate, ramp_up or stages/);
  const plan = planRun(BenchConfig.parse({ dataset: ds, traffic: { max_concurrency: 3 } }), dir);
  assert.equal(plan.workload.num_prompts, 383);
  assert.equal(plan.workload.name, 'burstgpt-1-head400');
  assert.equal(plan.trace?.skippedZero, 17);
  assert.equal(plan.workload.trace?.data?.input_tokens.length, 383);
  assert.equal(plan.workload.arrival.kind === 'gamma' ? plan.workload.arrival.max_concurrency : null, 3);
  // limit and num_prompts: the smaller wins, and the fit is of what is replayed.
  const few = planRun(BenchConfig.parse({ dataset: { ...ds, limit: 50, speed: 100 }, num_prompts: 20 }), dir);
  assert.equal(few.workload.num_prompts, 20);
  assert.equal(few.workload.trace?.requests, 20);
  assert.equal(few.trace?.speed, 100);
});

test('a workload carrying trace requests is not turned into a synthetic run config', () => {
  assert.throws(() => rawConfigOfWorkload(replay(10)), (e: unknown) => e instanceof LmBenchError && /--trace/.test(e.message));
});

let sim: SimServer;
before(async () => {
  sim = await startSimServer({ config: { max_model_len: 131072 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.2-1b', port: 0, speed: 50, seed: 1, startupScale: 0 });
});
after(async () => {
  await sim.close();
});

test('runBenchmark replays a trace against sim serve: its lengths, its schedule ÷ speed, and how late each send was', async () => {
  const n = 14;
  const { result, records, lateness } = await runBenchmark({ endpoint: `${sim.url}/v1/completions`, workload: replay(n, 20), seed: 1, scrapeMetrics: false, env: { LMB_LOOPBACK_ONLY: '1' } });
  assert.equal(result.completed, n);
  const measured = records.filter((r) => r.phase === 'measure');
  const t0 = measured[0]?.sched_time_s ?? 0;
  measured.forEach((r, i) => {
    assert.equal(r.prompt_tokens, mooncake.requests[i]?.inputTokens, `request ${i}`);
    assert.equal(r.output_tokens, mooncake.requests[i]?.outputTokens, `request ${i}`);
    assert.ok(Math.abs(r.sched_time_s - t0 - (mooncake.requests[i]?.arrivalMs ?? 0) / 1000 / 20) < 1e-9);
  });
  assert.equal(lateness?.sent, n);
  assert.ok(lateness !== null && lateness.p50Ms <= lateness.p99Ms && lateness.p99Ms <= lateness.maxMs);
  assert.equal(result.workload?.trace?.data, undefined, 'the result names the trace, not its requests');
  assert.equal(result.workload?.num_prompts, n);
  assert.equal(result.workload?.trace?.sha256, mooncake.sha256);
});
