import { resolve } from 'node:path';
import { PROJECT_ROOT, defaultCatalog } from '../../catalog/index.js';
import { Workload, parseSloString, type Slo } from '../../domain/index.js';
import { LmBenchError, toLmBenchError } from '../../errors.js';
import { loadLatestSurrogate } from '../../model/train.js';
import { recommend, type Interval, type Recommendation } from '../../optimize/recommend.js';
import { spaceEncoder, spaceSource } from '../../optimize/space-source.js';
import { loadSpace } from '../../space/index.js';
import { defaultDbPath, openStore } from '../../store/index.js';
import { createRng } from '../../util/rng.js';
import { loadYamlFile } from '../../util/yaml.js';
import { numberFlag, parseFlags, requireFlag } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';

const USAGE = `Usage:
  lm-bench recommend --gpu GPU --gpus N --model MODEL --workload FILE [--slo ttft_p99_ms=350,itl_p99_ms=50]
                     [--db PATH] [--space FILE] [--candidates N] [--seed S] [--json]

The best configuration the trained surrogate predicts for this deployment under the SLOs (default: the
workload file's slo), with ±2σ intervals, the Pareto set it came from, the \`vllm serve\` command line and
a \`vllm serve --config\` YAML. Says when the history is too thin to trust and which runs to do next.`;

const OPTIONS = {
  gpu: { type: 'string' },
  gpus: { type: 'string' },
  model: { type: 'string' },
  workload: { type: 'string' },
  slo: { type: 'string' },
  db: { type: 'string' },
  space: { type: 'string' },
  candidates: { type: 'string' },
  seed: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const iv = (i: Interval | undefined): string => (i === undefined ? '–' : `${fmt(i.mean)} [${fmt(i.low)}, ${fmt(i.high)}]`);

function text(rec: Recommendation): string {
  const lines: string[] = [];
  if (rec.best === null) lines.push('No configuration is predicted to start and meet the SLOs.');
  else {
    const p = rec.best.predicted;
    lines.push('Recommended configuration (predicted mean [±2σ]):');
    lines.push(`  output throughput per GPU  ${iv(p.output_throughput_per_gpu)} tok/s`);
    lines.push(`  p99 TTFT                   ${iv(p.ttft_p99_ms)} ms`);
    lines.push(`  p99 ITL                    ${iv(p.itl_p99_ms)} ms`);
    lines.push(`  P(starts) ${(rec.best.pStart * 100).toFixed(0)}%, P(meets SLOs) ${(rec.best.pMeetsSlo * 100).toFixed(0)}%`);
    lines.push('', `  vllm ${(rec.vllmArgs ?? []).join(' ')}`, '', '  # vllm serve --config config.yaml', ...(rec.vllmConfigYaml ?? '').trimEnd().split('\n').map((l) => `  ${l}`));
  }
  if (rec.pareto.length > 0) {
    lines.push('', `Pareto set (${rec.pareto.length}): throughput/GPU vs p99 TTFT`);
    for (const c of rec.pareto.slice(0, 10)) {
      const knobs = Object.entries(c.config).map(([k, v]) => `${k}=${String(v)}`).join(' ');
      lines.push(`  ${fmt(c.predicted.output_throughput_per_gpu?.mean ?? 0).padStart(7)} tok/s  ${fmt(c.predicted.ttft_p99_ms?.mean ?? 0).padStart(7)} ms  ${knobs}`);
    }
  }
  if (rec.trust.level === 'thin') {
    lines.push('', 'Do not trust this yet:', ...rec.trust.reasons.map((r) => `  - ${r}`));
    if (rec.trust.runNext.length > 0) {
      lines.push('Measure these next (most expected improvement under the SLOs):');
      for (const c of rec.trust.runNext) lines.push(`  lm-bench run … ${Object.entries(c).map(([k, v]) => `--set ${k}=${String(v)}`).join(' ')}`);
    }
  }
  lines.push('', `(${rec.candidatesScored} candidates scored)`);
  return lines.join('\n');
}

function runSync(argv: readonly string[], io: CliIo): number {
  const { values } = parseFlags(argv, OPTIONS);
  if (values.help === true) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const catalog = defaultCatalog();
  const hardware = catalog.gpu(requireFlag(values.gpu, 'gpu'));
  const gpuCount = numberFlag(requireFlag(values.gpus, 'gpus'), 'gpus', { int: true, min: 1, max: 64 }) ?? 1;
  const model = catalog.model(requireFlag(values.model, 'model'));
  const workload = loadYamlFile(resolve(io.cwd, requireFlag(values.workload, 'workload')), Workload, 'LMB_ERR_WORKLOAD_INVALID');
  let slo: Slo;
  try {
    slo = values.slo === undefined ? (workload.slo ?? {}) : parseSloString(values.slo);
  } catch (err) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--slo: ${err instanceof Error ? err.message : String(err)}`, { cause: err, details: { field: 'slo' } });
  }
  const space = loadSpace(values.space === undefined ? resolve(PROJECT_ROOT, 'search-spaces/vllm.yaml') : resolve(io.cwd, values.space));
  const store = openStore(values.db === undefined ? defaultDbPath(io) : resolve(io.cwd, values.db));
  try {
    const { record, surrogate } = loadLatestSurrogate(store);
    const encoder = spaceEncoder(space);
    const context = { hardware, gpuCount, model, workload };
    const historyRuns = store.countRuns({ model: model.id, gpu: hardware.id, gpuCount });
    const mape = record.metrics['output_throughput_per_gpu.mape'];
    const rec = recommend({
      surrogate,
      context,
      encoder,
      source: spaceSource(space, context),
      slo,
      historyRuns,
      validationMape: mape ?? null,
      rng: createRng(numberFlag(values.seed, 'seed', { int: true, min: 0 }) ?? 0),
      candidates: numberFlag(values.candidates, 'candidates', { int: true, min: 100, max: 1_000_000 }) ?? 20_000,
    });
    if (values.json === true) writeJson(io, { model_id: record.id, slo, ...rec });
    else io.stdout.write(`${text(rec)}\n`);
    return 0;
  } finally {
    store.close();
  }
}

function run(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return Promise.resolve(runSync(argv, io));
  } catch (err) {
    return Promise.reject(toLmBenchError(err));
  }
}

export const command: Command = {
  name: 'recommend',
  summary: 'the best predicted vLLM configuration under the SLOs, from the trained model',
  usage: USAGE,
  run,
};
