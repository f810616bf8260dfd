/**
 * Calibration table: the simulator against public vLLM measurements in data/calibration/ (slices of
 * upstream files, each folder with a README naming its source). Writes docs/calibration.md.
 * Run: node --import tsx scripts/calibrate.ts
 *
 * Sources:
 * - vllm-nightly/*.json: vLLM 0.5.3.post1 / 0.5.5 nightly serving benchmarks on
 *   A100-SXM4-80GB, 500 ShareGPT prompts at QPS 2/4/8/16/inf (Llama-3-8B TP1, Llama-3-70B TP4, Mixtral-8x7B TP2).
 * - llm-inference-bench/All_results.csv: vLLM, Meta-Llama-3-8B, 1 GPU, batch B of in = out = L tokens.
 * - splitwise/perf_model.csv: Llama-2-70B prompt and per-token times by batch and TP.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT, defaultCatalog } from '../src/catalog/index.js';
import type { ModelSpec, ServerConfig, Workload } from '../src/domain/index.js';
import { simulate } from '../src/sim/index.js';

const DATA = join(PROJECT_ROOT, 'data', 'calibration');
const catalog = defaultCatalog();

interface Point {
  readonly source: string;
  readonly point: string;
  readonly metric: string;
  readonly measured: number;
  readonly simulated: number;
}
const points: Point[] = [];

function sim(gpu: string, count: number, model: string | ModelSpec, config: ServerConfig, workload: Workload) {
  const out = simulate({ config, hardware: { gpu, count }, model, workload, seed: 1, catalog });
  if (!out.ok) throw new Error(`${gpu} ${JSON.stringify(config)}: ${out.failure.message}`);
  return out.result;
}

// 1. vLLM nightly (A100-80GB, ShareGPT, 500 prompts).
interface NightlyRow {
  'Test name': string;
  'Tput (req/s)': number;
  'Mean TTFT (ms)': number;
  'Mean TPOT (ms)': number;
  'Output Tput (tok/s)': number;
  'Total input tokens': number;
  'Total output tokens': number;
  Engine: string;
}
const nightlyDir = join(DATA, 'vllm-nightly');
for (const file of readdirSync(nightlyDir).filter((f) => f.endsWith('.json')).sort()) {
  const rows = JSON.parse(readFileSync(join(nightlyDir, file), 'utf8')) as NightlyRow[];
  for (const row of rows) {
    const m = /_(llama8B|llama70B|mixtral8x7B)_tp(\d)_sharegpt_qps_(\w+)$/.exec(row['Test name']);
    if (m === null) continue;
    const [, name, tp, qps] = m as unknown as [string, string, string, string];
    const model = name === 'llama8B' ? 'llama-3.1-8b' : name === 'llama70B' ? 'llama-3.1-70b' : 'mixtral-8x7b';
    const meanIn = row['Total input tokens'] / 500;
    const meanOut = row['Total output tokens'] / 500;
    const workload: Workload = {
      name: 'sharegpt',
      api: 'completions',
      input_len: { dist: 'lognormal', mean: meanIn, std: meanIn * 1.1, min: 4, max: 1024 },
      output_len: { dist: 'lognormal', mean: meanOut, std: meanOut * 1.1, min: 4, max: 1024 },
      arrival: qps === 'inf' ? { kind: 'burst' } : { kind: 'poisson', rate_rps: Number(qps) },
      num_prompts: 500,
      ignore_eos: true,
    };
    // Llama-3 (not 3.1) has an 8k context; the nightly ran each model at its native length.
    const r = sim('A100-80GB', Number(tp), model, { tensor_parallel_size: Number(tp), max_model_len: 8192 }, workload);
    const label = `${row.Engine} ${name} TP${tp} qps=${qps}`;
    points.push({ source: 'vllm-nightly', point: label, metric: 'request throughput (req/s)', measured: row['Tput (req/s)'], simulated: r.request_throughput });
    points.push({ source: 'vllm-nightly', point: label, metric: 'mean TTFT (ms)', measured: row['Mean TTFT (ms)'], simulated: r.mean_ttft_ms });
    points.push({ source: 'vllm-nightly', point: label, metric: 'mean TPOT (ms)', measured: row['Mean TPOT (ms)'], simulated: r.mean_tpot_ms });
  }
}

// 2. LLM-Inference-Bench: vLLM, Meta-Llama-3-8B, one GPU, a batch of B prompts of L in / L out.
const lib = readFileSync(join(DATA, 'llm-inference-bench', 'All_results.csv'), 'utf8').trim().split('\n').slice(1);
const LIB_GPU: Record<string, string> = { 'Nvidia A100 GPU': 'A100-40GB', 'Nvidia H100 GPU': 'H100-SXM' };
for (const line of lib) {
  const [hw, n, fw, model, len, batch, , thr] = line.split(',');
  if (fw !== 'vLLM' || model !== 'meta-llama/Meta-Llama-3-8B' || n !== '1' || hw === undefined) continue;
  const gpu = LIB_GPU[hw];
  const L = Number(len);
  const B = Number(batch);
  if (gpu === undefined || ![128, 1024].includes(L) || ![1, 16, 64].includes(B)) continue;
  const workload: Workload = { name: 'lib', api: 'completions', input_len: { dist: 'fixed', value: L }, output_len: { dist: 'fixed', value: L }, arrival: { kind: 'burst' }, num_prompts: B, ignore_eos: true };
  const r = sim(gpu, 1, 'llama-3.1-8b', { max_model_len: 8192 }, workload);
  points.push({ source: 'LLM-Inference-Bench', point: `${gpu} L=${L} B=${B}`, metric: 'throughput (in+out tok/s)', measured: Number(thr), simulated: r.total_token_throughput });
}

// 3. Splitwise: Llama-2-70B (not in the catalog: Llama-3.1-70B's shape with Llama-2's vocab and context).
const llama2: ModelSpec = { ...catalog.model('llama-3.1-70b'), id: 'llama-2-70b', vocab_size: 32000, params_b: 68.98, active_params_b: 68.98, linear_params_b: 68.72, native_context: 4096 };
const sw = readFileSync(join(DATA, 'splitwise', 'perf_model.csv'), 'utf8').trim().split('\n');
const header = (sw[0] ?? '').split(',');
const col = (name: string): number => header.indexOf(name);
const seen = new Set<string>();
for (const line of sw.slice(1)) {
  const f = line.split(',');
  const hw = f[col('hardware')];
  const tp = Number(f[col('tensor_parallel')]);
  const prompt = Number(f[col('prompt_size')]);
  const batch = Number(f[col('batch_size')]);
  const tokens = Number(f[col('token_size')]);
  if (f[col('model')] !== 'llama2-70b' || (hw !== 'a100-80gb' && hw !== 'h100-80gb') || prompt !== 1024 || tokens !== 128 || ![1, 16].includes(batch) || ![4, 8].includes(tp)) continue;
  const key = `${hw}/${tp}/${batch}`;
  if (seen.has(key)) continue; // five repetitions per point: the first stands for them
  seen.add(key);
  const gpu = hw === 'a100-80gb' ? 'A100-80GB' : 'H100-SXM';
  const workload: Workload = { name: 'splitwise', api: 'completions', input_len: { dist: 'fixed', value: prompt }, output_len: { dist: 'fixed', value: tokens }, arrival: { kind: 'burst' }, num_prompts: batch, ignore_eos: true };
  const r = sim(gpu, tp, llama2, { tensor_parallel_size: tp }, workload);
  const label = `${gpu} TP${tp} prompt=${prompt} batch=${batch}`;
  points.push({ source: 'splitwise', point: label, metric: 'prompt time (ms) vs mean TTFT', measured: Number(f[col('prompt_time')]), simulated: r.mean_ttft_ms });
  points.push({ source: 'splitwise', point: label, metric: 'token time (ms) vs mean TPOT', measured: Number(f[col('token_time')]), simulated: r.mean_tpot_ms });
}

const err = (p: Point): number => ((p.simulated - p.measured) / p.measured) * 100;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? 0 : s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const groups = new Map<string, Point[]>();
for (const p of points) {
  const k = `${p.source} · ${p.metric}`;
  groups.set(k, [...(groups.get(k) ?? []), p]);
}
const fmt = (x: number): string => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));
let md = `# Calibration: simulated vs measured

Generated by \`node --import tsx scripts/calibrate.ts\` from the public measurements in
\`data/calibration/\` (see each folder's README for source, commit and licence). Every point is simulated once (seed 1) with vLLM V1
defaults except the knobs the source states (TP, and max_model_len 8192 for Llama-3 / 4096 for Llama-2).
Error = (simulated − measured) / measured.

## Summary: median error per source and metric

| source · metric | points | median signed error | median |error| |
| --- | --- | --- | --- |
`;
for (const [k, ps] of groups) md += `| ${k} | ${ps.length} | ${median(ps.map(err)).toFixed(1)}% | ${median(ps.map((p) => Math.abs(err(p)))).toFixed(1)}% |\n`;
md += `| **all** | ${points.length} | ${median(points.map(err)).toFixed(1)}% | ${median(points.map((p) => Math.abs(err(p)))).toFixed(1)}% |\n`;
md += `
## Why the errors are what they are

- **vLLM nightly (0.5.3.post1 / 0.5.5, V0 engine, A100-80GB)**: the simulator models the V1 engine
  (unified token budget, async scheduling, CUDA graphs for mixed batches, little CPU overhead). V0 spent
  a large share of each step on the CPU (reference K9/K11: 38% GPU time before v0.6), so the measured
  TPOT is markedly higher than the simulated one, most at high QPS where steps are short. TTFT at low QPS
  includes V0's separate prefill scheduling and API-server overhead. These rows are a lower bound on how
  far V1 moved, not a target to fit; the sim factors were not tuned to them.
- **LLM-Inference-Bench** (vLLM ≈0.4–0.5, Argonne): "Nvidia A100 GPU" is taken as A100-40GB (the single-
  stream rate, 140 tok/s of in+out at L=128, fits 40 GB's bandwidth); the H100 variant is not stated (SXM assumed).
  The batch is submitted at once, so prefill of all B prompts and the decode tail both count.
- **Splitwise** (Llama-2-70B, their own measurements, 2023–24 stack; only batch 1 exists at prompt 1024 /
  128 tokens): measured per-token time hardly changes from TP4 to TP8 (44.9 → 44.5 ms on A100), i.e. that
  stack was bound by per-step overheads that do not shrink with TP, while the simulator's decode step
  halves with the weights per GPU. The same flat scaling shows in Lambda's K7 (reference §8). The
  simulator's all-reduce and fixed costs (reference §13.2 values) are probably too small for such stacks;
  they were kept because V1 removed much of that overhead and no V1 TP-scaling measurement is in the data.

## Every point

| source | point | metric | measured | simulated | error |
| --- | --- | --- | --- | --- | --- |
`;
for (const p of points) md += `| ${p.source} | ${p.point} | ${p.metric} | ${fmt(p.measured)} | ${fmt(p.simulated)} | ${err(p).toFixed(1)}% |\n`;
writeFileSync(join(PROJECT_ROOT, 'docs', 'calibration.md'), md);
console.log(md.split('## Why')[0]);
