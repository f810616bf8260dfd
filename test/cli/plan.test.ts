import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import { Workload, type BenchmarkResult } from '../../src/domain/index.js';
import { simRun } from '../../src/plan/run-plan.js';
import { PlanAnswer, type PlanDeployment } from '../../src/plan/types.js';
import { openStore } from '../../src/store/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';
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

test('plan: closed-loop users on a server twice as fast as simulated (history) get its tok/s, $/M and power alike in text, --json and HTML', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-plan-measured-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // Two measured runs of the 8B on an H100 that decode twice as fast as the simulator says.
  const catalog = defaultCatalog();
  const workload: Workload = { ...loadYamlFile(CHAT, Workload, 'LMB_ERR_WORKLOAD_INVALID'), arrival: { kind: 'closed', concurrency: 8 }, num_prompts: 150 };
  const s = simRun(catalog)({ config: { tensor_parallel_size: 1 }, gpu: 'H100-SXM', gpus: 1, model: catalog.model('llama-3.1-8b'), workload, seed: 1 }).result as BenchmarkResult;
  const store = openStore(join(dir, 'measured.db'));
  for (const i of [1, 2]) {
    const faster: BenchmarkResult = { ...s, mean_tpot_ms: s.mean_tpot_ms / 2, lmb: { ...s.lmb, source: 'loadgen' } };
    store.storeRuns([{ result: faster, serverConfig: { tensor_parallel_size: 1 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, sourceFormat: 'lm_bench', sourcePath: null, contentHash: `measured-${i}` }]);
  }
  store.close();
  const args = ['--model', 'llama-3.1-8b', '--users', '32', '--slo', 'ttft_p99_ms=1000,itl_p99_ms=80', '--gpu', 'H100-SXM', '--max-gpus', '1'];
  const deployment = (out: string): PlanDeployment => PlanAnswer.parse(JSON.parse(out)).deployments[0] as PlanDeployment;
  const est = deployment((await plan(dir, [...args, '--db', 'none.db', '--json'])).out);
  const json = await plan(dir, [...args, '--db', 'measured.db', '--json', '--html', 'plan.html']);
  assert.equal(json.code, 0, json.err);
  const d = deployment(json.out);
  assert.equal(est.source, 'estimated');
  assert.equal(d.source, 'measured');
  const tokS = d.output_throughput_tok_s as number;
  // Before: the simulated tok/s and $/M, beside a power that alone followed the speed (halved above idle).
  assert.ok(tokS > 1.5 * (est.output_throughput_tok_s as number), `${tokS} tok/s against ${est.output_throughput_tok_s} estimated`);
  assert.ok((d.usd_per_million_output_tokens as number) < (est.usd_per_million_output_tokens as number) / 1.5, 'cheaper per token as it is faster');
  assert.ok(Math.abs((d.usd_per_million_output_tokens as number) / (((d.usd_per_hour as number) / (tokS * 3600)) * 1e6) - 1) < 1e-9, '$/M = $/h ÷ tok/s');
  assert.ok(Math.abs((d.avg_power_w as number) / ((d.energy_per_output_token_j as number) * tokS) - 1) < 1e-9, 'W = J/token × tok/s');
  // The text prints the same figures.
  const text = await plan(dir, [...args, '--db', 'measured.db']);
  assert.equal(text.code, 0, text.err);
  assert.ok(text.out.includes(`H100-SXM: 1 GPU (1 × TP 1), measured`), text.out);
  assert.ok(text.out.includes(`p99 TTFT ${(d.p99_ttft_ms as number).toFixed(0)} ms, p99 ITL ${(d.p99_itl_ms as number).toFixed(1)} ms`), text.out);
  assert.ok(text.out.includes(`$${(d.usd_per_hour as number).toFixed(2)}/h, $${(d.usd_per_million_output_tokens as number).toFixed(3)} per M output tokens`), text.out);
  assert.ok(text.out.includes(`${tokS.toFixed(0)} output tok/s, ${(d.avg_power_w as number).toFixed(0)} W, ${(d.energy_per_output_token_j as number).toFixed(3)} J/token`), text.out);
  // And the HTML table (numbers at its own precision: html.ts `cell`).
  const html = readFileSync(join(dir, 'plan.html'), 'utf8');
  for (const [what, cell] of [
    ['tok/s', tokS.toFixed(1)],
    ['W', (d.avg_power_w as number).toFixed(1)],
    ['$/M', (d.usd_per_million_output_tokens as number).toPrecision(4)],
    ['J/token', (d.energy_per_output_token_j as number).toPrecision(4)],
  ] as const) {
    assert.ok(html.includes(`>${cell}<`), `${what} ${cell} in the HTML table`);
  }
});
