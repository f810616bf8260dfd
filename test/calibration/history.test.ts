import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CALIBRATE_PARAMS } from '../../src/calibration/history.js';
import { storedProfile } from '../../src/calibration/profiles.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import type { ServerConfig, SimProfile, Workload } from '../../src/domain/index.js';
import { simulate } from '../../src/sim/index.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { captureIo } from '../helpers/cli.js';
import { SimCalibrateJson } from '../../src/cli/json-output.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';

const catalog = defaultCatalog();
const start = catalog.profileFor(catalog.gpu('H100-SXM'));
/** The "real" deployment: slower memory and compute, and more per-step overhead than the default profile. */
const truth: SimProfile = { ...start, eta_weights: 0.62, mfu_bf16: 0.47, mfu_fp8: 0.41, step_fixed_ms: 1.1 };

const load = (isl: number, osl: number, concurrency: number): Workload => ({
  name: `fixed-${isl}-${osl}-c${concurrency}`,
  api: 'completions',
  input_len: { dist: 'fixed', value: isl },
  output_len: { dist: 'fixed', value: osl },
  arrival: { kind: 'closed', concurrency },
  num_prompts: 3 * concurrency,
  ignore_eos: true,
});

/** Runs a user might have: two models, two precisions, short and long prompts, light and heavy load. */
const RUNS: { model: string; gpus: number; config: ServerConfig; workload: Workload }[] = [
  { model: 'llama-3.1-8b', gpus: 1, config: {}, workload: load(256, 48, 1) },
  { model: 'llama-3.1-8b', gpus: 1, config: {}, workload: load(4096, 24, 1) },
  { model: 'llama-3.1-8b', gpus: 1, config: {}, workload: load(1024, 48, 16) },
  { model: 'llama-3.1-8b', gpus: 1, config: { max_num_seqs: 64 }, workload: load(512, 48, 48) },
  { model: 'llama-3.1-8b', gpus: 1, config: { quantization: 'fp8' }, workload: load(4096, 24, 2) },
  { model: 'llama-3.1-8b', gpus: 1, config: { quantization: 'fp8' }, workload: load(256, 48, 8) },
  { model: 'qwen3-14b', gpus: 1, config: {}, workload: load(2048, 32, 4) },
  { model: 'qwen3-14b', gpus: 1, config: {}, workload: load(256, 48, 24) },
];

test('sim calibrate recovers the efficiencies that generated a history within 5%, and stores them for the GPU', { timeout: 300_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-calibrate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'h.db');
  const store = openStore(db);
  for (const r of RUNS) {
    const out = simulate({ config: r.config, hardware: { gpu: 'H100-SXM', count: r.gpus }, model: r.model, workload: r.workload, seed: 1, catalog, profile: truth, runtimeFailures: false });
    assert.ok(out.ok);
    // Stand-ins for measured runs (a "real" server priced by `truth`), stored as a load runner's would be.
    store.storeRuns([{ result: { ...out.result, lmb: { ...out.result.lmb, source: 'loadgen' } }, serverConfig: r.config, hardware: { gpu: 'H100-SXM', count: r.gpus }, model: r.model, workload: r.workload, sourceFormat: 'lm_bench', sourcePath: null, contentHash: createHash('sha256').update(JSON.stringify(r)).digest('hex') }]);
  }
  // The simulator's own run of the same GPU (a `tune --target sim` trial): never a calibration point.
  const own = simulate({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: load(300, 30, 2), seed: 1, catalog, runtimeFailures: false });
  assert.ok(own.ok);
  store.storeRuns([{ result: own.result, serverConfig: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload: load(300, 30, 2), sourceFormat: 'lm_bench', sourcePath: null, contentHash: 'f'.repeat(64) }]);
  store.close();

  const io = captureIo(dir);
  assert.equal(await main(['sim', 'calibrate', '--gpu', 'H100-SXM', '--db', db, '--json'], io), 0, io.err());
  assertMatchesSchema(SimCalibrateJson, JSON.parse(io.out()), 'sim calibrate');
  const report = JSON.parse(io.out()) as { runs: number; simulated: number; profile: SimProfile; fit: { ttft_mape: number; tpot_mape: number }; before: { ttft_mape: number; tpot_mape: number }; leave_one_out: { ttft_mape: number; tpot_mape: number } };
  assert.equal(report.runs, RUNS.length);
  assert.equal(report.simulated, 1);
  for (const k of CALIBRATE_PARAMS) {
    const err = Math.abs(report.profile[k] / truth[k] - 1);
    assert.ok(err <= 0.05, `${k}: fitted ${report.profile[k]}, truth ${truth[k]} (${(err * 100).toFixed(1)}% off; started at ${start[k]})`);
  }
  assert.ok(report.before.tpot_mape > 0.1, `the default profile was visibly wrong: ${report.before.tpot_mape}`);
  assert.ok(report.fit.ttft_mape < 0.02 && report.fit.tpot_mape < 0.02, JSON.stringify(report.fit));
  assert.ok(Number.isFinite(report.leave_one_out.ttft_mape) && Number.isFinite(report.leave_one_out.tpot_mape));

  const s = openStore(db, { readonly: true });
  t.after(() => s.close());
  assert.deepEqual(storedProfile(s, 'H100-SXM')?.profile, report.profile);
});

test('sim calibrate refuses a history too small to fit, and stores nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-calibrate-thin-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'h.db');
  const io = captureIo(dir);
  assert.equal(await main(['sim', 'calibrate', '--gpu', 'H100-SXM', '--model', 'llama-3.1-8b', '--db', db], io), 2);
  assert.match(io.err(), /LMB_ERR_HISTORY_TOO_THIN: 0 usable runs .* at least 6/);
  const s = openStore(db, { readonly: true });
  t.after(() => s.close());
  assert.equal(storedProfile(s, 'H100-SXM'), null);
});
