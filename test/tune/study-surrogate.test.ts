import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { SURROGATE_KIND, selectSurrogate, studySlot } from '../../src/surrogate/registry.js';
import { analyzeStudy } from '../../src/report/study/index.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { captureIo } from '../helpers/cli.js';
import { SMALL_CHAT_WORKLOAD_YAML } from '../helpers/workloads.js';

/**
 * A study leaves what the next command needs: its surrogate, saved as it refits and, validated, when it
 * ends; `recommend` answers from it with no `model train`, and the report reads it instead of fitting.
 */
const WORKLOAD = SMALL_CHAT_WORKLOAD_YAML;

test('tune saves its surrogate; recommend then answers from it, and the report reads it without fitting', { timeout: 240_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-study-model-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'small.yaml'), WORKLOAD);
  const db = join(dir, 'h.db');
  const deployment = ['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'small.yaml'];

  // Before any study, nothing covers this deployment: the simulator answers, and says so.
  const before = captureIo(dir);
  assert.equal(await main(['recommend', ...deployment, '--db', db, '--json'], before), 0, before.err());
  const cold = JSON.parse(before.out()) as { surrogate_id: number | null; source: { kind: string }; best: { config: Record<string, unknown> } | null; measure_next: unknown[] };
  assert.deepEqual([cold.surrogate_id, cold.source.kind], [null, 'simulator']);
  assert.ok(cold.best !== null && cold.measure_next.length >= 2 && cold.measure_next.length <= 3);
  const text = captureIo(dir);
  assert.equal(await main(['recommend', ...deployment, '--db', db], text), 0);
  assert.match(text.out(), /Answered by the simulator, from \d+ simulated runs .*SIMULATED, not measured/);
  assert.match(text.out(), /Measure these next \(the runs that would most change this answer/);

  const tune = captureIo(dir);
  assert.equal(await main(['tune', '--study', 's1', ...deployment, '--budget-trials', '13', '--seed', '3', '--no-report', '--db', db, '--json'], tune), 0, tune.err());
  // The end of the study defends its pick: the flags that matter, from vLLM's measured defaults.
  const ended = JSON.parse(tune.out()) as { recommendation: { config: Record<string, unknown> } | null; explanation: { simplification: { before: { changed: Record<string, unknown> }; after: { changed: Record<string, unknown> } } | null; attribution: { defaults: { source: string | null } } | null } };
  assert.ok(ended.recommendation !== null && ended.explanation.simplification !== null && ended.explanation.attribution !== null);
  for (const [k, v] of Object.entries(ended.explanation.simplification.after.changed)) assert.equal(ended.explanation.simplification.before.changed[k], v, k);
  assert.equal(ended.explanation.attribution.defaults.source, 'measured', 'the study measured vLLM’s defaults first');

  const store = openStore(db);
  t.after(() => store.close());
  const models = store.listModels(SURROGATE_KIND);
  // One model in the study's slot, however many times it refitted: the last, validated one.
  assert.equal(models.filter((m) => m.slot === studySlot('s1')).length, 1);
  const saved = models.find((m) => m.slot === studySlot('s1'));
  assert.ok(saved !== undefined);
  assert.equal(saved.metadata['validated'], true);
  assert.deepEqual(saved.metadata['scope'], { gpu: 'H100-SXM', model: 'llama-3.1-8b' });
  assert.ok(typeof saved.metrics['output_throughput_per_gpu.mape'] === 'number');
  assert.ok(Array.isArray(saved.metadata['held_out']) && (saved.metadata['held_out'] as unknown[]).length > 0);
  // It covers this deployment, and no other model's.
  assert.equal(selectSurrogate(models, { gpu: 'H100-SXM', model: 'llama-3.1-8b' })?.id, saved.id);
  assert.equal(selectSurrogate(models, { gpu: 'A100-80GB', model: 'llama-3.1-8b' }), null);

  const rec = captureIo(dir);
  assert.equal(await main(['recommend', ...deployment, '--db', db, '--candidates', '2000', '--json'], rec), 0, rec.err());
  const answer = JSON.parse(rec.out()) as { surrogate_id: number; source: { study: string | null; validated: boolean }; rule: string; best: unknown };
  assert.equal(answer.surrogate_id, saved.id);
  assert.deepEqual([answer.source.study, answer.source.validated], ['s1', true]);
  assert.match(answer.rule, /highest lower bound/);

  const count = store.listModels().length;
  const a = analyzeStudy(store, 's1', { catalog: defaultCatalog(), withLatency: false, withPrune: false });
  assert.ok(a.model.available);
  if (a.model.available) {
    assert.equal(a.model.modelId, saved.id);
    assert.equal(a.model.parityMethod, 'cross_validation');
    assert.equal(a.model.parity.length, (saved.metadata['held_out'] as unknown[]).length, 'parity is the saved held-out set');
  }
  assert.equal(store.listModels().length, count, 'the report saved (and so fitted) nothing');
});

test('tune --keep-precision never proposes a configuration that changes the checkpoint’s numerics, and the spec remembers it', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-keep-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'small.yaml'), WORKLOAD);
  const db = join(dir, 'k.db');
  const io = captureIo(dir);
  const args = ['tune', '--study', 'k', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'small.yaml', '--budget-trials', '10', '--seed', '5', '--keep-precision', '--no-report', '--db', db, '--json'];
  assert.equal(await main(args, io), 0, io.err());
  const out = JSON.parse(io.out()) as { recommendation: { numerics_changes: string[]; precision_keeping: unknown } | null };
  const store = openStore(db);
  t.after(() => store.close());
  const study = store.getStudy('k');
  assert.equal(study.spec.keep_precision, true);
  const trials = store.listTrials(study.id);
  assert.equal(trials.length, 10);
  for (const tr of trials) {
    assert.ok(tr.config.quantization === undefined || tr.config.quantization === 'none', JSON.stringify(tr.config));
    assert.ok(tr.config.kv_cache_dtype === undefined || tr.config.kv_cache_dtype === 'auto', JSON.stringify(tr.config));
  }
  assert.ok(out.recommendation !== null);
  assert.deepEqual(out.recommendation.numerics_changes, []);
  assert.equal(out.recommendation.precision_keeping, null);
});
