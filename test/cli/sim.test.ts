import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { captureIo, type CapturedIo } from '../helpers/cli.js';
import { startSimServe } from '../helpers/sim-serve.js';

const io = (): CapturedIo => captureIo();

const base = ['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--seed', '1'];

test('sim run --json prints one BenchmarkResult with the resolved knobs', async () => {
  const t = io();
  const code = await main([...base, '--set', 'max_num_seqs=64', '--max-num-batched-tokens', '4096', '--input-len', '128', '--output-len', '32', '--concurrency', '8', '--num-prompts', '40', '--json'], t);
  assert.equal(code, 0, t.err());
  const r = JSON.parse(t.out()) as { completed: number; server_config: Record<string, unknown>; max_concurrency: number };
  assert.equal(r.completed, 40);
  assert.equal(r.server_config['max_num_seqs'], 64);
  assert.equal(r.server_config['max_num_batched_tokens'], 4096);
  assert.equal(r.max_concurrency, 8);
});

test('sim run prints a readable table; a workload file and a rate work', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-sim-'));
  const file = join(dir, 'w.yaml');
  writeFileSync(file, 'name: t\ninput_len: { dist: fixed, value: 64 }\noutput_len: { dist: fixed, value: 16 }\narrival: { kind: burst }\nnum_prompts: 10\n');
  const t = io();
  assert.equal(await main([...base, '--workload', file, '--request-rate', '10', '--burstiness', '0.5'], t), 0, t.err());
  assert.match(t.out(), /Successful requests:\s+10/);
  assert.match(t.out(), /Mean TTFT \(ms\)/);
});

test('bad input exits 2 with an error code; a config vLLM refuses exits 3', async () => {
  const cases: [string[], number, RegExp][] = [
    [['sim', 'run', '--gpu', 'Z9', '--model', 'llama-3.1-8b', '--input-len', '1', '--output-len', '1'], 2, /LMB_ERR_UNKNOWN_GPU/],
    [['sim', 'run', '--gpu', 'H100', '--model', 'gpt-9', '--input-len', '1', '--output-len', '1'], 2, /LMB_ERR_UNKNOWN_MODEL/],
    [[...base, '--set', 'warp=9', '--input-len', '1', '--output-len', '1'], 2, /LMB_ERR_UNKNOWN_KNOB/],
    [[...base, '--set', 'gpu_memory_utilization=1.5', '--input-len', '1', '--output-len', '1'], 2, /LMB_ERR_KNOB_OUT_OF_DOMAIN/],
    [[...base, '--workload', '/nonexistent.yaml'], 2, /LMB_ERR_FILE_NOT_FOUND/],
    [[...base, '--input-len', '1'], 2, /LMB_ERR_INVALID_ARGUMENT/],
    [[...base, '--set', 'tensor_parallel_size=2', '--input-len', '1', '--output-len', '1'], 3, /LMB_ERR_STARTUP_FAILED: C1/],
  ];
  for (const [argv, exit, re] of cases) {
    const t = io();
    assert.equal(await main(argv, t), exit, argv.join(' '));
    assert.match(t.err(), re);
  }
});

test('sim serve with a config that cannot start exits 3 with the reason on stderr, like vLLM', () => {
  const res = spawnSync(process.execPath, ['bin/lm-bench.js', 'sim', 'serve', '--gpu', 'L4', '--gpus', '1', '--model', 'llama-3.1-8b', '--port', '0', '--max-num-seqs', '64'], { encoding: 'utf8', timeout: 20000 });
  assert.equal(res.status, 3);
  assert.match(res.stderr, /estimated maximum model length/);
});

test('sim serve says how long its simulated start-up takes and answers only after it, then exits 0 on SIGTERM', async () => {
  // 8B on H100 ≈ 45 s simulated, ÷ speed 10 × scale 0.01 ≈ 45 ms of real time.
  const sim = await startSimServe(['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--speed', '10', '--startup-scale', '0.01', '--profile', 'default']);
  const stderr = sim.startupLog;
  assert.match(stderr, /bound to http:\/\/127\.0\.0\.1:\d+; starting up \(\d+\.\d s simulated × 0\.01 ÷ 10\)/);
  assert.match(stderr, /profile: default/);
  assert.ok(stderr.indexOf('Application startup complete.') < stderr.indexOf('listening on'), 'listening is announced after start-up');
  const res = await fetch(`${sim.url}/health`);
  assert.equal(res.status, 200);
  assert.equal(await sim.close(), 0);
});

test('sim run takes the MoE layout flags: gpt-oss-120b on 8 GPUs as DP 4 × TP 2 with expert parallelism', async () => {
  const t = io();
  const args = ['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '8', '--model', 'gpt-oss-120b', '--tensor-parallel-size', '2', '--data-parallel-size', '4', '--enable-expert-parallel', '--input-len', '256', '--output-len', '32', '--concurrency', '32', '--num-prompts', '64', '--json'];
  assert.equal(await main(args, t), 0, t.err());
  const r = JSON.parse(t.out()) as { completed: number; server_config: Record<string, unknown> };
  assert.equal(r.completed, 64);
  assert.deepEqual([r.server_config['tensor_parallel_size'], r.server_config['data_parallel_size'], r.server_config['enable_expert_parallel']], [2, 4, true]);
  // The MXFP4 checkpoint refuses --quantization fp8 as vLLM does: exit 3 with its reason.
  const bad = io();
  assert.equal(await main([...args, '--quantization', 'fp8'], bad), 3);
  assert.match(bad.err() + bad.out(), /C19.*does not match the quantization method/);
});

test('sim run --vllm-version prices the release named: the fit set’s vLLM 0.12 decodes long contexts slower than a current vLLM', async () => {
  const args = [...base, '--input-len', '3000', '--output-len', '256', '--concurrency', '64', '--num-prompts', '64', '--json'];
  const itl = async (extra: string[]): Promise<{ itl: number; profile: string }> => {
    const t = io();
    assert.equal(await main([...args, ...extra], t), 0, t.err());
    const r = JSON.parse(t.out()) as { median_itl_ms: number; lmb: { sim_profile: string } };
    return { itl: r.median_itl_ms, profile: r.lmb.sim_profile };
  };
  const old = await itl(['--vllm-version', '0.12.0']);
  const now = await itl([]);
  const named = await itl(['--vllm-version', '0.15.1']);
  assert.ok(old.itl > now.itl * 1.1, `ITL ${old.itl.toFixed(2)} ms on 0.12.0 against ${now.itl.toFixed(2)} ms on a current vLLM`);
  assert.equal(named.itl, now.itl, 'no release named is a current one');
  assert.match(old.profile, /vLLM 0\.12\.0/);
  const t = io();
  assert.equal(await main([...args, '--vllm-version', 'latest'], t), 2);
  assert.match(t.err() + t.out(), /LMB_ERR_INVALID_ARGUMENT[^]*--vllm-version/);
});

test('sim run --request-rate inf is a burst, as for `run`; --burstiness inf spaces requests evenly; other text is refused', async () => {
  const small = [...base, '--input-len', '16', '--output-len', '4', '--num-prompts', '12', '--json'];
  const arrival = async (flags: string[]): Promise<{ request_rate: unknown; max_concurrency: unknown; arrival: unknown }> => {
    const t = io();
    assert.equal(await main([...small, ...flags], t), 0, t.err());
    const r = JSON.parse(t.out()) as { request_rate: unknown; max_concurrency: unknown; workload: { arrival: unknown } };
    return { request_rate: r.request_rate, max_concurrency: r.max_concurrency, arrival: r.workload.arrival };
  };
  assert.deepEqual(await arrival(['--request-rate', 'inf']), { request_rate: 'inf', max_concurrency: null, arrival: { kind: 'burst' } });
  assert.deepEqual(await arrival(['--request-rate', 'INF', '--concurrency', '4']), { request_rate: 'inf', max_concurrency: 4, arrival: { kind: 'burst', max_concurrency: 4 } });
  assert.deepEqual((await arrival(['--request-rate', '5', '--burstiness', 'inf'])).arrival, { kind: 'constant', rate_rps: 5 });
  assert.deepEqual((await arrival(['--request-rate', '5', '--burstiness', '0.5'])).arrival, { kind: 'gamma', rate_rps: 5, burstiness: 0.5 });
  const refused: [string[], string, string][] = [
    [['--request-rate', '0x5'], 'request-rate', '0x5'],
    [['--request-rate', '0'], 'request-rate', '0'],
    [['--request-rate', ''], 'request-rate', ''],
    [['--request-rate', '5', '--burstiness', '-inf'], 'burstiness', '-inf'],
    [['--request-rate', '5', '--burstiness', '1e-400'], 'burstiness', '1e-400'],
  ];
  for (const [flags, flag, raw] of refused) {
    const t = io();
    assert.equal(await main([...base, '--input-len', '16', '--output-len', '4', ...flags], t), 2, flags.join(' '));
    assert.match(t.err(), new RegExp(`LMB_ERR_INVALID_ARGUMENT: --${flag} must be a number > 0 or "inf", got "${raw}"`));
  }
});

test('sim run says why requests failed: the refusals of requests longer than max_model_len, with the limit', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-sim-'));
  const file = join(dir, 'w.yaml');
  writeFileSync(file, 'name: t\ninput_len: { dist: uniform, min: 100, max: 3000 }\noutput_len: { dist: fixed, value: 16 }\narrival: { kind: burst }\nnum_prompts: 40\n');
  const t = io();
  assert.equal(await main([...base, '--workload', file, '--max-model-len', '2048'], t), 0, t.err());
  const failed = Number(/Failed requests:\s+(\d+)/.exec(t.out())?.[1]);
  assert.ok(failed > 0 && failed < 40);
  assert.match(t.out(), new RegExp(`\\n  ${failed} × HTTP 400, such as: [^\\n]*prompt \\(\\d+ tokens\\) \\+ max_tokens \\(16\\) > max_model_len \\(2048\\)\\n`));
});
