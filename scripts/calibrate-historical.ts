/**
 * The older public tables of data/calibration/ (vLLM 0.5 nightly on A100, LLM-Inference-Bench, Splitwise):
 * stacks from 2023–24 that spent much of each step on the CPU, so they bound how far vLLM V1 moved rather
 * than being fit targets. Simulated with the fitted profile, seed 1, vLLM V1 defaults except the knobs
 * each source states.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Catalog } from '../src/catalog/index.js';
import { withOverrides, type ModelSpec, type ProfileParam, type ServerConfig, type SimProfile, type Workload } from '../src/domain/index.js';
import { simulate } from '../src/sim/index.js';

interface Point {
  readonly source: string;
  readonly point: string;
  readonly metric: string;
  readonly measured: number;
  readonly simulated: number;
}

/** `overrides`: each GPU's `sim:` overrides, applied on top of `profile` as the simulator does by default. */
export function historicalPoints(profile: SimProfile, dataDir: string, catalog: Catalog, overrides: Readonly<Record<string, Partial<Record<ProfileParam, number | undefined>> | undefined>> = {}): { summary: string; table: string } {
  const points: Point[] = [];
  const sim = (gpu: string, count: number, model: string | ModelSpec, config: ServerConfig, workload: Workload) => {
    const out = simulate({ config, hardware: { gpu, count }, model, workload, seed: 1, catalog, profile: withOverrides(profile, overrides[gpu]), runtimeFailures: false });
    if (!out.ok) throw new Error(`${gpu} ${JSON.stringify(config)}: ${out.failure.message}`);
    return out.result;
  };
  interface NightlyRow {
    'Test name': string;
    'Tput (req/s)': number;
    'Mean TTFT (ms)': number;
    'Mean TPOT (ms)': number;
    'Total input tokens': number;
    'Total output tokens': number;
    Engine: string;
  }
  const nightlyDir = join(dataDir, 'vllm-nightly');
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
  const lib = readFileSync(join(dataDir, 'llm-inference-bench', 'All_results.csv'), 'utf8').trim().split('\n').slice(1);
  const LIB_GPU: Record<string, string> = { 'Nvidia A100 GPU': 'A100-40GB', 'Nvidia H100 GPU': 'H100-SXM' };
  for (const line of lib) {
    const [hw, , , , len, batch, , thr] = line.split(',');
    const gpu = hw === undefined ? undefined : LIB_GPU[hw];
    if (gpu === undefined) continue;
    const L = Number(len);
    const B = Number(batch);
    const workload: Workload = { name: 'lib', api: 'completions', input_len: { dist: 'fixed', value: L }, output_len: { dist: 'fixed', value: L }, arrival: { kind: 'burst' }, num_prompts: B, ignore_eos: true };
    const r = sim(gpu, 1, 'llama-3.1-8b', { max_model_len: 8192 }, workload);
    points.push({ source: 'LLM-Inference-Bench', point: `${gpu} L=${L} B=${B}`, metric: 'throughput (in+out tok/s)', measured: Number(thr), simulated: r.total_token_throughput });
  }
  // Splitwise: Llama-2-70B (not in the catalog: Llama-3.1-70B's shape with Llama-2's vocab and context).
  const llama2: ModelSpec = { ...catalog.model('llama-3.1-70b'), id: 'llama-2-70b', vocab_size: 32000, params_b: 68.98, active_params_b: 68.98, linear_params_b: 68.72, native_context: 4096 };
  const sw = readFileSync(join(dataDir, 'splitwise', 'perf_model.csv'), 'utf8').trim().split('\n');
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
  for (const p of points) groups.set(`${p.source} · ${p.metric}`, [...(groups.get(`${p.source} · ${p.metric}`) ?? []), p]);
  const fmt = (x: number): string => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));
  const summary = `The vLLM 0.5 nightly (V0 engine, A100-80GB, ShareGPT), LLM-Inference-Bench (vLLM ≈0.4–0.5, batches submitted at
once) and Splitwise (Llama-2-70B, their own 2023–24 stack) tables, simulated with the fitted profile. V0 spent a
large share of each step on the CPU and scheduled prefills separately, so its TPOT is markedly higher than a V1
engine's; these are bounds on how far V1 moved, not targets.

| source · metric | points | median signed error | median abs. error |
| --- | --- | --- | --- |
${[...groups].map(([k, ps]) => `| ${k} | ${ps.length} | ${median(ps.map(err)).toFixed(1)}% | ${median(ps.map((p) => Math.abs(err(p)))).toFixed(1)}% |`).join('\n')}`;
  const table = `## Every point of the older tables

| source | point | metric | measured | simulated | error |
| --- | --- | --- | --- | --- | --- |
${points.map((p) => `| ${p.source} | ${p.point} | ${p.metric} | ${fmt(p.measured)} | ${fmt(p.simulated)} | ${err(p).toFixed(1)}% |`).join('\n')}`;
  return { summary, table };
}
