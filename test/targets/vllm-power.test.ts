import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTarget } from '../../src/targets/factory.js';
import { serverPowerSpec } from '../../src/targets/power.js';
import { JobResultFile } from '../../src/targets/slurm/job-files.js';
import { freeLoopbackPort } from '../../src/targets/slurm/trial-run.js';
import { TargetSpec } from '../../src/targets/spec.js';
import type { TrialInput } from '../../src/targets/types.js';

// A server lm-bench starts (the vllm target, a Slurm job's trial-run) has its GPUs' power sampled with
// nvidia-smi over the load run, on the GPUs its environment gives it; without nvidia-smi on PATH the result
// says power is unavailable and why. A stand-in vllm (real process, real HTTP) and a stand-in nvidia-smi.
const fakeVllm = fileURLToPath(new URL('../fixtures/targets/vllm', import.meta.url));
const standInBin = fileURLToPath(new URL('../fixtures/power/bin', import.meta.url));
const bin = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'lmb-vllm-power-'));
// A PATH with only `node` (the stand-in vllm needs it): no nvidia-smi, real or not.
const bare = join(dir, 'bare');
mkdirSync(bare, { recursive: true });
symlinkSync(process.execPath, join(bare, 'node'));
after(() => rmSync(dir, { recursive: true, force: true }));

const input: TrialInput = {
  trial_id: 1,
  study: 'vllm-power',
  seed: 5,
  config: { max_num_seqs: 32, tensor_parallel_size: 2 },
  workload: {
    name: 'tiny',
    api: 'completions',
    input_len: { dist: 'fixed', value: 64 },
    output_len: { dist: 'fixed', value: 16 },
    arrival: { kind: 'closed', concurrency: 4 },
    num_prompts: 24,
    ignore_eos: true,
  },
  hardware: { gpu: 'H100-SXM', count: 2 },
  model: 'llama-3.1-8b',
  slo: {},
};

test('the GPUs counted are those the server sees, else the first TP × DP', () => {
  assert.deepEqual(serverPowerSpec('nvidia', { tensor_parallel_size: 2 }, { CUDA_VISIBLE_DEVICES: '4,5,6' }), { kind: 'nvidia-smi', executable: 'nvidia-smi', gpus: ['4', '5'], interval_ms: 200, expected_gpus: 2 });
  assert.deepEqual(serverPowerSpec('nvidia', { tensor_parallel_size: 2, data_parallel_size: 2 }, {}).gpus, ['0', '1', '2', '3']);
  assert.deepEqual(serverPowerSpec('amd', {}, { HIP_VISIBLE_DEVICES: '3' }), { kind: 'amd-smi', executable: 'amd-smi', gpus: ['3'], interval_ms: 1000, expected_gpus: 1 });
});

test('the vllm target records nvidia-smi power over the load run, on the server\'s GPUs', async () => {
  const argvFile = join(dir, 'smi-argv.json');
  const spec = TargetSpec.parse({
    kind: 'vllm', executable: fakeVllm, base_port: await freeLoopbackPort(), startup_timeout_ms: 20_000,
    env: { LMB_FAKE_SPEED: '50', LMB_FAKE_GPUS: '2', PATH: `${standInBin}${delimiter}${process.env['PATH'] ?? ''}`, CUDA_VISIBLE_DEVICES: '1,2', LMB_FAKE_SMI_WATTS: '90,310,200', LMB_FAKE_SMI_ARGV: argvFile },
  });
  const out = await createTarget(spec, 0).runTrial(input);
  assert.equal(out.status, 'ok', out.status === 'failed' ? out.reason : '');
  if (out.status !== 'ok') return;
  const e = out.result.energy;
  assert.equal(e?.source, 'nvidia-smi');
  assert.equal(e?.unavailable_reason, null);
  assert.equal(e?.gpus, 2);
  assert.ok(Math.abs((e?.avg_power_w ?? 0) - 510) < 1e-6, `${e?.avg_power_w} W: GPUs 1 and 2 only`);
  assert.ok((e?.energy_per_output_token_j ?? 0) > 0);
  assert.deepEqual((JSON.parse(readFileSync(argvFile, 'utf8')) as string[]).slice(-2), ['-i', '1,2']);
});

test('without nvidia-smi on PATH the trial is measured and power is unavailable, saying why', async () => {
  const spec = TargetSpec.parse({ kind: 'vllm', executable: fakeVllm, base_port: await freeLoopbackPort(), startup_timeout_ms: 20_000, env: { LMB_FAKE_SPEED: '50', LMB_FAKE_GPUS: '2', PATH: bare } });
  const out = await createTarget(spec, 0).runTrial(input);
  assert.equal(out.status, 'ok', out.status === 'failed' ? out.reason : '');
  if (out.status !== 'ok') return;
  assert.equal(out.result.completed, 24);
  assert.deepEqual(out.result.energy, { source: 'nvidia-smi', gpus: 2, window: null, avg_power_w: null, energy_j: null, energy_per_output_token_j: null, output_tokens_per_joule: null, unavailable_reason: 'nvidia-smi is not on PATH (no NVIDIA driver tools on this machine?)' });
});

test("a Slurm job's trial-run samples nvidia-smi on its node, into the result file", () => {
  const trialFile = join(dir, 'trial.json');
  const resultFile = join(dir, 'result.json');
  writeFileSync(trialFile, JSON.stringify({ trial: { ...input, config: { max_num_seqs: 32 } }, engine: { kind: 'vllm', command: [fakeVllm], startup_timeout_ms: 30_000 } }));
  const r = spawnSync(process.execPath, [bin, 'trial-run', '--trial', trialFile, '--result', resultFile], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, LMB_FAKE_SPEED: '50', PATH: `${standInBin}${delimiter}${process.env['PATH'] ?? ''}`, CUDA_VISIBLE_DEVICES: '0', LMB_FAKE_SMI_WATTS: '275' },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(resultFile));
  const body = JobResultFile.parse(JSON.parse(readFileSync(resultFile, 'utf8')));
  assert.equal(body.status, 'ok');
  if (body.status !== 'ok') return;
  assert.equal(body.result.energy?.source, 'nvidia-smi');
  assert.equal(body.result.energy?.gpus, 1);
  assert.ok(Math.abs((body.result.energy?.avg_power_w ?? 0) - 275) < 1e-6);
});
