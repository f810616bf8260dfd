/**
 * `lm-bench plan` (issue 25; goal: an answer in ≤ 60 s on this 2-core machine). Runs the CLI as a user
 * would (spawn to exit, `--json`), with an empty history, for:
 *
 * 1. Llama-3.1-8B, the chat workload, 20 req/s, TTFT p99 ≤ 1 s and ITL p99 ≤ 80 ms, over H100-SXM,
 *    A100-80GB, L40S and B200 (the issue's question), and the same at 40 req/s: no GPU type may need
 *    fewer GPUs at twice the traffic;
 * 2. the 8B question ranked by joules per output token instead of $ per million tokens;
 * 3. Llama-3.1-70B at 2 req/s within 2 GPUs: the GPU types that cannot hold it say why.
 *
 *   node --import tsx bench/plan.ts
 *
 * Simulated only: nothing leaves this machine. Writes bench/results/plan.md.
 */
import { spawn } from 'node:child_process';
import { loadavg, cpus } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../src/catalog/index.js';
import { PlanAnswer } from '../src/plan/types.js';
import { writeSection } from './lib/results.js';

const BIN = join(PROJECT_ROOT, 'bin', 'lm-bench.js');
const CHAT = join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml');
const GPUS = 'H100-SXM,A100-80GB,L40S,B200';

async function plan(args: readonly string[]): Promise<{ wallS: number; answer: PlanAnswer }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, 'plan', '--workload', CHAT, '--db', join(PROJECT_ROOT, 'bench', '.no-history.db'), '--json', ...args], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HF_HUB_OFFLINE: '1' } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  const wallS = (performance.now() - t0) / 1000;
  if (code !== 0 && code !== 1) throw new Error(`plan ${args.join(' ')} exited ${String(code)}: ${err}`);
  return { wallS, answer: PlanAnswer.parse(JSON.parse(out)) };
}

const f = (x: number | null, d = 0): string => (x === null ? '–' : x.toFixed(d));

function table(a: PlanAnswer): string {
  const head = '| GPU | GPUs | replicas × TP | p99 TTFT (ms) | p99 ITL (ms) | headroom (req/s) | power (W) | $/h | $/M output tokens | J/token | why not |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |';
  const rows = a.deployments.map((d) =>
    d.feasible
      ? `| ${d.gpu} | ${d.gpus} | ${d.replicas} × ${d.tensor_parallel_size} | ${f(d.p99_ttft_ms)} | ${f(d.p99_itl_ms, 1)} | ${f(d.max_rate_rps, 1)} | ${f(d.avg_power_w)} | ${f(d.usd_per_hour, 2)} | ${f(d.usd_per_million_output_tokens, 3)} | ${f(d.energy_per_output_token_j, 3)} | |`
      : `| ${d.gpu} | – | – | – | – | – | – | – | – | – | ${d.reason ?? ''} |`,
  );
  return [head, ...rows].join('\n');
}

const slo = ['--slo', 'ttft_p99_ms=1000,itl_p99_ms=80'];
const at20 = await plan(['--model', 'llama-3.1-8b', '--rate', '20', ...slo, '--gpu', GPUS]);
const at40 = await plan(['--model', 'llama-3.1-8b', '--rate', '40', ...slo, '--gpu', GPUS]);
const joules = await plan(['--model', 'llama-3.1-8b', '--rate', '20', ...slo, '--gpu', GPUS, '--objective', 'tokens_per_joule']);
const big = await plan(['--model', 'llama-3.1-70b', '--rate', '2', '--slo', 'ttft_p99_ms=2000,itl_p99_ms=100', '--gpu', GPUS, '--max-gpus', '2']);

const gpusOf = (a: PlanAnswer, g: string): number | null => a.deployments.find((d) => d.gpu === g)?.gpus ?? null;
const monotone = GPUS.split(',').map((g) => `${g}: ${gpusOf(at20.answer, g) ?? '–'} → ${gpusOf(at40.answer, g) ?? '–'}`);
const fewer = GPUS.split(',').filter((g) => (gpusOf(at40.answer, g) ?? Infinity) < (gpusOf(at20.answer, g) ?? 0));
const fields = ['gpu', 'gpus', 'feasible', 'reason', 'replicas', 'config', 'vllm_command', 'p99_ttft_ms', 'p99_itl_ms', 'max_rate_rps', 'avg_power_w', 'usd_per_hour', 'usd_per_million_output_tokens', 'energy_per_output_token_j', 'source'];
const missing = at20.answer.deployments.flatMap((d) => fields.filter((k) => !(k in d)).map((k) => `${d.gpu}.${k}`));

const body = `Machine: ${cpus().length} cores, Node ${process.version}, load average ${loadavg()[0]?.toFixed(1)} at the end. Goal: ≤ 60 s per answer.
Reproduce: \`node --import tsx bench/plan.ts\` (the CLI, spawn to exit, empty history, prices from data/prices.yaml).

| question | wall time (s) |
| --- | --- |
| Llama-3.1-8B, chat, 20 req/s, 4 GPU types | ${at20.wallS.toFixed(1)} |
| the same at 40 req/s | ${at40.wallS.toFixed(1)} |
| the same at 20 req/s, \`--objective tokens_per_joule\` | ${joules.wallS.toFixed(1)} |
| Llama-3.1-70B, 2 req/s, \`--max-gpus 2\` | ${big.wallS.toFixed(1)} |

Every field of the issue's JSON present in every deployment: ${missing.length === 0 ? 'yes' : `no (${missing.join(', ')})`}.
GPUs needed at 20 → 40 req/s: ${monotone.join('; ')}; fewer at 40 than at 20: ${fewer.length === 0 ? 'none' : fewer.join(', ')}.

### Llama-3.1-8B, 20 req/s, ranked by $ per million output tokens

${table(at20.answer)}

### 40 req/s

${table(at40.answer)}

### 20 req/s, ranked by joules per output token

${table(joules.answer)}

### Llama-3.1-70B within 2 GPUs

${table(big.answer)}

Figures are the simulator's (source \`estimated\`, ±${f(at20.answer.deployments[0]?.uncertainty_pct ?? null)}% at 2σ on throughput-derived
figures; power from the ML.ENERGY-fitted power model, docs/calibration.md). $/M tokens is at the target traffic: the deployment's
hourly price over the output tokens that traffic asks for.`;

writeSection('plan.md', 'plan', body, 'lm-bench plan');
console.log(body);
