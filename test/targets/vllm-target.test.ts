import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTarget } from '../../src/targets/factory.js';
import { TargetSpec } from '../../src/targets/spec.js';
import { vllmArgv } from '../../src/targets/vllm-target.js';
import { freeLoopbackPort } from '../../src/targets/slurm/trial-run.js';
import type { TrialInput } from '../../src/targets/types.js';

// A stand-in `vllm` that starts `lm-bench sim serve` with the flags it was given: a real process and real HTTP.
const fakeVllm = fileURLToPath(new URL('../fixtures/targets/vllm', import.meta.url));

const freePort = freeLoopbackPort;

const input: TrialInput = {
  trial_id: 1,
  study: 'vllm-test',
  seed: 5,
  config: { max_num_seqs: 32, max_num_batched_tokens: 2048, enable_prefix_caching: false },
  workload: {
    name: 'tiny',
    api: 'completions',
    input_len: { dist: 'fixed', value: 64 },
    output_len: { dist: 'fixed', value: 16 },
    arrival: { kind: 'closed', concurrency: 4 },
    num_prompts: 12,
    ignore_eos: true,
  },
  hardware: { gpu: 'H100-SXM', count: 1 },
  model: 'llama-3.1-8b',
  slo: {},
};

function spec(port: number, mode: string, extra: Partial<TargetSpec> = {}): TargetSpec {
  return TargetSpec.parse({ kind: 'vllm', executable: fakeVllm, base_port: port, startup_timeout_ms: 20_000, env: { LMB_FAKE_VLLM_MODE: mode, LMB_FAKE_SPEED: '50' }, ...extra });
}

test('the argv carries every knob as vLLM flags, on loopback, with no shell', () => {
  const argv = vllmArgv({ executable: 'vllm', port: 18001, servedModel: 'meta-llama/Llama-3.1-8B-Instruct' }, input);
  assert.deepEqual(argv.slice(0, 3), ['vllm', 'serve', 'meta-llama/Llama-3.1-8B-Instruct']);
  assert.ok(argv.includes('--max-num-seqs') && argv[argv.indexOf('--max-num-seqs') + 1] === '32');
  assert.ok(argv.includes('--no-enable-prefix-caching'));
  assert.deepEqual(argv.slice(-4), ['--host', '127.0.0.1', '--port', '18001']);
  // Off-by-default booleans are left out when false; async scheduling, on by default now, is written off.
  const off = vllmArgv({ executable: 'vllm', port: 18001, servedModel: 'm' }, { ...input, config: { enforce_eager: false, enable_expert_parallel: false, async_scheduling: false } });
  assert.deepEqual(off.slice(3, -4), ['--no-async-scheduling']);
});

test('a launched server is measured, then stopped', async () => {
  const port = await freePort();
  const out = await createTarget(spec(port, 'sim'), 0).runTrial(input);
  assert.equal(out.status, 'ok', out.status === 'failed' ? out.reason : '');
  if (out.status !== 'ok') return;
  assert.equal(out.result.completed, 12);
  assert.equal(out.result.total_output_tokens, 12 * 16);
  assert.deepEqual(out.result.server_config, input.config);
  // The server is gone: its port accepts connections again.
  const again = await new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
  assert.ok(again, 'port released after the trial');
});

test('a server that dies at start-up fails the trial within seconds, with its last lines', async () => {
  const port = await freePort();
  const out = await createTarget(spec(port, 'oom'), 0).runTrial(input);
  assert.equal(out.status, 'failed');
  if (out.status !== 'failed') return;
  assert.equal(out.started, false);
  assert.equal(out.code, 'LMB_ERR_TARGET_LAUNCH_FAILED');
  assert.match(out.reason, /exited 1 before it was healthy: .*CUDA out of memory/s);
  assert.ok(out.durationMs < 5000, `${out.durationMs} ms`);
});

test('a server that dies of a run-time OOM under load fails the trial as a crash, with torch\'s message', async () => {
  const port = await freePort();
  const many = { ...input, config: { gpu_memory_utilization: 0.98 }, workload: { ...input.workload, output_len: { dist: 'fixed' as const, value: 2 }, arrival: { kind: 'closed' as const, concurrency: 16 }, num_prompts: 1500 } };
  const out = await createTarget(spec(port, 'sim', { env: { LMB_FAKE_VLLM_MODE: 'sim', LMB_FAKE_SPEED: '200' } }), 0).runTrial(many);
  assert.equal(out.status, 'failed');
  if (out.status !== 'failed') return;
  assert.equal(out.code, 'LMB_ERR_SERVER_CRASHED');
  assert.equal(out.started, true);
  assert.match(out.reason, /exited 1 during the load run: .*CUDA out of memory/s);
});

test('a configuration the engine refuses exits like vLLM, and the reason names the rule', async () => {
  const port = await freePort();
  const out = await createTarget(spec(port, 'sim'), 0).runTrial({ ...input, config: { max_num_seqs: 512, max_num_batched_tokens: 256 } });
  assert.equal(out.status, 'failed');
  if (out.status === 'failed') assert.match(out.reason, /max_num_batched_tokens \(256\) must be greater than or equal to max_num_seqs \(512\)/);
});

test('a server that never becomes healthy is stopped at the start-up timeout', async () => {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'lmb-vllm-state-'));
  const out = await createTarget(spec(port, 'hang', { startup_timeout_ms: 1500, state_dir: dir }), 0).runTrial(input);
  assert.equal(out.status, 'failed');
  if (out.status === 'failed') assert.match(out.reason, /not healthy after 1500 ms/);
  assert.deepEqual(readdirSync(dir), [], 'pid file removed once the server was stopped');
});

test('a vllm executable that is not there fails the trial naming it, without starting anything', async () => {
  const out = await createTarget(TargetSpec.parse({ kind: 'vllm', executable: '/nonexistent/vllm', base_port: await freePort(), startup_timeout_ms: 20_000 }), 0).runTrial(input);
  assert.equal(out.status, 'failed');
  assert.ok(out.status === 'failed');
  assert.equal(out.code, 'LMB_ERR_TARGET_LAUNCH_FAILED');
  assert.equal(out.started, false);
  assert.match(out.reason, /^--vllm-bin \/nonexistent\/vllm: no such file/);
});

test('a server whose API process dies while its engine process lives on fails at once, and the engine process is stopped', { timeout: 20_000 }, async () => {
  // vLLM's API server starts EngineCore processes that inherit its output: they hold its pipes when it dies.
  const dir = mkdtempSync(join(tmpdir(), 'lmb-vllm-orphan-'));
  const vllm = join(dir, 'vllm');
  const pidFile = join(dir, 'engine.pid');
  writeFileSync(vllm, `#!/bin/sh\nsleep 60 &\necho $! > "${pidFile}"\necho 'RuntimeError: Engine core initialization failed. See root cause above.' >&2\nexit 1\n`);
  chmodSync(vllm, 0o755);
  // A start-up timeout past the test's own: the exit alone must end the wait.
  const out = await createTarget(TargetSpec.parse({ kind: 'vllm', executable: vllm, base_port: await freePort(), startup_timeout_ms: 120_000 }), 0).runTrial(input);
  assert.equal(out.status, 'failed');
  if (out.status === 'failed') assert.match(out.reason, /exited 1 before it was healthy: .*Engine core initialization failed/s);
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  let state = 'gone';
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '';
  } catch {
    // gone
  }
  assert.ok(state === 'gone' || state === 'Z', `the engine process ${pid} still runs (${state})`);
});
