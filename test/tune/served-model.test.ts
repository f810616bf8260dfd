import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { resolveModel } from '../../src/catalog/resolve-model.js';
import { priorSimulator } from '../../src/calibration/prior-simulator.js';
import { CHECKPOINT_PLACEHOLDER, StudySpec, type ServerConfig } from '../../src/domain/index.js';
import { valuesFromResult } from '../../src/optimize/study.js';
import { simulate } from '../../src/sim/index.js';
import { loadSpace } from '../../src/space/index.js';
import { adoptResolvedModel, studyModelFields } from '../../src/store/adopt-model.js';
import { openStore } from '../../src/store/index.js';
import { explainStudyPick } from '../../src/tune/explain-study.js';
import { trialInputOf } from '../../src/tune/study-runner.js';
import { formatSummary, summarizeStudy, type StudySummary } from '../../src/tune/summary.js';
import { shellWords } from '../helpers/shell.js';
import { specOf } from '../report/study/fixture.js';

/**
 * `tune --model DIR/my-model.json` serves the model as `recommend` does (domain/served-model.ts): vLLM
 * cannot serve DIR (no config.json of this model's there), so the summary's and the explanation's
 * commands name a placeholder and say why; a checkpoint's directory is served as it is. The study is
 * built as the tuning loop records it (the model adopted as `tune` adopts it, each trial simulated
 * in-process and told to a real SQLite history), without the loop.
 */

const FIXTURE = join(PROJECT_ROOT, 'test', 'fixtures', 'hf-configs', 'llama-3.2-1b.json');
const catalog = defaultCatalog();

/** A finished two-trial study of the model `--model` names, its summary and explanation as `tune` computes them. */
async function studyOf(dir: string, name: string, modelArg: string): Promise<{ summary: StudySummary; explained: string | null; source: string | undefined }> {
  const store = openStore(join(dir, `${name}.db`));
  try {
    const resolved = await resolveModel(modelArg, { catalog, env: {}, cwd: dir, offline: true });
    const adopted = adoptResolvedModel(store, resolved, catalog);
    const base = specOf(name);
    // SLOs every run meets: the study has a pick whatever the simulator's figures.
    const spec = StudySpec.parse({ ...base, ...studyModelFields(adopted), workload: { ...base.workload, num_prompts: 40 }, slo: { ttft_p99_ms: 600_000 } });
    const created = store.createStudy(spec);
    const configs: [ServerConfig, 'default' | 'space_filling'][] = [
      [{}, 'default'],
      [{ max_num_seqs: 32 }, 'space_filling'],
    ];
    for (const [config, origin] of configs) {
      const trial = store.createTrial(created.id, { config, origin, state: 'running' });
      const input = trialInputOf(spec, trial);
      const out = simulate({ config, hardware: input.hardware, model: input.model, workload: input.workload, seed: input.seed, catalog });
      assert.ok(out.ok, JSON.stringify(out));
      store.completeTrial(trial.id, { values: valuesFromResult(out.result, spec.objectives, spec.slo, spec.hardware.count), result: out.result });
    }
    store.setStudyState(created.id, 'done');
    // As `tune` summarises it: the study read back, the model looked up by the study's id.
    const study = store.getStudy(name);
    const trials = store.listTrials(study.id);
    const summary = summarizeStudy({ study, trials, front: [], model: catalog.model(study.spec.model), hardware: catalog.gpu(study.spec.hardware.gpu), stopReason: 'budget' });
    const space = loadSpace(study.spec.space);
    const explanation = explainStudyPick({ summary, trials, spec: study.spec, space, catalog, simulator: priorSimulator(null, catalog, study.spec) });
    return { summary, explained: explanation.vllm_command, source: study.spec.model_spec?.source };
  } finally {
    store.close();
  }
}

test('a study of `--model DIR/my-model.json`: its summary and explanation serve a placeholder, never DIR, and say why', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-served-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'my-model.json');
  copyFileSync(FIXTURE, file);
  const { summary, explained, source } = await studyOf(dir, 'served-json', './my-model.json');
  // The study keeps the file the model was read from (StudySpec.model_spec): what the rule reads.
  assert.equal(source, file);
  const rec = summary.recommendation;
  assert.ok(rec !== null, 'the study has a pick');
  const commands = [rec.vllm_command, rec.precision_keeping?.vllm_command, explained].filter((c): c is string => c !== null && c !== undefined);
  for (const c of commands) {
    const argv = shellWords(c);
    assert.deepEqual(argv.slice(0, 3), ['vllm', 'serve', CHECKPOINT_PLACEHOLDER], c);
    assert.ok(!argv.includes(dir), c);
  }
  assert.match(rec.vllm_config_yaml, new RegExp(`^model: ${CHECKPOINT_PLACEHOLDER}$`, 'm'));
  assert.ok(rec.warnings.some((w) => w.includes(file) && w.includes(CHECKPOINT_PLACEHOLDER)), JSON.stringify(rec.warnings));
  // The printed summary: the placeholder command, the warning beside it, and DIR nowhere.
  const text = formatSummary(summary);
  assert.ok(text.includes(`  vllm serve '${CHECKPOINT_PLACEHOLDER}'`) || text.includes(`  vllm serve ${CHECKPOINT_PLACEHOLDER}`), text);
  assert.ok(text.split('\n').some((l) => l.startsWith('  Warning: the model was read from ') && l.includes(file)), text);
  assert.ok(!text.includes(`serve ${dir}`) && !text.includes(`serve '${dir}'`), text);
});

test('a study of a checkpoint directory: its summary serves the directory, with no warning', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-served-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ckpt = join(dir, 'ckpt');
  mkdirSync(ckpt);
  copyFileSync(FIXTURE, join(ckpt, 'config.json'));
  const { summary, explained } = await studyOf(dir, 'served-dir', './ckpt');
  const rec = summary.recommendation;
  assert.ok(rec !== null, 'the study has a pick');
  for (const c of [rec.vllm_command, explained].filter((x): x is string => x !== null)) assert.equal(shellWords(c)[2], ckpt, c);
  assert.match(rec.vllm_config_yaml, new RegExp(`^model: ${ckpt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
  assert.deepEqual(rec.warnings, []);
  assert.ok(!formatSummary(summary).includes(CHECKPOINT_PLACEHOLDER));
});
