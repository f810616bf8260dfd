import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mlenergyPoints, mlenergyPrediction, parseMlenergy } from '../../src/calibration/mlenergy.js';
import { MLENERGY_MEASURED_COLUMNS } from '../../src/calibration/mlenergy-rows.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import { simulateSummary } from '../../src/sim/index.js';
import { captureIo } from '../helpers/cli.js';
import { SimPredictJson } from '../../src/cli/json-output.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';

/**
 * test/fixtures/calibration/mlenergy-sample.csv: six rows copied from data/calibration/mlenergy/
 * qwen3_lm_arena_chat.csv (ML.ENERGY Benchmark v3, Apache-2.0; lines 11, 64, 36, 73 and 12 there; Qwen3-14B
 * twice on H100, Qwen3-32B at TP 2, the MoE Qwen3-30B-A3B at TP 2 + EP, Qwen3-8B on B200 with its measured
 * columns emptied) and four made up from them: an unknown GPU (line 4), max_num_seqs "many" (line 6), an
 * unknown model (line 7) and a gpqa row (line 9, another task's workload).
 */
const SAMPLE = fileURLToPath(new URL('../fixtures/calibration/mlenergy-sample.csv', import.meta.url));
const SILICON = fileURLToPath(new URL('../fixtures/calibration/silicon-sample.csv', import.meta.url));
const DATA = fileURLToPath(new URL('../../data/calibration/mlenergy/qwen3_lm_arena_chat.csv', import.meta.url));

interface Row {
  line: number;
  model: string;
  gpu: string;
  output_throughput_tok_s: number | null;
  median_itl_ms: number | null;
  avg_power_w: number | null;
  energy_per_output_token_j: number | null;
  error: { code: string; message: string } | null;
  measured: Record<string, number | null>;
  error_pct: { output_throughput: number | null; median_itl: number | null; avg_power: number | null; energy_per_output_token: number | null };
}
interface Out {
  layout: string;
  rows: Row[];
  mape: {
    model: string;
    gpu: string;
    rows: number;
    output_throughput_mape_pct: number | null;
    median_itl_mape_pct: number | null;
    avg_power_mape_pct: number | null;
    energy_per_output_token_mape_pct: number | null;
  }[];
}

async function predict(file: string, json = true): Promise<{ code: number; out: Out | null; stdout: string; stderr: string }> {
  const io = captureIo(process.cwd(), { HF_HUB_OFFLINE: '1' });
  const code = await main(['sim', 'predict', '--rows', file, '--profile', 'default', ...(json ? ['--json'] : [])], io);
  const out = json ? (JSON.parse(io.out()) as unknown) : null;
  // Every --json answer is the one src/cli/json-output.ts declares (no key it does not name).
  if (out !== null && code === 0) assertMatchesSchema(SimPredictJson, out, 'sim predict');
  return { code, out: out as Out | null, stdout: io.out(), stderr: io.err() };
}

const figures = (o: Out): [number | null, number | null][] => o.rows.map((r) => [r.output_throughput_tok_s, r.median_itl_ms]);

test('sim predict reads ML.ENERGY rows: layout from the header, one answer per row in order, bad rows answered with their error', async () => {
  const { code, out } = await predict(SAMPLE);
  assert.equal(code, 0, 'some rows predicted: the file does not fail');
  assert.ok(out !== null);
  assert.equal(out.layout, 'mlenergy-v3');
  assert.equal((await predict(SILICON)).out?.layout, 'aiconfigurator-silicon');
  assert.deepEqual(
    out.rows.map((r) => [r.line, r.model, r.gpu]),
    [
      [2, 'Qwen/Qwen3-14B', 'H100'],
      [3, 'Qwen/Qwen3-32B', 'H100'],
      [4, 'Qwen/Qwen3-14B', 'TPU-v5e'],
      [5, 'Qwen/Qwen3-30B-A3B-Instruct-2507', 'H100'],
      [6, 'Qwen/Qwen3-8B', 'H100'],
      [7, 'acme/Imaginary-7B', 'H100'],
      [8, 'Qwen/Qwen3-8B', 'B200'],
      [9, 'Qwen/Qwen3-8B', 'H100'],
      [10, 'Qwen/Qwen3-14B', 'H100'],
    ],
  );
  const byLine = new Map(out.rows.map((r) => [r.line, r]));
  const err = (line: number): Row['error'] => byLine.get(line)?.error ?? null;
  assert.equal(err(4)?.code, 'LMB_ERR_UNKNOWN_GPU');
  assert.match(err(4)?.message ?? '', /TPU-v5e/);
  assert.equal(err(6)?.code, 'LMB_ERR_CONFIG_INVALID');
  assert.match(err(6)?.message ?? '', /mlenergy-sample\.csv:6: max_num_seqs = "many" is not a whole number/);
  assert.equal(err(7)?.code, 'LMB_ERR_UNKNOWN_MODEL');
  assert.match(err(7)?.message ?? '', /acme\/Imaginary-7B/);
  assert.equal(err(9)?.code, 'LMB_ERR_INVALID_ARGUMENT');
  assert.match(err(9)?.message ?? '', /task "gpqa": only lm-arena-chat/);
  for (const line of [4, 6, 7, 9]) assert.deepEqual([byLine.get(line)?.output_throughput_tok_s, byLine.get(line)?.median_itl_ms], [null, null]);
  // The rest are predicted, the MoE row (TP 2 with expert parallelism) and the row measured nothing included.
  for (const line of [2, 3, 5, 8, 10]) {
    const r = byLine.get(line);
    assert.ok(r?.error === null && (r.output_throughput_tok_s ?? 0) > 0 && (r.median_itl_ms ?? 0) > 0, `line ${line}: ${JSON.stringify(r)}`);
  }
  assert.deepEqual(byLine.get(8)?.measured, { ...Object.fromEntries(MLENERGY_MEASURED_COLUMNS.map((c) => [c, null])), energy_per_output_token_j: null });
  assert.deepEqual(byLine.get(8)?.error_pct, { output_throughput: null, median_itl: null, avg_power: null, energy_per_output_token: null });
  assert.equal(byLine.get(2)?.measured['avg_power_w'], 443);
  // Measured J/token: ML.ENERGY's window energy over its tokens = average power ÷ output throughput.
  assert.equal(byLine.get(2)?.measured['energy_per_output_token_j'], 443 / 627.41);
  // Every predicted row has its power (all its GPUs: the 2-GPU rows above one GPU's idle × 2) and J/token; errors never do.
  for (const line of [2, 3, 5, 8, 10]) {
    const r = byLine.get(line);
    const gpus = line === 3 || line === 5 ? 2 : 1;
    const tdp = line === 8 ? 1000 : 700;
    assert.ok((r?.avg_power_w ?? 0) > gpus * 0.1 * tdp && (r?.avg_power_w ?? Infinity) <= gpus * tdp, `line ${line}: ${r?.avg_power_w} W`);
    assert.ok(Math.abs((r?.energy_per_output_token_j ?? 0) - (r?.avg_power_w ?? NaN) / (r?.output_throughput_tok_s ?? NaN)) < 1e-9, `line ${line}: J/token = power ÷ throughput`);
  }
  for (const line of [4, 6, 7, 9]) assert.deepEqual([byLine.get(line)?.avg_power_w, byLine.get(line)?.energy_per_output_token_j], [null, null]);
});

test('sim predict: an ML.ENERGY row with too few or too many fields is that row’s error, named by line; the others come out', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-predict-ragged-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lines = readFileSync(SAMPLE, 'utf8').trim().split('\n');
  const good = lines[1] as string;
  const width = good.split(',').length;
  const file = join(dir, 'ragged.csv');
  writeFileSync(file, [lines[0], good, good.split(',').slice(0, 5).join(','), `${good},1`, good].join('\n'));
  const { code, out } = await predict(file);
  assert.equal(code, 0, 'some rows predicted: the file does not fail');
  assert.ok(out !== null);
  assert.deepEqual(out.rows.map((r) => [r.line, r.model, r.gpu]), [
    [2, 'Qwen/Qwen3-14B', 'H100'],
    [3, 'Qwen/Qwen3-14B', ''],
    [4, 'Qwen/Qwen3-14B', 'H100'],
    [5, 'Qwen/Qwen3-14B', 'H100'],
  ]);
  const byLine = new Map(out.rows.map((r) => [r.line, r]));
  assert.deepEqual(byLine.get(3)?.error, { code: 'LMB_ERR_CONFIG_INVALID', message: `${file}:3: 5 fields, the header has ${width}` });
  assert.deepEqual(byLine.get(4)?.error, { code: 'LMB_ERR_CONFIG_INVALID', message: `${file}:4: ${width + 1} fields, the header has ${width}` });
  for (const line of [3, 4]) assert.deepEqual([byLine.get(line)?.output_throughput_tok_s, byLine.get(line)?.avg_power_w], [null, null]);
  for (const line of [2, 5]) assert.ok(byLine.get(line)?.error === null && (byLine.get(line)?.output_throughput_tok_s ?? 0) > 0, `line ${line}`);
  // A ragged row measured nothing that could be trusted: it is left out of the error table.
  assert.deepEqual(out.mape.map((m) => m.rows), [2]);
});

test('sim predict on ML.ENERGY rows gives what the calibration check computes for the same rows (one protocol)', async () => {
  const { out } = await predict(SAMPLE);
  const catalog = defaultCatalog();
  const data = parseMlenergy(readFileSync(DATA, 'utf8'), 'qwen3_lm_arena_chat.csv');
  // Fixture line 2 is data line 11, fixture line 5 is data line 36 (the MoE row).
  for (const [fixtureLine, dataLine] of [[2, 11], [5, 36]] as const) {
    const point = mlenergyPoints(data.filter((r) => r.line === dataLine), catalog)[0];
    assert.ok(point !== undefined);
    // ML.ENERGY ran vLLM 0.11.1: the catalog's profile for that release, as sim predict prices the row.
    assert.equal(point.input.vllmVersion, '0.11.1');
    const sim = simulateSummary({ ...point.input, catalog, profile: catalog.profileFor(catalog.gpu(point.row.gpu), point.input.vllmVersion) });
    assert.ok(sim.ok);
    const want = mlenergyPrediction(sim.summary, point);
    const got = out?.rows.find((r) => r.line === fixtureLine);
    assert.deepEqual([got?.output_throughput_tok_s, got?.median_itl_ms, got?.avg_power_w, got?.energy_per_output_token_j], [want?.outputThroughput, want?.medianItlMs, want?.avgPowerW, want?.energyPerOutputTokenJ]);
  }
});

test('sim predict never reads ML.ENERGY measured columns: emptied or absent, the predictions are the same', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-predict-mle-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lines = readFileSync(SAMPLE, 'utf8').trim().split('\n');
  const header = (lines[0] as string).split(',');
  const measuredAt = MLENERGY_MEASURED_COLUMNS.map((c) => header.indexOf(c));
  assert.ok(measuredAt.every((i) => i >= 0));
  const emptied = join(dir, 'emptied.csv');
  writeFileSync(emptied, lines.map((l, n) => (n === 0 ? l : l.split(',').map((c, i) => (measuredAt.includes(i) ? '' : c)).join(','))).join('\n'));
  const absent = join(dir, 'absent.csv');
  writeFileSync(absent, lines.map((l) => l.split(',').filter((_, i) => !measuredAt.includes(i)).join(',')).join('\n'));
  const base = (await predict(SAMPLE)).out as Out;
  for (const file of [emptied, absent]) {
    const o = (await predict(file)).out as Out;
    assert.equal(o.layout, 'mlenergy-v3');
    assert.deepEqual(figures(o), figures(base));
    assert.deepEqual(o.mape, [], 'nothing measured, no error table');
    assert.ok(o.rows.every((r) => Object.values(r.error_pct).every((x) => x === null)));
    assert.deepEqual(
      o.rows.map((r) => [r.avg_power_w, r.energy_per_output_token_j]),
      base.rows.map((r) => [r.avg_power_w, r.energy_per_output_token_j]),
    );
  }
});

test('sim predict: the signed error of each ML.ENERGY figure and the MAPE per model and GPU, in JSON and text', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-predict-mle-pct-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const base = (await predict(SAMPLE)).out as Out;
  // Measurements made so the answer is known: the simulator 25% above on throughput and 20% below on ITL,
  // except on line 10 (the second Qwen3-14B H100 row), where the signs swap, so |error| is what averages.
  const lines = readFileSync(SAMPLE, 'utf8').trim().split('\n');
  const header = (lines[0] as string).split(',');
  const [tput, itl, watts] = [header.indexOf('output_throughput_tok_s'), header.indexOf('median_itl_ms'), header.indexOf('avg_power_w')];
  const [over, under] = [1.25, 0.8];
  // Power: the simulator 10% above everywhere. Measured J/token = power ÷ throughput, so the simulated one is
  // 1.1 / 1.25 − 1 = −12% off where throughput is 25% above, 1.1 / 0.8 − 1 = +37.5% on line 10.
  const powerOver = 1.1;
  const rigged = join(dir, 'rigged.csv');
  writeFileSync(
    rigged,
    lines
      .map((l, n) => {
        const p = base.rows.find((r) => r.line === n + 1);
        if (n === 0 || p?.error !== null || p.line === 8 || p.output_throughput_tok_s === null || p.median_itl_ms === null) return l;
        const cells = l.split(',');
        cells[tput] = String(p.output_throughput_tok_s / (p.line === 10 ? under : over));
        cells[itl] = String(p.median_itl_ms / (p.line === 10 ? over : under));
        cells[watts] = String((p.avg_power_w ?? NaN) / powerOver);
        return cells.join(',');
      })
      .join('\n'),
  );
  const o = (await predict(rigged)).out as Out;
  assert.deepEqual(figures(o), figures(base));
  const close = (x: number | null | undefined, want: number, what: string): void => assert.ok(Math.abs((x ?? NaN) - want) < 1e-9, `${what}: ${x} ≠ ${want}`);
  for (const r of o.rows.filter((x) => x.error === null && x.line !== 8)) {
    close(r.error_pct.output_throughput, r.line === 10 ? -20 : 25, `line ${r.line} throughput`);
    close(r.error_pct.median_itl, r.line === 10 ? 25 : -20, `line ${r.line} ITL`);
    close(r.error_pct.avg_power, 10, `line ${r.line} power`);
    close(r.error_pct.energy_per_output_token, r.line === 10 ? 37.5 : -12, `line ${r.line} J/token`);
  }
  assert.deepEqual(
    o.mape.map((m) => [m.model, m.gpu, m.rows]),
    [
      ['Qwen/Qwen3-14B', 'H100', 2],
      ['Qwen/Qwen3-32B', 'H100', 1],
      ['Qwen/Qwen3-30B-A3B-Instruct-2507', 'H100', 1],
    ],
    'per model and GPU in order of appearance; line 8 measured nothing and is not counted',
  );
  close(o.mape[0]?.output_throughput_mape_pct, 22.5, '14B throughput MAPE');
  close(o.mape[0]?.median_itl_mape_pct, 22.5, '14B ITL MAPE');
  close(o.mape[1]?.output_throughput_mape_pct, 25, '32B throughput MAPE');
  close(o.mape[1]?.median_itl_mape_pct, 20, '32B ITL MAPE');
  close(o.mape[0]?.avg_power_mape_pct, 10, '14B power MAPE');
  close(o.mape[0]?.energy_per_output_token_mape_pct, (12 + 37.5) / 2, '14B J/token MAPE');
  close(o.mape[1]?.energy_per_output_token_mape_pct, 12, '32B J/token MAPE');
  const text = await predict(SAMPLE, false);
  assert.match(
    text.stdout,
    /^line 2: output throughput \d+ tok\/s \(measured 627, -?\d+\.\d%\), median ITL \d+\.\d\d ms \(measured 12\.54, -?\d+\.\d%\), power \d+ W \(measured 443, -?\d+\.\d%\), energy \d\.\d{3} J\/token \(measured 0\.706, -?\d+\.\d%\)$/m,
  );
  assert.match(text.stdout, /^line 8: output throughput \d+ tok\/s, median ITL \d+\.\d\d ms, power \d+ W, energy \d\.\d{3} J\/token$/m);
  assert.match(text.stdout, /^line 6: LMB_ERR_CONFIG_INVALID: .*max_num_seqs/m);
  assert.match(text.stdout, /MAPE per model and GPU:\n {2}Qwen\/Qwen3-14B on H100 \(2 rows\): output throughput \d+\.\d%, median ITL \d+\.\d%, power \d+\.\d%, J\/token \d+\.\d%/);
});

test('sim predict refuses a header in neither layout, naming the file, the line and what each layout lacks', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-predict-layout-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const odd = join(dir, 'odd.csv');
  // ML.ENERGY's layout with `tp` renamed: near to it, but not it.
  writeFileSync(odd, readFileSync(SAMPLE, 'utf8').replace(',tp,', ',tensor_parallel,'));
  const io = captureIo(dir, {});
  assert.equal(await main(['sim', 'predict', '--rows', odd], io), 2);
  assert.match(io.err(), /LMB_ERR_CONFIG_INVALID: .*odd\.csv:1: the header is in no layout sim predict reads: ML\.ENERGY v3's layout lacks tp; aiconfigurator's silicon layout lacks backend, model_path/);
  const json = await predict(odd);
  assert.equal(json.code, 2);
  assert.deepEqual((json.out as unknown as { error: { code: string; details: unknown } }).error.code, 'LMB_ERR_CONFIG_INVALID');
  assert.deepEqual((json.out as unknown as { error: { details: unknown } }).error.details, { file: odd, line: 1, field: 'tp' });
});
