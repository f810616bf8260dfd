import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCatalog } from '../../src/catalog/index.js';
import { JobResultFile, type JobTrialFile } from '../../src/targets/slurm/job-files.js';
import type { TrialInput } from '../../src/targets/types.js';

const bin = fileURLToPath(new URL('../../bin/lm-bench.js', import.meta.url));
const fakeVllm = fileURLToPath(new URL('../fixtures/targets/vllm', import.meta.url));

const trial: TrialInput = {
  trial_id: 7,
  trial_number: 2,
  study: 'trial-run-test',
  seed: 3,
  config: { max_num_seqs: 32 },
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

function runJob(job: JobTrialFile, env: Record<string, string> = {}): { status: number | null; stderr: string; result: JobResultFile | null; resultFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-trial-run-'));
  const trialFile = join(dir, 'trial.json');
  const resultFile = join(dir, 'result.json');
  writeFileSync(trialFile, JSON.stringify(job));
  const r = spawnSync(process.execPath, [bin, 'trial-run', '--trial', trialFile, '--result', resultFile], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
  const result = existsSync(resultFile) ? JobResultFile.parse(JSON.parse(readFileSync(resultFile, 'utf8'))) : null;
  return { status: r.status, stderr: r.stderr, result, resultFile };
}

test('trial-run on the sim engine measures the trial and writes the outcome, exit 0', () => {
  const r = runJob({ trial, engine: { kind: 'sim' } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.result?.status, 'ok');
  if (r.result?.status !== 'ok') return;
  assert.equal(r.result.result.completed, 12);
  assert.ok(r.result.ended_at_ms >= r.result.began_at_ms);
});

test('a trial file carrying a model spec (a model the node’s catalog lacks) runs on it', () => {
  const spec = { ...defaultCatalog().model('llama-3.1-8b'), id: 'acme/llama-like-8b', hf_name: 'Acme/Llama-Like-8B', aliases: [], source: 'a config.json' };
  const r = runJob({ trial: { ...trial, model: spec.id, model_spec: spec }, engine: { kind: 'sim' } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.result?.status, 'ok');
  if (r.result?.status !== 'ok') return;
  assert.equal(r.result.result.model_id, 'Acme/Llama-Like-8B');
  const without = runJob({ trial: { ...trial, model: spec.id }, engine: { kind: 'sim' } });
  assert.notEqual(without.status, 0, 'without the spec the node does not know the model');
});

test('a configuration the engine refuses is a failed outcome with its reason, exit 3', () => {
  const r = runJob({ trial: { ...trial, model: 'llama-3.1-70b', config: { gpu_memory_utilization: 0.5 } }, engine: { kind: 'sim' } });
  assert.equal(r.status, 3, r.stderr);
  assert.equal(r.result?.status, 'failed');
  if (r.result?.status !== 'failed') return;
  assert.equal(r.result.started, false);
  assert.equal(r.result.code, 'LMB_ERR_STARTUP_FAILED');
  assert.match(r.result.reason, /memory/i);
});

test("the vllm engine starts a real server on a free loopback port, loads it and copies its log to the job's output", () => {
  const r = runJob({ trial, engine: { kind: 'vllm', command: [fakeVllm], startup_timeout_ms: 30_000 } }, { LMB_FAKE_SPEED: '50' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.result?.status, 'ok');
  assert.match(r.stderr, /simulated vLLM .* bound to http:\/\/127\.0\.0\.1:\d+/);
});

test('a vllm that dies at start-up fails the trial at once with its last lines', () => {
  const t0 = Date.now();
  const r = runJob({ trial, engine: { kind: 'vllm', command: [fakeVllm], startup_timeout_ms: 600_000 } }, { LMB_FAKE_VLLM_MODE: 'oom' });
  assert.equal(r.status, 3, r.stderr);
  assert.ok(Date.now() - t0 < 30_000, 'did not wait for the start-up timeout');
  assert.equal(r.result?.status, 'failed');
  if (r.result?.status !== 'failed') return;
  assert.equal(r.result.started, false);
  assert.match(r.result.reason, /CUDA out of memory/);
});

test('a trial file that is not one is refused naming the file and field, and no result is written', () => {
  const r = runJob({ trial: { ...trial, seed: -1 }, engine: { kind: 'sim' } });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /LMB_ERR_CONFIG_INVALID/);
  assert.match(r.stderr, /trial\.json/);
  assert.match(r.stderr, /trial\.seed/);
  assert.equal(r.result, null);
});

test('a trial file carrying a GPU datasheet (a GPU the node’s catalog lacks) runs on its figures', () => {
  const hardware_spec = { ...defaultCatalog().gpu('H100-SXM'), id: 'acme-96', name: 'Acme Tensor 96', aliases: [], memory_gb: 96, memory_visible_gib: 95.04, hbm_bandwidth_gbs: 2000, source: 'a datasheet' };
  const job = (t: TrialInput): JobTrialFile => ({ trial: t, engine: { kind: 'sim' } });
  const r = runJob(job({ ...trial, hardware: { gpu: 'acme-96', count: 1 }, hardware_spec }));
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.result?.status, 'ok');
  const h100 = runJob(job(trial));
  assert.ok(r.result?.status === 'ok' && h100.result?.status === 'ok');
  assert.notEqual(r.result.result.output_throughput, h100.result.result.output_throughput, 'priced on the datasheet’s bandwidth, not the H100’s');
  const without = runJob(job({ ...trial, hardware: { gpu: 'acme-96', count: 1 } }));
  assert.notEqual(without.status, 0, 'without the datasheet the node does not know the GPU');
});
