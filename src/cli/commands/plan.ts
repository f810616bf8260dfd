import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultCatalog, registerModel } from '../../catalog/index.js';
import { loadPrices } from '../../cost/prices.js';
import { formatSloString, parseSloString, Workload, type Slo } from '../../domain/index.js';
import { LmBenchError } from '../../errors.js';
import { runPlan } from '../../plan/run-plan.js';
import { figureText, headroomText, planReportHtml } from '../../report/plan.js';
import { outputPath, writeOutput } from './run-output.js';
import { PlanObjective, type PlanAnswer, type PlanDeployment, type PlanTraffic } from '../../plan/types.js';
import { identifyResolvedModel } from '../../store/adopt-model.js';
import { defaultDbPath, openStore, type Store } from '../../store/index.js';
import { loadYamlFile } from '../../util/yaml.js';
import { numberFlag, parseFlags, requireFlag } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { OFFLINE_FLAG, resolveGpuFlag, resolveModelFlag } from '../model-flag.js';
import { vllmVersionFlag } from '../sim-profile-flag.js';
import { DEFAULT_GPUS, usage } from '../usage/plan.js';

const OPTIONS = {
  model: { type: 'string' },
  workload: { type: 'string' },
  rate: { type: 'string' },
  users: { type: 'string' },
  slo: { type: 'string' },
  gpu: { type: 'string' },
  'max-gpus': { type: 'string' },
  objective: { type: 'string' },
  prices: { type: 'string' },
  'vllm-version': { type: 'string' },
  db: { type: 'string' },
  seed: { type: 'string' },
  html: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  ...OFFLINE_FLAG,
} as const;

function traffic(rate: string | undefined, users: string | undefined): PlanTraffic {
  if ((rate === undefined) === (users === undefined)) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'give one of --rate R (requests a second) or --users N (closed-loop users)', { details: { field: 'rate' } });
  if (rate !== undefined) {
    const r = numberFlag(rate, 'rate', { min: Number.MIN_VALUE, max: 1e6 }) as number;
    return { kind: 'rate', rate_rps: r };
  }
  return { kind: 'users', users: numberFlag(users, 'users', { int: true, min: 1, max: 1_000_000 }) as number };
}

const f = (x: number | null, d = 0): string => (x === null ? '–' : x.toFixed(d));

/** Which stretch of the simulated run the throughput, power and J/token are all taken over (types.ts `figures_window`). */
function windowText(w: PlanDeployment['figures_window']): string {
  if (w === null) return '';
  const s = `${w.duration_s.toFixed(0)} s simulated`;
  if (w.rule === 'steady-state') return `, in the steady state (${s})`;
  if (w.rule === 'load') return `, over the whole load (${s}, no steady state)`;
  return ', over the whole run (no power model)';
}

/** The hourly and per-token price, or that none is known: an unpriced GPU is not a free one. */
function priceText(d: PlanDeployment): string {
  if (d.usd_per_hour === null) return `price unknown (no price for ${d.gpu} in data/prices.yaml: give --prices FILE)`;
  return `$${f(d.usd_per_hour, 2)}/h, $${f(d.usd_per_million_output_tokens, 3)} per M output tokens`;
}

function line(d: PlanDeployment, i: number): string {
  if (!d.feasible) return `  ✗ ${d.gpu}: ${d.reason ?? 'infeasible'}`;
  const size = `${d.gpus} GPU${d.gpus === 1 ? '' : 's'} (${d.replicas} × TP ${d.tensor_parallel_size})`;
  const head = headroomText(d) ?? '–';
  return [
    `${i + 1}. ${d.gpu}: ${size}, ${d.source}`,
    `     p99 TTFT ${f(d.p99_ttft_ms)} ms, p99 ITL ${f(d.p99_itl_ms, 1)} ms; headroom ${head}; ${priceText(d)}`,
    `     ${d.output_throughput_tok_s === null ? '–' : figureText(d.output_throughput_tok_s, 0)} output tok/s, ${f(d.avg_power_w)} W, ${f(d.energy_per_output_token_j, 3)} J/token (±${f(d.uncertainty_pct)}%)${windowText(d.figures_window)}`,
    `     ${d.vllm_command ?? ''}`,
  ].join('\n');
}

const trafficText = (a: PlanAnswer): string => (a.traffic.kind === 'rate' ? `${a.traffic.rate_rps} req/s` : `${a.traffic.users} users`);

/** The verdict when no GPU type serves the traffic: a plan's answer, not an error (the exit status is 1). */
const nothingFeasible = (a: PlanAnswer): string => `no GPU type asked about serves ${trafficText(a)} within the SLOs at any size within --max-gpus`;

export function formatPlan(a: PlanAnswer): string {
  const slo = formatSloString(a.slo).replaceAll(',', ', ');
  const release = a.vllm_version === null ? '' : ` on vLLM ${a.vllm_version}`;
  const verdict = a.feasible ? '' : `\nNothing feasible: ${nothingFeasible(a)}; each ✗ above says why, for each tensor-parallel size (exit status 1).\n`;
  return `Plan for ${a.model} at ${trafficText(a)} within ${slo || 'no SLO'}${release}\nRanked: ${a.rule}\n\n${a.deployments.map(line).join('\n')}\n${verdict}`;
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(argv, OPTIONS);
  if (values.help === true) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  const catalog = defaultCatalog();
  const want = traffic(values.rate, values.users);
  const objective = PlanObjective.safeParse(values.objective ?? 'usd_per_mtok');
  if (!objective.success) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--objective must be one of ${PlanObjective.options.join(', ')}, got "${values.objective}"`, { details: { field: 'objective' } });
  const maxGpus = numberFlag(values['max-gpus'], 'max-gpus', { int: true, min: 1, max: 4096 }) ?? 64;
  // Checked before the plan's minutes of simulating, not at the write after them.
  const htmlPath = outputPath('html', values.html, io.cwd);
  const seed = numberFlag(values.seed, 'seed', { int: true, min: 0 }) ?? 1;
  const vllmVersion = vllmVersionFlag(values['vllm-version']);
  const workload = loadYamlFile(resolve(io.cwd, requireFlag(values.workload, 'workload')), Workload, 'LMB_ERR_WORKLOAD_INVALID');
  const slo: Slo = values.slo === undefined ? (workload.slo ?? {}) : parseSloString(values.slo);
  if (Object.keys(slo).length === 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', 'no SLO: give --slo (e.g. ttft_p99_ms=1000,itl_p99_ms=80) or an slo in the workload file; a plan sizes for latency limits', { details: { field: 'slo' } });
  const dbPath = values.db === undefined ? defaultDbPath(io) : resolve(io.cwd, values.db);
  const gpus = [...new Set((values.gpu ?? DEFAULT_GPUS).split(',').map((g) => g.trim()).filter(Boolean).map((g) => resolveGpuFlag(g, io, dbPath).id))];
  if (gpus.length === 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--gpu names no GPU', { details: { field: 'gpu' } });
  const prices = loadPrices(catalog, values.prices === undefined ? undefined : resolve(io.cwd, values.prices));
  const resolved = await resolveModelFlag(requireFlag(values.model, 'model'), io, values.offline);
  // A history is read, never written: a plan stores nothing.
  const store: Store | null = existsSync(dbPath) ? openStore(dbPath, { readonly: true }) : null;
  try {
    const identified = store === null ? resolved : identifyResolvedModel(store, resolved, catalog);
    registerModel(identified.spec, identified.config_hash);
    const modelId = identified.spec.id;
    const tty = io.stderr.isTTY === true && values.json !== true;
    const answer = runPlan(
      { model: modelId, workload, traffic: want, slo, gpus, maxGpus, objective: objective.data, seed, vllmVersion },
      { catalog, prices, store, onGpu: (g, i, n) => void (tty && io.stderr.write(`\rplanned ${g} (${i + 1}/${n})…${i + 1 === n ? '\n' : ''}`)) },
    );
    if (htmlPath !== undefined) writeOutput('html', htmlPath, await planReportHtml(answer, { generatedAt: new Date().toISOString() }));
    if (values.json === true) {
      writeJson(io, answer);
      // stdout holds the JSON document alone; whoever redirects it still reads why the exit status is 1.
      if (!answer.feasible) io.stderr.write(`lm-bench plan: nothing feasible: ${nothingFeasible(answer)} (exit status 1): ${answer.deployments.map((d) => `${d.gpu}: ${d.reason ?? 'infeasible'}`).join(' | ')}\n`);
    } else io.stdout.write(formatPlan(answer));
    return answer.feasible ? 0 : 1;
  } finally {
    store?.close();
  }
}

export const command: Command = { name: 'plan', summary: 'which GPUs, how many, at what price: deployments that serve a traffic within the SLOs, ranked', usage, run };
