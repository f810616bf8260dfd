import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';
import { captureIo } from '../helpers/cli.js';

const SAMPLE = fileURLToPath(new URL('../fixtures/calibration/silicon-sample.csv', import.meta.url));

interface Out {
  rows: { line: number; model: string; gpu: string; ttft_ms: number | null; tpot_ms: number | null; error: { code: string; message: string } | null; measured: { ttft_ms: number | null; tpot_ms: number | null } }[];
  mape: { model: string; gpu: string; rows: number; ttft_mape_pct: number | null; tpot_mape_pct: number | null }[];
}

async function predict(file: string, extra: string[] = [], env: Record<string, string> = { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: mkdtempSync(join(tmpdir(), 'lmb-hf-')) }): Promise<{ code: number; out: Out; text: string }> {
  const io = captureIo(process.cwd(), env);
  const code = await main(['sim', 'predict', '--rows', file, '--profile', 'default', '--json', ...extra], io);
  return { code, out: JSON.parse(io.out()) as Out, text: io.err() };
}

test('sim predict: one answer per row in input order, within the stated tolerances of what real vLLM measured', async () => {
  const { code, out } = await predict(SAMPLE);
  assert.equal(code, 0);
  assert.deepEqual(out.rows.map((r) => r.line), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  const measured = out.rows.filter((r) => r.error === null && r.measured.ttft_ms !== null);
  assert.equal(measured.length, 7, 'MoE rows (gpt-oss-120b) are simulated too');
  // The tolerances the calibration goals state for the fit set (docs/calibration.md): TTFT 25%, TPOT 12%,
  // with headroom for these rows: 35% and 15%.
  for (const r of measured) {
    const ttft = Math.abs((r.ttft_ms as number) / (r.measured.ttft_ms as number) - 1);
    const tpot = Math.abs((r.tpot_ms as number) / (r.measured.tpot_ms as number) - 1);
    assert.ok(ttft <= 0.35, `line ${r.line}: TTFT ${r.ttft_ms} vs measured ${r.measured.ttft_ms}`);
    // The MoE goals are looser (issue 17: TTFT 35%, TPOT 20% on gpt-oss-120b).
    const tpotTolerance = r.model.includes('gpt-oss') ? 0.2 : 0.15;
    assert.ok(tpot <= tpotTolerance, `line ${r.line}: TPOT ${r.tpot_ms} vs measured ${r.measured.tpot_ms}`);
  }
  // Rows it cannot simulate get an error with a catalog code, not a guess.
  assert.equal(out.rows[5]?.error?.code, 'LMB_ERR_UNKNOWN_MODEL');
  assert.match(out.rows[5]?.error?.message ?? '', /acme\/Imaginary-7B/);
  assert.equal(out.rows[6]?.error?.code, 'LMB_ERR_UNKNOWN_GPU');
  assert.equal(out.rows[10]?.error?.code, 'LMB_ERR_KNOB_OUT_OF_DOMAIN');
  assert.match(out.rows[10]?.error?.message ?? '', /fp4.*only fp4 checkpoints/);
  assert.match(out.rows[6]?.error?.message ?? '', /tpu_v5e/);
  // A row without measured columns is predicted all the same.
  const blank = out.rows[7];
  assert.ok(blank?.error === null && (blank.ttft_ms ?? 0) > 0 && (blank.tpot_ms ?? 0) > 0);
  assert.deepEqual(
    out.mape.map((m) => [m.model, m.gpu, m.rows]),
    [
      ['Qwen/Qwen3-32B', 'h100_sxm', 3],
      ['meta-llama/Llama-3.1-70B', 'h100_sxm', 2],
      ['openai/gpt-oss-120b', 'h100_sxm', 2],
    ],
  );
});

test('sim predict never reads the measured columns: blanked or absent, the predictions are the same', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-predict-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lines = readFileSync(SAMPLE, 'utf8').trim().split('\n');
  const header = (lines[0] as string).split(',');
  const cut = header.indexOf('silicon_ttft_ms');
  const blanked = join(dir, 'blanked.csv');
  writeFileSync(blanked, lines.map((l, i) => (i === 0 ? l : [...l.split(',').slice(0, cut), '', ''].join(','))).join('\n'));
  const absent = join(dir, 'absent.csv');
  writeFileSync(absent, lines.map((l) => l.split(',').slice(0, cut).join(',')).join('\n'));
  const base = (await predict(SAMPLE)).out.rows.map((r) => [r.ttft_ms, r.tpot_ms]);
  assert.deepEqual((await predict(blanked)).out.rows.map((r) => [r.ttft_ms, r.tpot_ms]), base);
  const noMeasured = await predict(absent);
  assert.deepEqual(noMeasured.out.rows.map((r) => [r.ttft_ms, r.tpot_ms]), base);
  assert.deepEqual(noMeasured.out.mape, [], 'no measured columns, no error table');
});

test('sim predict: a malformed row (a value, too few or too many fields) is that row’s error, named by file and line; the others come out', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-predict-bad-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bad = join(dir, 'bad.csv');
  const lines = readFileSync(SAMPLE, 'utf8').trim().split('\n');
  const good = lines[1] as string;
  const width = good.split(',').length;
  writeFileSync(bad, [lines[0], good, (lines[2] as string).replace(',32,4,', ',many,4,'), good.split(',').slice(0, 5).join(','), `${good},extra`, good].join('\n'));
  const { code, out } = await predict(bad);
  assert.equal(code, 0, 'some rows were predicted');
  assert.deepEqual(out.rows.map((r) => r.line), [2, 3, 4, 5, 6]);
  const byLine = new Map(out.rows.map((r) => [r.line, r]));
  assert.match(byLine.get(3)?.error?.message ?? '', /bad\.csv:3: batch_size = "many" is not a whole number/);
  assert.match(byLine.get(4)?.error?.message ?? '', new RegExp(`bad\\.csv:4: 5 fields, the header has ${width}`));
  assert.match(byLine.get(5)?.error?.message ?? '', new RegExp(`bad\\.csv:5: ${width + 1} fields, the header has ${width}`));
  for (const line of [3, 4, 5]) {
    assert.equal(byLine.get(line)?.error?.code, 'LMB_ERR_CONFIG_INVALID', `line ${line}`);
    assert.deepEqual([byLine.get(line)?.ttft_ms, byLine.get(line)?.tpot_ms], [null, null]);
  }
  for (const line of [2, 6]) assert.ok(byLine.get(line)?.error === null && (byLine.get(line)?.ttft_ms ?? 0) > 0, `line ${line}`);
  assert.deepEqual(byLine.get(2)?.ttft_ms, byLine.get(6)?.ttft_ms);
  // Text output says the same, row by row.
  const io = captureIo(dir, { HF_HUB_OFFLINE: '1' });
  assert.equal(await main(['sim', 'predict', '--rows', bad, '--profile', 'default'], io), 0, io.err());
  assert.match(io.out(), new RegExp(`^line 4: LMB_ERR_CONFIG_INVALID: .*bad\\.csv:4: 5 fields, the header has ${width}$`, 'm'));
  // Only when no row can be predicted does the command fail (exit 1).
  const allBad = join(dir, 'all-bad.csv');
  writeFileSync(allBad, [lines[0], good.split(',').slice(0, 3).join(',')].join('\n'));
  assert.equal((await predict(allBad)).code, 1);
});

test('sim predict: a file with no rows, and a --rows path that does not exist, are the file’s errors, named', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-predict-none-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lines = readFileSync(SAMPLE, 'utf8').trim().split('\n');
  const empty = join(dir, 'empty.csv');
  writeFileSync(empty, `${lines[0]}\n`);
  const io2 = captureIo(dir, {});
  assert.equal(await main(['sim', 'predict', '--rows', empty], io2), 2);
  assert.match(io2.err(), /empty\.csv: no rows after the header/);
  const io3 = captureIo(dir, {});
  assert.equal(await main(['sim', 'predict', '--rows', 'nope.csv'], io3), 2);
  assert.equal(io3.err(), `lm-bench: error LMB_ERR_FILE_NOT_FOUND: --rows ${join(dir, 'nope.csv')}: the file does not exist\n`);
});

test('sim predict prices each row for its own vLLM release with the catalog profile, and a calibrated profile as it stands', async (t) => {
  const { readFileSync: read } = await import('node:fs');
  const { parseCsv } = await import('../../src/calibration/csv.js');
  const { predictRow, siliconRows } = await import('../../src/calibration/silicon.js');
  const { saveProfile } = await import('../../src/calibration/profiles.js');
  const { defaultCatalog } = await import('../../src/catalog/index.js');
  const { openStore } = await import('../../src/store/sqlite-store.js');
  const catalog = defaultCatalog();
  const h100 = catalog.gpu('H100-SXM');
  const { columns, records } = parseCsv(read(SAMPLE, 'utf8'), SAMPLE);
  const rows = siliconRows(columns, records, SAMPLE);
  const qwen = rows.find((r) => r.backendVersion === '0.12.0');
  assert.ok(qwen !== undefined);
  // The catalog's profile: the row's release (0.12.0), not a current one.
  const { out } = await predict(SAMPLE);
  const got = out.rows.find((r) => r.line === qwen.line);
  assert.equal(got?.tpot_ms, predictRow(qwen, catalog, catalog.profileFor(h100, '0.12.0')).tpot_ms);
  assert.notEqual(got?.tpot_ms, predictRow(qwen, catalog, catalog.profileFor(h100)).tpot_ms);
  // A calibrated profile is used as stored, with no release's overrides on top.
  const dir = mkdtempSync(join(tmpdir(), 'lmb-predict-stored-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'h.db');
  const calibrated = { ...catalog.profile, eta_kv: 0.5, eta_weights: 0.7 };
  const store = openStore(db);
  saveProfile(store, { gpu: 'H100-SXM', model: null, runs: 9, profile: calibrated, metrics: {} });
  store.close();
  const io = captureIo(process.cwd(), { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: mkdtempSync(join(tmpdir(), 'lmb-hf-')) });
  assert.equal(await main(['sim', 'predict', '--rows', SAMPLE, '--profile', 'stored', '--db', db, '--json'], io), 0, io.err());
  const stored = (JSON.parse(io.out()) as Out).rows;
  for (const r of rows.filter((x) => x.system === 'h100_sxm' && x.modelPath !== 'openai/gpt-oss-120b').slice(0, 3)) {
    assert.equal(stored.find((s) => s.line === r.line)?.tpot_ms, predictRow(r, catalog, calibrated).tpot_ms, `line ${r.line} (vLLM ${r.backendVersion || 'unstated'})`);
  }
});
