import { join, resolve } from 'node:path';
import { DATA_DIR, defaultCatalog, PROJECT_ROOT } from '../../catalog/index.js';
import { StudySpec, Workload } from '../../domain/index.js';
import { DEFAULT_OBJECTIVES } from '../../optimize/objectives.js';
import { loadSpace } from '../../space/index.js';
import { openStore } from '../../store/sqlite-store.js';
import { identifyResolvedModel, studyModelFields } from '../../store/adopt-model.js';
import { OFFLINE_FLAG, resolveGpuFlag, resolveModelFlag } from '../model-flag.js';
import { runStudy } from '../../tune/study-runner.js';
import { formatSummary, summarizeStudy } from '../../tune/summary.js';
import { explainStudyPick } from '../../tune/explain-study.js';
import { explanationLines } from '../../optimize/simplify-text.js';
import { priorSimulator } from '../../calibration/prior-simulator.js';
import { studyRules } from '../../tune/failure-book.js';
import { loadYamlFile } from '../../util/yaml.js';
import { numberFlag, parseFlags } from '../args.js';
import { writeJson, type Command } from '../io.js';
import { assertOutputDir, writeStudyReport } from '../report-files.js';
import { studyProgress } from '../study-progress.js';
import { usage } from '../usage/demo.js';



export const command: Command = {
  name: 'demo',
  summary: 'the main job on the embedded simulator (what `npm start` runs)',
  usage,
  async run(argv, io) {
    const { values: v } = parseFlags(argv, {
      model: { type: 'string' },
      gpu: { type: 'string' },
      gpus: { type: 'string' },
      workload: { type: 'string' },
      trials: { type: 'string' },
      parallel: { type: 'string' },
      seed: { type: 'string' },
      db: { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean' },
      ...OFFLINE_FLAG,
    });
    const catalog = defaultCatalog();
    const workload = loadYamlFile(v.workload === undefined ? join(DATA_DIR, 'workloads', 'chat.yaml') : resolve(io.cwd, v.workload), Workload);
    // Unknown names fail here, with the catalog's list, before anything is stored.
    const resolved = await resolveModelFlag(v.model ?? 'llama-3.1-8b', io, v.offline);
    const gpu = resolveGpuFlag(v.gpu ?? 'H100-SXM', io);
    const gpus = numberFlag(v.gpus, 'gpus', { int: true, min: 1, max: 64 }) ?? 1;
    const spacePath = join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml');
    const now = Date.now();
    const draft = {
      name: `demo-${new Date(now).toISOString().replace(/[:.]/g, '-')}`,
      space: spacePath,
      hardware: { gpu: gpu.id, count: gpus },
      model: resolved.spec.id,
      workload,
      slo: workload.slo ?? {},
      objectives: [...DEFAULT_OBJECTIVES],
      target: '{"kind":"sim"}',
      seed: numberFlag(v.seed, 'seed', { int: true, min: 0 }) ?? 1,
      budget_trials: numberFlag(v.trials, 'trials', { int: true, min: 1, max: 500 }) ?? 24,
      budget_hours: null,
      parallel: numberFlag(v.parallel, 'parallel', { int: true, min: 1, max: 8 }) ?? 2,
      measure: 'fixed',
    };
    StudySpec.parse(draft);
    // Checked before the study runs, as tune and report do: a file in the report's place would
    // otherwise be found only after every trial.
    const outDir = resolve(io.cwd, v.out ?? join('reports', 'demo'));
    assertOutputDir(outDir, 'out');
    const dbPath = v.db ?? join(io.cwd, '.lm-bench', 'demo.db');
    const store = openStore(dbPath);
    try {
      const spec = StudySpec.parse({ ...draft, ...studyModelFields(identifyResolvedModel(store, resolved, catalog)) });
      const json = v.json === true;
      if (!json) io.stderr.write(`lm-bench demo: tuning ${spec.model} on ${gpus}× ${spec.hardware.gpu} for the "${workload.name}" workload on the simulator (${spec.budget_trials} trials)\n`);
      const progress = studyProgress({ io, store, spec, model: catalog.model(spec.model), json });
      const space = loadSpace(spacePath);
      const { study, summary } = await runStudy({ store, catalog, space, spec, target: { kind: 'sim' }, now: Date.now, onEvent: progress.onEvent, modelSource: resolved });
      progress.finish();
      const out = summarizeStudy({ study: study.study, trials: study.trials(), front: study.bestTrials(), model: catalog.model(spec.model), hardware: catalog.gpu(spec.hardware.gpu), stopReason: summary.reason, numericsChanges: (c) => space.numericsChanges(c), rules: studyRules(store, catalog, study.id) });
      if (!json) io.stderr.write('lm-bench demo: writing the report…\n');
      // The pick defended: flags within the noise back at vLLM's defaults, each remaining one's gain
      // (computed once, for the summary and the report alike).
      const explanation = explainStudyPick({ summary: out, trials: study.trials(), spec, space, catalog, simulator: priorSimulator(store, catalog, spec) });
      const { files } = await writeStudyReport(store, spec.name, outDir, { explanation });
      if (json) writeJson(io, { ...out, explanation, report: files[0] });
      else io.stdout.write(`\n${formatSummary(out)}\n${explanationLines(explanation).join('\n')}\n\nReport: ${files[0] ?? outDir}\nStudy "${spec.name}" is in ${dbPath}; resume it with \`lm-bench tune --study ${spec.name} --db ${dbPath}\`.\n`);
      return 0;
    } finally {
      store.close();
    }
  },
};
