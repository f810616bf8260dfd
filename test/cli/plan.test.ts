import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { PlanAnswer } from '../../src/plan/types.js';
import { captureIo } from '../helpers/cli.js';

// `lm-bench plan` end to end, in process: flags, the JSON document, the HTML page, and bad input.

const CHAT = join(process.cwd(), 'data/workloads/chat.yaml');

async function plan(dir: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo(dir, { HF_HUB_OFFLINE: '1', LMB_DB: join(dir, 'history.db') });
  const code = await main(['plan', '--workload', CHAT, ...args], io);
  return { code, out: io.out(), err: io.err() };
}

test('plan --json: every field of every deployment, best first; --html writes the page; nothing is stored', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-plan-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = await plan(dir, ['--model', 'meta-llama/Llama-3.1-8B-Instruct', '--rate', '20', '--slo', 'ttft_p99_ms=1000,itl_p99_ms=80', '--gpu', 'L40S,NVIDIA H100 80GB HBM3', '--objective', 'gpus', '--vllm-version', '0.12.0', '--html', 'plan.html', '--json']);
  assert.equal(r.code, 0, r.err);
  const a = PlanAnswer.parse(JSON.parse(r.out));
  assert.equal(a.feasible, true);
  assert.equal(r.err, '', 'a feasible plan prints nothing on stderr');
  assert.equal(a.vllm_version, '0.12.0', 'the release imitated is stated');
  assert.deepEqual(a.deployments.map((d) => d.gpu), ['H100-SXM', 'L40S'], 'fewest GPUs first: the H100 (nvidia-smi’s name) needs fewer');
  const keys = ['gpu', 'gpus', 'feasible', 'reason', 'replicas', 'config', 'vllm_command', 'p99_ttft_ms', 'p99_itl_ms', 'max_rate_rps', 'avg_power_w', 'usd_per_hour', 'usd_per_million_output_tokens', 'energy_per_output_token_j', 'source'];
  for (const d of a.deployments) for (const k of keys) assert.ok(k in d, `${d.gpu} lacks ${k}`);
  const html = readFileSync(join(dir, 'plan.html'), 'utf8');
  assert.match(html, /<h1>Plan: meta-llama\/Llama-3\.1-8B-Instruct<\/h1>/);
  assert.match(html, /vllm serve meta-llama\/Llama-3\.1-8B-Instruct/);
  assert.match(html, /<svg/);
  assert.match(html, /imitating vLLM 0\.12\.0/);
  assert.equal(existsSync(join(dir, 'history.db')), false, 'a plan stores nothing');
});

test('plan: bad input fails with its code and names the flag or field', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-plan-bad-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const base = ['--model', 'llama-3.1-8b', '--slo', 'ttft_p99_ms=1000'];
  const unknownGpu = await plan(dir, [...base, '--rate', '5', '--gpu', 'H100-SXM,TPU-v9']);
  assert.equal(unknownGpu.code, 2);
  assert.match(unknownGpu.err, /LMB_ERR_UNKNOWN_GPU.*TPU-v9/);
  for (const rate of ['0', 'NaN', '-3']) {
    const bad = await plan(dir, [...base, `--rate=${rate}`]);
    assert.equal(bad.code, 2, `--rate ${rate}`);
    assert.match(bad.err, /LMB_ERR_INVALID_ARGUMENT: --rate must be a number/);
  }
  const both = await plan(dir, [...base, '--rate', '5', '--users', '10']);
  assert.match(both.err, /give one of --rate R .* or --users N/);
  const release = await plan(dir, [...base, '--rate', '5', '--vllm-version', 'latest-ish']);
  assert.equal(release.code, 2);
  assert.match(release.err, /LMB_ERR_INVALID_ARGUMENT: --vllm-version must be a vLLM release such as 0\.15\.1, got "latest-ish"/);
  const objective = await plan(dir, [...base, '--rate', '5', '--objective', 'cheap']);
  assert.match(objective.err, /--objective must be one of usd_per_mtok, tokens_per_joule, gpus/);
  writeFileSync(join(dir, 'neg.yaml'), 'currency: USD\nprices:\n  - gpu: H100-SXM\n    usd_per_gpu_hour: -1\n    source: test\n    date: 2026-01-01\n');
  const neg = await plan(dir, [...base, '--rate', '5', '--gpu', 'H100-SXM', '--prices', 'neg.yaml']);
  assert.equal(neg.code, 2);
  assert.match(neg.err, /LMB_ERR_CONFIG_INVALID.*neg\.yaml.*prices\.0\.usd_per_gpu_hour/s);
  writeFileSync(join(dir, 'missing.yaml'), 'currency: USD\nprices:\n  - gpu: H100-SXM\n    source: test\n    date: 2026-01-01\n');
  const missing = await plan(dir, [...base, '--rate', '5', '--gpu', 'H100-SXM', '--prices', 'missing.yaml']);
  assert.match(missing.err, /LMB_ERR_CONFIG_INVALID.*missing\.yaml.*usd_per_gpu_hour/s);
});

test('plan: SLOs no size can meet exit 1 with every GPU type infeasible and why', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-plan-slo-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = await plan(dir, ['--model', 'llama-3.1-8b', '--rate', '5', '--slo', 'itl_p99_ms=0.5', '--gpu', 'H100-SXM', '--max-gpus', '2']);
  assert.equal(r.code, 1);
  assert.match(r.out, /✗ H100-SXM: TP 1: misses the SLOs even at .*itl_p99 \d+ ms > 0\.5 ms/);
});

test('plan: nothing feasible is an answer that says why, in text and in --json, and exits 1', async (t) => {
  // A 70B model on L4s: TP 1-4 do not hold the weights, TP 8 misses the SLOs with one user. This exited
  // 1 with nothing on stderr and a JSON document that did not say nothing was feasible.
  const dir = mkdtempSync(join(tmpdir(), 'lmb-plan-none-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const args = ['--model', 'llama-3.1-70b', '--users', '64', '--gpu', 'L4', '--max-gpus', '8'];
  const text = await plan(dir, args);
  assert.equal(text.code, 1);
  assert.match(text.out, /✗ L4: TP 1: .*out of memory.*TP 8: misses the SLOs even with one user/);
  assert.match(text.out, /\nNothing feasible: no GPU type asked about serves 64 users within the SLOs .*\(exit status 1\)/);
  assert.doesNotMatch(text.out + text.err, /lm-bench: error/, 'an answer, not an error');
  const json = await plan(dir, [...args, '--json']);
  assert.equal(json.code, 1);
  const a = PlanAnswer.parse(JSON.parse(json.out));
  assert.equal(a.feasible, false);
  assert.deepEqual(a.deployments.map((d) => [d.gpu, d.feasible]), [['L4', false]]);
  assert.match(a.deployments[0]?.reason ?? '', /TP 8: misses the SLOs/);
  // stdout is the JSON document alone; stderr says why the exit status is 1.
  assert.match(json.err, /^lm-bench plan: nothing feasible: .*\(exit status 1\): L4: TP 1: .*TP 8: misses the SLOs/);
});
