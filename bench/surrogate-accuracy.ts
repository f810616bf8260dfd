/**
 * Surrogate accuracy on simulated history: ≥ 300 noisy runs across configurations, models and
 * workloads on A100-80GB and H100-SXM, k-fold MAPE on held-out configurations, then the same model
 * trained on A100 + H100 and tested on H200 runs it never saw.
 *
 *   node --import tsx bench/surrogate-accuracy.ts [--runs-per-cell N] [--folds K] [--rounds N] [--depth D] [--eta E]
 *
 * Writes its table into bench/results/model.md (between the accuracy markers).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { defaultCatalog, PROJECT_ROOT } from '../src/catalog/index.js';
import { Workload, type HardwareRef } from '../src/domain/index.js';
import { datasetFromObservations } from '../src/surrogate/dataset.js';
import { simulateHistory, withLoad, type SimHistoryCell } from '../src/surrogate/sim-history.js';
import { DEFAULT_SURROGATE_SPEC, fitSurrogate } from '../src/surrogate/surrogate.js';
import type { TargetName } from '../src/surrogate/targets.js';
import { crossValidate, evaluateSurrogate, sustainAccuracy, tallyClassifiers, type TargetScore } from '../src/surrogate/validate.js';
import { spaceEncoder, spaceSource } from '../src/optimize/space-source.js';
import { loadSpace } from '../src/space/index.js';
import { createRng } from '../src/util/rng.js';
import { createFitPool, poolFit } from '../src/surrogate/fit-pool.js';
import { loadYamlFile } from '../src/util/yaml.js';
import { writeSection } from './lib/results.js';

const { values } = parseArgs({ options: { 'runs-per-cell': { type: 'string' }, folds: { type: 'string' }, rounds: { type: 'string' }, depth: { type: 'string' }, eta: { type: 'string' } } });
const perCell = Number(values['runs-per-cell'] ?? 14);
const folds = Number(values.folds ?? 5);

const catalog = defaultCatalog();
const space = loadSpace(`${PROJECT_ROOT}/search-spaces/vllm.yaml`);
const wl = (n: string): Workload => loadYamlFile(`${PROJECT_ROOT}/data/workloads/${n}.yaml`, Workload);
const workloads = [
  withLoad(wl('chat'), { concurrency: 16 }),
  wl('chat'),
  withLoad(wl('chat'), { concurrency: 128 }),
  wl('summarize'),
  wl('code'),
  withLoad(wl('code'), { rateRps: 6 }),
];
const models = ['llama-3.1-8b', 'qwen2.5-7b', 'llama-3.2-3b'];
const rng = createRng(2026);
/** Memory-edge configurations outside the space's domain, so the history holds launch failures (C12–C14) too. */
const PROBES = [{ gpu_memory_utilization: 0.99 }, { gpu_memory_utilization: 0.3 }, { gpu_memory_utilization: 0.25, max_model_len: 131072 }];

function cells(gpus: readonly HardwareRef[], n: number): SimHistoryCell[] {
  const out: SimHistoryCell[] = [];
  for (const hardware of gpus) {
    for (const model of models) {
      for (const workload of workloads) {
        const ctx = { hardware: catalog.gpu(hardware.gpu), gpuCount: hardware.count, model: catalog.model(model), workload };
        const src = spaceSource(space, ctx);
        const r = rng.fork(`${hardware.gpu}-${model}-${workload.name}`);
        // Spread configs: the defaults plus space samples (a third of cells per model to keep the run short).
        if (r.next() > 0.5) continue;
        out.push({ hardware, model, workload, configs: [{}, ...src.sample(n - 1, r), ...PROBES] });
      }
    }
  }
  return out;
}

const t0 = performance.now();
const trainCells = cells([{ gpu: 'A100-80GB', count: 1 }, { gpu: 'H100-SXM', count: 1 }], perCell);
const testCells = cells([{ gpu: 'H200', count: 1 }], Math.ceil(perCell / 2));
const trainObs = simulateHistory(trainCells, catalog, rng.fork('train'));
const testObs = simulateHistory(testCells, catalog, rng.fork('test'));
const simS = (performance.now() - t0) / 1000;
const encoder = spaceEncoder(space);
const train = datasetFromObservations(trainObs, catalog, encoder);
const test = datasetFromObservations(testObs, catalog, encoder);
const started = (rows: typeof train.rows): number => rows.filter((r) => r.started).length;
console.error(`simulated ${trainObs.length} + ${testObs.length} runs in ${simS.toFixed(1)} s (${started(train.rows)} + ${started(test.rows)} started)`);

const spec = {
  ...DEFAULT_SURROGATE_SPEC,
  xgb: {
    ...DEFAULT_SURROGATE_SPEC.xgb,
    ...(values.rounds === undefined ? {} : { rounds: Number(values.rounds) }),
    ...(values.depth === undefined ? {} : { maxDepth: Number(values.depth) }),
    ...(values.eta === undefined ? {} : { eta: Number(values.eta) }),
  },
};
const t1 = performance.now();
const pool = createFitPool({ threads: 2 });
const cv = await crossValidate(train.rows, train.featureNames, spec, { folds, rng: rng.fork('cv'), fit: poolFit(pool) });
await pool.close();
const cvS = (performance.now() - t1) / 1000;
const t2 = performance.now();
// The final model carries the k-fold interval calibration, as `lm-bench surrogate train` saves it.
const full = { ...(await fitSurrogate(train.rows, train.featureNames, spec, rng.fork('full'))), intervalScale: cv.interval_scale };
const fitS = (performance.now() - t2) / 1000;
const transfer = evaluateSurrogate(full, test.rows);
const saturated = (rows: typeof train.rows): number => rows.filter((r) => r.started && r.saturated === true).length;
/** Share of H200 started runs whose keep-up verdict the trained model calls right (null when none saturated). */
const sustainOnTest = sustainAccuracy(tallyClassifiers(full, test.rows));
const pct1 = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);

const goals: Partial<Record<TargetName, [number, number]>> = {
  output_throughput: [0.1, 0.2],
  output_throughput_per_gpu: [0.1, 0.2],
  ttft_p99_ms: [0.15, 0.2],
  itl_p99_ms: [0.15, 0.2],
};
const pct = (s: TargetScore | undefined): string => (s === undefined || Number.isNaN(s.mape) ? '–' : `${(s.mape * 100).toFixed(1)}%`);
const r2 = (s: TargetScore | undefined): string => (s === undefined || Number.isNaN(s.r2) ? '–' : s.r2.toFixed(3));
const cov = (s: TargetScore | undefined): string => (s === undefined || Number.isNaN(s.coverage) ? '–' : `${(s.coverage * 100).toFixed(0)}%`);
const lines: string[] = [];
lines.push('## Surrogate accuracy (simulated history)', '');
lines.push('```', 'node --import tsx bench/surrogate-accuracy.ts', '```', '');
lines.push(
  `History: ${trainObs.length} simulated runs on A100-80GB and H100-SXM (${started(train.rows)} started; ${models.join(', ')}; ` +
    `${workloads.map((w) => w.name).join(', ')}; the vLLM defaults, configurations sampled from the pruned space and 3 memory-edge probes per cell; ` +
    `step-time noise σ 0.03 and host stalls, a fresh seed per run) and ${testObs.length} on H200 (${started(test.rows)} started). ` +
    `Ensembles of ${spec.members} × ${spec.xgb.rounds ?? ''} trees (depth ${spec.xgb.maxDepth ?? ''}) per target, log(measured ÷ physics baseline) targets.`,
  '',
);
lines.push(`| target | ${folds}-fold MAPE (held-out configs) | R² | raw ±2σ coverage | σ scale | A100+H100 → H200 MAPE | R² | calibrated ±2σ coverage on H200 | goal (held-out / H200) |`);
lines.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const t of Object.keys(cv.targets) as TargetName[]) {
  const g = goals[t];
  const scale = cv.interval_scale[t];
  lines.push(
    `| ${t} | ${pct(cv.targets[t])} | ${r2(cv.targets[t])} | ${cov(cv.targets[t])} | ${scale === undefined ? '–' : scale.toFixed(2)} | ${pct(transfer[t])} | ${r2(transfer[t])} | ${cov(transfer[t])} | ${g === undefined ? '' : `≤ ${g[0] * 100}% / ≤ ${g[1] * 100}%`} |`,
  );
}
lines.push('');
lines.push('σ scale: the factor k-fold validation finds to widen the ensemble spread so ±2σ covers 95% of held-out values (saved with the model, used by `recommend`); the H200 column checks that calibration on GPUs the model never saw.');
lines.push(`Feasibility classifier held-out accuracy: ${cv.feasibility_accuracy === null ? 'n/a (every run started)' : `${(cv.feasibility_accuracy * 100).toFixed(1)}%`}.`);
lines.push(
  `Sustain classifier (did the run keep up with its arrivals): ${saturated(train.rows)} of ${started(train.rows)} started runs saturated (${saturated(test.rows)} of ${started(test.rows)} on H200); ` +
    `held-out accuracy ${cv.sustain_accuracy === null ? 'n/a (no run saturated)' : `${(cv.sustain_accuracy * 100).toFixed(1)}%`}, on H200 ${pct1(sustainOnTest)}. ` +
    'A saturated run trains no TTFT or E2E regressor (its queue figures grow with the run\'s length), so those rows score runs that kept up.',
);
const imp = Object.entries(cv.importance).sort((a, b) => b[1] - a[1]);
lines.push(`Permutation importance (rise in held-out MAPE, mean over targets, shuffling a knob's encoded columns only; the physics features carry most of each knob's effect, so these are small): ${imp.map(([k, v]) => `${k} ${(v * 100).toFixed(1)} pp`).join(', ')}.`);
lines.push(`Costs: simulation ${simS.toFixed(1)} s, ${folds}-fold validation ${cvS.toFixed(1)} s, final fit ${fitS.toFixed(1)} s on the main thread; fold fits ran in 2 piscina workers (2-core machine shared with other work, load average ${loadavg()[0]?.toFixed(1) ?? '?'}).`);
writeSection('model.md', 'accuracy', lines.join('\n'), 'Surrogate and optimizer benchmarks');
console.log(lines.join('\n'));
