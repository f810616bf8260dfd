import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveProfile, saveProfile, storedProfile } from '../../src/calibration/profiles.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import { LmBenchError } from '../../src/errors.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { TargetSpec } from '../../src/targets/spec.js';
import { captureIo } from '../helpers/cli.js';

const catalog = defaultCatalog();
const h100 = catalog.gpu('H100-SXM');
/** A "calibrated" profile far enough from the default that every figure moves: half the bandwidth efficiency. */
const slower = { ...catalog.profileFor(h100), eta_weights: catalog.profileFor(h100).eta_weights / 2, eta_kv: catalog.profileFor(h100).eta_kv / 2 };

test('a stored profile is found for its GPU only; auto falls back to the default, stored refuses', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-profiles-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'h.db'));
  t.after(() => store.close());
  assert.equal(resolveProfile(store, catalog, h100, 'auto').source, 'default (data/sim-profile.yaml)');
  assert.throws(() => resolveProfile(store, catalog, h100, 'stored'), (e: unknown) => e instanceof LmBenchError && e.code === 'LMB_ERR_MODEL_NOT_TRAINED' && /sim calibrate --gpu H100-SXM/.test(e.message));
  const saved = saveProfile(store, { gpu: 'H100-SXM', model: 'llama-3.1-8b', runs: 9, profile: slower, metrics: { 'fit.tpot_mape': 0.04 } });
  assert.deepEqual(storedProfile(store, 'H100-SXM')?.profile, slower);
  assert.equal(storedProfile(store, 'A100-80GB'), null);
  const auto = resolveProfile(store, catalog, h100, 'auto');
  assert.deepEqual(auto.profile, slower);
  assert.match(auto.source, new RegExp(`calibrated for H100-SXM \\(model ${saved.modelId}, 9 runs of llama-3.1-8b\\)`));
  assert.deepEqual(resolveProfile(store, catalog, h100, 'default').profile, catalog.profileFor(h100));
  // The catalog's profile is the release's; a calibrated one describes the user's own vLLM, whatever is named.
  const old = resolveProfile(store, catalog, h100, 'default', '0.12.0');
  assert.deepEqual(old.profile, catalog.profileFor(h100, '0.12.0'));
  assert.match(old.source, /vLLM 0\.12\.0/);
  assert.equal(old.stored, false);
  assert.deepEqual(resolveProfile(store, catalog, h100, 'auto', '0.12.0').profile, slower);
  assert.equal(resolveProfile(store, catalog, h100, 'auto', '0.12.0').stored, true);
  // A newer fit replaces the older one in the GPU's slot.
  saveProfile(store, { gpu: 'H100-SXM', model: null, runs: 12, profile: { ...slower, step_fixed_ms: 1 }, metrics: {} });
  assert.equal(storedProfile(store, 'H100-SXM')?.profile.step_fixed_ms, 1);
});

const WORKLOAD = ['name: tiny', 'api: completions', 'input_len: { dist: fixed, value: 256 }', 'output_len: { dist: fixed, value: 64 }', 'arrival: { kind: closed, concurrency: 8 }', 'num_prompts: 48', 'slo: { ttft_p99_ms: 5000 }'].join('\n');
const RUN = ['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--input-len', '256', '--output-len', '64', '--concurrency', '8', '--num-prompts', '48', '--json'];

test('sim run and tune price the GPU with its calibrated profile; a study keeps the profile it began with', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-profiles-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'h.db');
  writeFileSync(join(dir, 'tiny.yaml'), WORKLOAD);
  const tpot = async (extra: string[]): Promise<{ tpot: number; source: string }> => {
    const io = captureIo(dir);
    assert.equal(await main([...RUN, '--db', db, ...extra], io), 0, io.err());
    const r = JSON.parse(io.out()) as { mean_tpot_ms: number; lmb: { sim_profile: string } };
    return { tpot: r.mean_tpot_ms, source: r.lmb.sim_profile };
  };
  // No store yet: the default, and the store is not created just to look.
  const before = await tpot([]);
  assert.match(before.source, /^default/);
  assert.equal(existsSync(db), false);
  const store = openStore(db);
  saveProfile(store, { gpu: 'H100-SXM', model: 'llama-3.1-8b', runs: 9, profile: slower, metrics: {} });
  store.close();
  const after = await tpot([]);
  assert.match(after.source, /^calibrated for H100-SXM/);
  assert.ok(after.tpot > before.tpot * 1.3, `half the bandwidth efficiency slows decode: ${before.tpot} → ${after.tpot} ms`);
  assert.equal((await tpot(['--profile', 'default'])).tpot, before.tpot);

  const tune = (extra: string[]) => ['tune', '--study', 's', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'tiny.yaml', '--budget-trials', '2', '--sampler', 'random', '--seed', '1', '--no-report', '--db', db, '--json', ...extra];
  const io = captureIo(dir);
  assert.equal(await main(tune([]), io), 0, io.err());
  const read = () => {
    const s = openStore(db, { readonly: true });
    try {
      const study = s.findStudy('s');
      assert.ok(study !== null);
      return { target: TargetSpec.parse(JSON.parse(study.spec.target)), trials: s.listTrials(study.id) };
    } finally {
      s.close();
    }
  };
  const first = read();
  assert.equal(first.target.kind, 'sim');
  assert.ok(first.target.kind === 'sim' && typeof first.target.profile === 'object');
  assert.deepEqual(first.target.kind === 'sim' ? first.target.profile : null, slower);
  const defaults = first.trials.find((tr) => tr.origin === 'default');
  assert.ok(defaults?.result !== null && defaults?.result !== undefined);
  assert.ok(Math.abs(defaults.result.mean_tpot_ms - after.tpot) / after.tpot < 0.1, `the defaults trial ran on the calibrated profile: ${defaults.result.mean_tpot_ms} vs ${after.tpot}`);

  // A newer calibration does not change a study that exists: the same command resumes it as it began.
  const s2 = openStore(db);
  saveProfile(s2, { gpu: 'H100-SXM', model: null, runs: 20, profile: catalog.profileFor(h100), metrics: {} });
  s2.close();
  const again = captureIo(dir);
  assert.equal(await main(tune(['--budget-trials', '2']), again), 0, again.err());
  assert.deepEqual(read().target, first.target);
  const conflict = captureIo(dir);
  assert.equal(await main(['tune', '--study', 's', '--db', db, '--profile', 'default', '--target', 'sim'], conflict), 2);
  assert.match(conflict.err(), /LMB_ERR_STUDY_EXISTS.*--profile default \(the study prices with calibrated for H100-SXM/);
});
