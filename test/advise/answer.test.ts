import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerQuestion, defaultSimulatorFor, withSimulatedDiagnoses, type Answer, type Question } from '../../src/advise/answer.js';
import { priorSimulator } from '../../src/calibration/prior-simulator.js';
import type { RecommendedConfig } from '../../src/optimize/recommend.js';
import { formatAnswer } from '../../src/advise/text.js';
import { enqueueCommand } from '../../src/advise/commands.js';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult, type Workload } from '../../src/domain/index.js';
import { dominates } from '../../src/optimize/pareto.js';
import { openStore } from '../../src/store/index.js';
import { captureIo } from '../helpers/cli.js';
import { shellWords } from '../helpers/shell.js';
import { startSimServe } from '../helpers/sim-serve.js';
import { catalog, chat, dir, loaded, space } from './trained-fixture.js';

/**
 * What a recommendation says and promises: the rule it names picks the best, nothing listed beats the
 * pick on the predicted means without saying why, the best precision-keeping configuration stands
 * beside it, and the commands it prints run as printed.
 */

const question = (over: Partial<Question> = {}): Question => ({
  gpu: 'H100-SXM',
  gpus: 1,
  model: 'llama-3.1-8b',
  workload: chat,
  workloadRef: 'data/workloads/chat.yaml',
  slo: { ttft_p99_ms: 3000, itl_p99_ms: 80 },
  candidates: 3000,
  seed: 1,
  keepPrecision: false,
  ...over,
});
const ask = (over: Partial<Question> = {}): Answer => answerQuestion({ model: { info: loaded.record, surrogate: loaded.surrogate }, question: question(over), space, catalog });

/** Minimization vector of the default objectives (throughput up, p99 TTFT down) on the predicted means. */
const point = (c: Answer['pareto'][number] | NonNullable<Answer['best']>): number[] => [-(c.predicted.output_throughput_per_gpu?.mean ?? 0), c.predicted.ttft_p99_ms?.mean ?? Infinity];

test('the pick follows the stated rule, is listed, and every listed member that beats it on the means says why', () => {
  const a = ask();
  assert.match(a.rule, /highest lower bound \(mean − 2σ\) of predicted output throughput per GPU .* P\(meets the SLOs\) ≥ 0\.9/);
  assert.ok(a.best !== null);
  assert.ok(a.best.p_meets_slo >= 0.9 && a.best.p_start >= 0.5);
  const picked = a.pareto.filter((m) => m.recommended);
  assert.equal(picked.length, 1);
  // The Pareto set lists the search's pick; the answer states it simplified (the flags that matter).
  const searched = picked[0]?.config as Record<string, unknown>;
  assert.ok(a.simplification !== null);
  for (const [k, v] of Object.entries(a.simplification.before.changed)) assert.equal(searched[k], v, k);
  for (const [k, v] of Object.entries(a.best.config)) assert.equal(a.simplification.before.changed[k], v, `the simplified pick sets ${k} as the search's did`);
  // No qualifying listed member has a lower bound past the pick's tie band: the rule picks the maximum,
  // bounds within 1% of it tying (and the tie goes to the better mean, so the pick's may be the lower one).
  const pick = picked[0] as NonNullable<(typeof picked)[number]>;
  for (const m of a.pareto) if (m.p_meets_slo >= 0.9 && m.p_start >= 0.5) assert.ok((m.predicted.output_throughput_per_gpu?.low ?? 0) * (1 - 0.01) <= (pick.predicted.output_throughput_per_gpu?.low ?? 0) + 1e-9, JSON.stringify(m.config));
  for (const m of a.pareto) {
    if (m.recommended) {
      // The search's pick says when the answer states it simplified: the knobs the simplification put back.
      const reverted: string[] = (a.simplification?.reverted ?? []).map((r: { knob: string }) => r.knob);
      assert.equal(m.note, reverted.length === 0 ? null : `the recommendation is this configuration with ${reverted.join(', ')} back at vLLM's default${reverted.length === 1 ? '' : 's'} (within the noise)`);
      continue;
    }
    const beats: boolean = dominates(point(m), point(pick));
    assert.equal(m.note !== null, beats, `note iff the member dominates the pick: ${JSON.stringify(m.config)}`);
    if (m.note !== null) assert.match(m.note, /less certain: its throughput lower bound is \d+ tok\/s\/GPU against the recommendation's \d+/);
  }
  const text = formatAnswer(a);
  assert.ok(text.includes(`Rule: ${a.rule}.`));
});

test('the best configuration that keeps the checkpoint’s precision stands beside the pick; --keep-precision pins it', () => {
  const a = ask();
  assert.ok(a.best !== null);
  assert.deepEqual(a.best.numerics_changes, space.numericsChanges(a.best.config));
  if (a.best.numerics_changes.length > 0) {
    assert.ok(a.precision_keeping !== null, 'a precision-keeping alternative is named');
    assert.deepEqual(a.precision_keeping.numerics_changes, []);
    assert.ok((a.precision_keeping.predicted.output_throughput_per_gpu?.low ?? 0) <= (a.best.predicted.output_throughput_per_gpu?.low ?? 0));
    assert.match(formatAnswer(a), /changes the model’s numerics: (quantization=fp8|kv_cache_dtype=fp8)/);
    assert.match(formatAnswer(a), /Best that keeps the checkpoint’s precision/);
  } else {
    assert.equal(a.precision_keeping, null);
  }
  const kept = ask({ keepPrecision: true });
  assert.equal(kept.keep_precision, true);
  for (const c of [kept.best, ...kept.pareto]) if (c !== null) assert.deepEqual(c.numerics_changes, [], JSON.stringify(c.config));
  assert.equal(kept.precision_keeping, null, 'the pick itself keeps precision');
  assert.deepEqual(space.numericsChanges({ quantization: 'fp8', kv_cache_dtype: 'fp8' }), ['kv_cache_dtype=fp8', 'quantization=fp8']);
  assert.deepEqual(space.numericsChanges({ quantization: 'none', kv_cache_dtype: 'auto', max_num_seqs: 8 }), []);
});

test('the commands printed to measure next run as printed: vllm serve (on the simulator), lm-bench run, lm-bench tune --enqueue', { timeout: 180_000 }, async (t) => {
  // A thin history (16 runs, fewer than the 20 the trust rule wants), so the answer asks for more.
  const a = ask();
  assert.equal(a.trust.level, 'thin');
  assert.ok(a.measure_next.length >= 1 && a.enqueue_command !== null);
  const first = a.measure_next[0];
  assert.ok(first !== undefined);

  // 1. `vllm serve MODEL --flags`: the simulator takes vLLM's own flags, so it stands in for the GPU box.
  const serve = shellWords(first.vllm_serve);
  assert.deepEqual(serve.slice(0, 3), ['vllm', 'serve', 'meta-llama/Llama-3.1-8B-Instruct']);
  const sim = await startSimServe([...serve.slice(2), '--gpu', 'H100-SXM', '--gpus', '1', '--speed', '40']);
  t.after(() => sim.close());
  const url = sim.url;

  // 2. `lm-bench run --endpoint http://127.0.0.1:8000/… --workload data/workloads/chat.yaml --output next-1.json`, pointed at the port it got.
  const run = shellWords(first.lm_bench_run);
  assert.deepEqual(run.slice(0, 2), ['lm-bench', 'run']);
  const endpoint = run.indexOf('--endpoint') + 1;
  assert.match(run[endpoint] ?? '', /^http:\/\/127\.0\.0\.1:8000\/v1\/chat\/completions$/);
  run[endpoint] = (run[endpoint] ?? '').replace('http://127.0.0.1:8000', url);
  const io = captureIo(PROJECT_ROOT, { LMB_LOOPBACK_ONLY: '1' });
  const out = join(dir, 'next-1.json');
  run[run.indexOf('--output') + 1] = out;
  assert.equal(await main([...run.slice(1), '--num-prompts', '40'], io), 0, io.err());
  const result = BenchmarkResult.parse(JSON.parse(readFileSync(out, 'utf8')));
  assert.equal(result.completed, 40);
  assert.equal(result.max_concurrency, 64, 'the workload file’s 64 users');
  assert.equal(await sim.close(), 0, 'sim serve exits 0 on SIGTERM');

  // 3. `lm-bench tune … --enqueue …`: the queued configurations run right after vLLM's defaults.
  const tune = shellWords(a.enqueue_command);
  assert.deepEqual(tune.slice(0, 2), ['lm-bench', 'tune']);
  const tdb = join(dir, 'next.db');
  const tio = captureIo(PROJECT_ROOT);
  assert.equal(await main([...tune.slice(1), '--no-report', '--db', tdb, '--json'], tio), 0, tio.err());
  const ts = openStore(tdb);
  try {
    const study = ts.listStudies()[0];
    assert.ok(study !== undefined);
    const trials = ts.listTrials(study.id);
    assert.equal(trials.length, a.trust.run_next.length + 1);
    assert.deepEqual(trials.map((x) => x.origin), ['default', ...a.trust.run_next.map(() => 'enqueued')]);
    assert.deepEqual(trials.slice(1).map((x) => x.config), a.trust.run_next);
    assert.ok(trials.every((x) => x.state === 'complete' || x.state === 'failed'));
  } finally {
    ts.close();
  }
  // Pasting it again queues nothing twice and runs nothing more (its budget is spent).
  const again = captureIo(PROJECT_ROOT);
  assert.equal(await main([...tune.slice(1), '--no-report', '--db', tdb, '--json'], again), 0, again.err());
  const ts2 = openStore(tdb);
  try {
    assert.equal(ts2.listTrials(ts2.listStudies()[0]?.id ?? 0).length, a.trust.run_next.length + 1);
  } finally {
    ts2.close();
  }
});

test("the question's vLLM release reaches every simulator an answer uses: other GPU counts too, and `recommend --vllm-version`", async (t) => {
  // 4k-token prompts: vLLM 0.12 paid more per decode step for the KV read than a current release.
  const long: Workload = { ...chat, name: 'long', api: 'completions', input_len: { dist: 'fixed', value: 4096 }, output_len: { dist: 'fixed', value: 256 }, arrival: { kind: 'closed', concurrency: 32 }, num_prompts: 96 };
  const tpot = (vllmVersion?: string): number => {
    const sim = defaultSimulatorFor(catalog, question({ workload: long, vllmVersion }))(2);
    return sim.simulate({ tensor_parallel_size: 2 })?.mean_tpot_ms ?? Number.NaN;
  };
  assert.ok(tpot('0.12.0') > tpot() * 1.05, `TPOT on 2 GPUs: 0.12.0 ${tpot('0.12.0')} ms vs current ${tpot()} ms`);
  const cli = mkdtempSync(join(tmpdir(), 'lmb-advise-release-'));
  t.after(() => rmSync(cli, { recursive: true, force: true }));
  const io = captureIo(cli);
  const code = await main(['recommend', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), '--vllm-version', '0.12.0', '--candidates', '2000', '--db', join(cli, 'empty.db'), '--json'], io);
  assert.equal(code, 0, io.err());
  const answer = JSON.parse(io.out()) as { source: { kind: string; simulator: { profile: string } | null }; enqueue_command: string | null; trust: { run_next: unknown[] } };
  assert.equal(answer.source.kind, 'simulator');
  assert.match(answer.source.simulator?.profile ?? '', /vLLM 0\.12\.0/);
  // The study it says to queue imitates the same release, under a name of its own (a study keeps its release).
  const tune = shellWords(answer.enqueue_command ?? '');
  assert.equal(tune[tune.indexOf('--vllm-version') + 1], '0.12.0', answer.enqueue_command ?? 'no enqueue command');
  assert.match(tune[tune.indexOf('--study') + 1] ?? '', /-vllm-0\.12\.0$/);
  assert.match(formatAnswer(answer as unknown as Answer), /drop --vllm-version and add --target vllm, endpoint or command to measure on your GPUs/);
  const tdb = join(cli, 'next.db');
  const tio = captureIo(cli);
  assert.equal(await main([...tune.slice(1), '--no-report', '--db', tdb, '--json'], tio), 0, tio.err());
  const ts = openStore(tdb);
  try {
    const target = JSON.parse(ts.listStudies()[0]?.spec.target ?? '{}') as { kind?: string; vllm_version?: string };
    assert.deepEqual([target.kind, target.vllm_version], ['sim', '0.12.0']);
  } finally {
    ts.close();
  }
});

test('a pick the simulator expects to crash or not to start is not trusted as it stands: the answer says why and asks to measure it', () => {
  const sim = priorSimulator(null, catalog, { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: chat, slo: question().slo });
  const pick = (config: RecommendedConfig['config']): RecommendedConfig => ({ config, predicted: {}, p_start: 1, p_meets_slo: 0.9, numerics_changes: [] });
  const trusted = { level: 'ok' as const, reasons: [], run_next: [] };
  const answer = (config: RecommendedConfig['config']) => withSimulatedDiagnoses({ best: pick(config), precision_keeping: null, pareto: [], trust: trusted }, sim);

  // vLLM's default utilization leaves ~7 GiB outside the pool on an H100: no doubt.
  assert.deepEqual(answer({ gpu_memory_utilization: 0.9 }).trust, trusted);
  assert.deepEqual(answer({ gpu_memory_utilization: 0.9 }).best?.doubts, []);
  // 0.98 leaves ~0.6 GiB: a run-time OOM is near certain in 1,000 requests, whether or not this seed's run died.
  const tight = answer({ gpu_memory_utilization: 0.98 });
  assert.equal(tight.trust.level, 'thin');
  assert.ok(tight.trust.reasons.some((r) => /gpu_memory_utilization=0\.98 leaves 0\.\d\d GiB outside vLLM's pool: a (≥99\.9|9\d)% chance of a run-time CUDA OOM/.test(r)), tight.trust.reasons.join('\n'));
  assert.deepEqual(tight.trust.run_next, [{ gpu_memory_utilization: 0.98 }], 'the pick itself is what to measure next');
  assert.deepEqual(tight.trust.reasons, (tight.best?.doubts ?? []).map((d) => `the pick: ${d}`), 'the reasons are the pick’s own doubts');
  assert.equal(tight.best?.diagnosis, null, 'its simulated run died, so it has no diagnosis');
  assert.ok(tight.trust.reasons.some((r) => /died after \d+ requests of a run-time CUDA out-of-memory error/.test(r)));
  // Already thin (few runs): the doubted pick goes first among the runs to measure, listed once.
  const thin = { level: 'thin' as const, reasons: ['only 3 measured runs'], run_next: [{ max_num_seqs: 64 }, { gpu_memory_utilization: 0.98 }] };
  const doubted = withSimulatedDiagnoses({ best: pick({ gpu_memory_utilization: 0.98 }), precision_keeping: null, pareto: [], trust: thin }, sim);
  assert.deepEqual(doubted.trust.run_next, [{ gpu_memory_utilization: 0.98 }, { max_num_seqs: 64 }]);
  assert.equal(doubted.trust.reasons[0], 'only 3 measured runs');
  // One that cannot start says so, with the simulated server's own message.
  const huge = answer({ max_model_len: 1_000_000 });
  assert.equal(huge.trust.level, 'thin');
  assert.equal(huge.trust.reasons.length, 1);
  assert.match(huge.trust.reasons[0] ?? '', /^the pick: the simulated server does not start with it: /);
});

test('the precision-keeping alternative carries the simulator’s doubts about it, and they leave the pick’s trust alone', () => {
  const sim = priorSimulator(null, catalog, { hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: chat, slo: question().slo });
  const configOf = (config: RecommendedConfig['config']): RecommendedConfig => ({ config, predicted: {}, p_start: 1, p_meets_slo: 0.9, numerics_changes: [] });
  const trusted = { level: 'ok' as const, reasons: [], run_next: [] };
  const a = withSimulatedDiagnoses({ best: configOf({ quantization: 'fp8', gpu_memory_utilization: 0.9 }), precision_keeping: configOf({ gpu_memory_utilization: 0.98 }), pareto: [], trust: trusted }, sim);
  assert.deepEqual(a.best?.doubts, []);
  assert.ok((a.precision_keeping?.doubts ?? []).some((d) => /^gpu_memory_utilization=0\.98 leaves 0\.\d\d GiB outside vLLM's pool/.test(d)), (a.precision_keeping?.doubts ?? []).join('\n'));
  assert.deepEqual(a.trust, trusted, 'the pick is trusted as before: the doubt is the alternative’s');
  // The terminal prints it under the alternative.
  const text = formatAnswer({ ...ask(), best: a.best, precision_keeping: a.precision_keeping, precision_keeping_command: 'vllm serve x' });
  const alt = text.slice(text.indexOf('Best that keeps the checkpoint'));
  assert.match(alt, /the simulator doubts it: gpu_memory_utilization=0\.98 leaves/);
  assert.doesNotMatch(text.slice(0, text.indexOf('Best that keeps the checkpoint')), /the simulator doubts it/);
});

test('a --keep-precision answer queues its runs in a --keep-precision study of its own (a study keeps the settings it was created with)', () => {
  const d = { gpu: 'H100-SXM', gpus: 1, model: catalog.model('llama-3.1-8b'), workload: chat, workloadRef: 'chat.yaml', slo: question().slo };
  const kept = shellWords(enqueueCommand({ ...d, keepPrecision: true }, [{ max_num_seqs: 64 }]) ?? '');
  const plain = shellWords(enqueueCommand(d, [{ max_num_seqs: 64 }]) ?? '');
  assert.ok(kept.includes('--keep-precision') && !plain.includes('--keep-precision'));
  assert.equal(kept[kept.indexOf('--study') + 1], `${plain[plain.indexOf('--study') + 1] ?? ''}-keep-precision`);
});
