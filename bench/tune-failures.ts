// How many of a study's trials fail to start once the initial design is done (the feasibility model
// and the memory pre-screen at work), on the simulator with the default space. Appends to
// bench/results/tune-failures.md.   node --import tsx bench/tune-failures.ts [--seeds 5] [--budget 24]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultCatalog, PROJECT_ROOT } from '../src/catalog/index.js';
import { StudySpec, Workload } from '../src/domain/index.js';
import { DEFAULT_OBJECTIVES } from '../src/optimize/objectives.js';
import { loadSpace } from '../src/space/index.js';
import { openStore } from '../src/store/index.js';
import { runStudy } from '../src/tune/study-runner.js';
import { loadYamlFile } from '../src/util/yaml.js';

const { values: argv } = parseArgs({ options: { seeds: { type: 'string' }, budget: { type: 'string' } } });
const SEEDS = Number(argv.seeds ?? 5);
const BUDGET = Number(argv.budget ?? 24);
const catalog = defaultCatalog();
const spacePath = join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml');
const space = loadSpace(spacePath);
const CASES = [
  { gpu: 'H100-SXM', gpus: 8, model: 'llama-3.1-8b', workload: 'chat' },
  { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat' },
  { gpu: 'A100-80GB', gpus: 1, model: 'qwen2.5-7b', workload: 'summarize' },
  { gpu: 'A100-40GB', gpus: 4, model: 'llama-3.1-70b', workload: 'chat' },
];
const rows: string[] = [];
for (const c of CASES) {
  let initial = 0;
  let initialFailed = 0;
  let after = 0;
  let afterFailed = 0;
  let crashed = 0;
  let repeatCrashes = 0;
  let afterFirstCrash = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    const workload = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', `${c.workload}.yaml`), Workload);
    const spec = StudySpec.parse({ name: `f-${seed}`, space: spacePath, hardware: { gpu: c.gpu, count: c.gpus }, model: c.model, workload, slo: workload.slo ?? {}, objectives: [...DEFAULT_OBJECTIVES], target: '{"kind":"sim"}', seed, budget_trials: BUDGET, budget_hours: null, parallel: 2 });
    const { study } = await runStudy({ store: openStore(':memory:'), catalog, space, spec, target: { kind: 'sim' }, now: Date.now });
    let seenCrash = false;
    for (const t of study.trials()) {
      const design = t.origin === 'default' || t.origin === 'space_filling' || t.origin === 'simulated' || t.origin === 'history';
      const failedStart = t.state === 'failed' && t.started === false;
      const crash = t.state === 'failed' && t.started === true;
      if (crash) crashed++;
      // Once a run-time OOM has been seen, its rule should keep the same crash from coming back.
      if (seenCrash) {
        afterFirstCrash++;
        if (crash) repeatCrashes++;
      }
      if (crash) seenCrash = true;
      if (design) {
        initial++;
        if (failedStart) initialFailed++;
      } else {
        after++;
        if (failedStart) afterFailed++;
      }
    }
  }
  const row = `| ${c.model}, ${c.gpus}× ${c.gpu}, ${c.workload} | ${initialFailed}/${initial} | ${afterFailed}/${after} (${after === 0 ? '–' : ((afterFailed / after) * 100).toFixed(1)}%) | ${crashed}/${initial + after} | ${repeatCrashes}/${afterFirstCrash} |`;
  rows.push(row);
  console.log(row);
}
writeFileSync(
  join(PROJECT_ROOT, 'bench', 'results', 'tune-failures.md'),
  [
    '# Failed starts after the initial design',
    '',
    `\`node --import tsx bench/tune-failures.ts --seeds ${SEEDS} --budget ${BUDGET}\`: ${SEEDS} studies of ${BUDGET} trials (2 in parallel) per case on the simulator with search-spaces/vllm.yaml. Initial design = vLLM defaults + the simulator's picks (at most a quarter of the budget). A crash is a trial that started and then died of the simulator's run-time OOM (src/physics/runtime-oom.ts); each becomes an oom_runtime rule (gpu_memory_utilization at least as high, at the same TP and quantization), and the last column counts crashes among the trials after a study's first.`,
    '',
    '| case | failed to start: initial design | failed to start: model-proposed trials | crashed under load (run-time OOM), all trials | crashes after the first crash |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n'),
);
