import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult } from '../../src/domain/index.js';
import { captureIo } from '../helpers/cli.js';
import { startDcgmExporter, type DcgmStandIn } from '../helpers/dcgm-exporter.js';
import { startSimServe, type SimServeProcess } from '../helpers/sim-serve.js';

// `lm-bench run --power-metrics URL | --power-smi nvidia` records the GPUs' power over the load window in
// the result's `energy` block and on the terminal; a power source that hangs or answers garbage leaves the
// run measured, with power unavailable and why. Real processes and loopback HTTP throughout.
const standInBin = fileURLToPath(new URL('../fixtures/power/bin', import.meta.url));
let sim: SimServeProcess;
let dir: string;
const exporters: DcgmStandIn[] = [];
before(async () => {
  sim = await startSimServe(['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--speed', '20', '--seed', '1', '--startup-scale', '0']);
  dir = mkdtempSync(join(tmpdir(), 'lmb-run-power-'));
});
after(async () => {
  await sim.close();
  await Promise.all(exporters.map((e) => e.close()));
  rmSync(dir, { recursive: true, force: true });
});

const load = ['--input-len', '64', '--output-len', '32', '--concurrency', '8', '--num-prompts', '48'];
const env = { LMB_LOOPBACK_ONLY: '1' };

async function run(extra: string[], envExtra: Record<string, string> = {}): Promise<{ code: number; result: BenchmarkResult | null; out: string; err: string }> {
  const io = captureIo(dir, { ...env, ...envExtra });
  const code = await main(['run', '--endpoint', `${sim.url}/v1/completions`, ...load, '--output', 'out.json', ...extra], io);
  let result: BenchmarkResult | null = null;
  if (code === 0) result = BenchmarkResult.parse(JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')));
  rmSync(join(dir, 'out.json'), { force: true });
  return { code, result, out: io.out(), err: io.err() };
}

test('--power-metrics: the exporter\'s energy counter over the load window, per output token', async () => {
  const e = await startDcgmExporter({ watts: [100, 250] });
  exporters.push(e);
  const { code, result, out, err } = await run(['--power-metrics', e.url]);
  assert.equal(code, 0, err);
  const en = result?.energy;
  assert.ok(en !== undefined && en !== null);
  assert.equal(en.source, 'dcgm-energy');
  assert.equal(en.gpus, 2);
  assert.equal(en.unavailable_reason, null);
  assert.ok(Math.abs((en.avg_power_w ?? 0) - 350) < 350 * 0.05, `${en.avg_power_w} W`);
  assert.equal(en.window?.rule, 'load');
  const durationS = (en.window?.end_s ?? 0) - (en.window?.start_s ?? 0);
  assert.ok(durationS > 0 && durationS <= (result?.duration ?? 0) + 0.05, `window ${durationS} s, run ${result?.duration} s`);
  assert.ok(Math.abs((en.energy_per_output_token_j ?? 0) - (en.energy_j ?? 0) / (result?.total_output_tokens ?? 1)) < 1e-9);
  assert.equal(result?.total_output_tokens, 48 * 32);
  assert.match(out, /\npower: 3\d\d\.\d W average \(2 GPUs\), \d+ J, \d\.\d{4} J\/output token over the load window [\d.]+–[\d.]+ s, from the DCGM exporter's energy counter\n/);
  assert.ok(e.scrapes() >= 2);
});

test('an exporter that hangs or answers garbage: the run completes, power unavailable with the reason', async () => {
  const hang = await startDcgmExporter({ mode: 'hang' });
  const junk = await startDcgmExporter({ mode: 'garbage' });
  exporters.push(hang, junk);
  const t0 = performance.now();
  const hung = await run(['--power-metrics', hang.url]);
  assert.equal(hung.code, 0, hung.err);
  assert.equal(hung.result?.completed, 48);
  assert.equal(hung.result?.energy?.avg_power_w, null);
  assert.match(hung.result?.energy?.unavailable_reason ?? '', /^the DCGM exporter http:\/\/127\.0\.0\.1:\d+\/metrics did not answer within 2000 ms$/);
  assert.match(hung.out, /\npower: unavailable \(the DCGM exporter .* did not answer within 2000 ms\)/);
  assert.ok(performance.now() - t0 < 8000, 'the hang costs its time-out once, not the run');
  const bad = await run(['--power-metrics', junk.url, '--power-gpus', '0,1']);
  assert.equal(bad.code, 0, bad.err);
  assert.equal(bad.result?.completed, 48);
  assert.equal(bad.result?.energy?.gpus, 2, 'the GPUs asked for');
  assert.match(bad.result?.energy?.unavailable_reason ?? '', /exports neither DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION nor DCGM_FI_DEV_POWER_USAGE/);
});

test('--power-smi nvidia samples nvidia-smi on this machine', async () => {
  const { code, result, err } = await run(['--power-smi', 'nvidia', '--power-gpus', '1'], { PATH: `${standInBin}${delimiter}${process.env['PATH'] ?? ''}`, LMB_FAKE_SMI_WATTS: '100,250' });
  assert.equal(code, 0, err);
  assert.equal(result?.energy?.source, 'nvidia-smi');
  assert.equal(result?.energy?.gpus, 1);
  assert.ok(Math.abs((result?.energy?.avg_power_w ?? 0) - 250) < 1e-6, `${result?.energy?.avg_power_w} W`);
});

test('without a power flag there is no energy block; bad power flags fail before any load', async () => {
  const plain = await run([]);
  assert.equal(plain.code, 0, plain.err);
  assert.equal(plain.result?.energy, undefined);
  const off = await run(['--power-metrics', 'http://10.0.0.7:9400/metrics']);
  assert.equal(off.code, 2);
  assert.match(off.err, /LMB_ERR_ENDPOINT_NOT_LOOPBACK.*10\.0\.0\.7 is not a loopback address/);
  assert.doesNotMatch(off.err, /load target/, 'refused before the load was announced');
  for (const [flags, why] of [
    [['--power-metrics', 'http://127.0.0.1:9/metrics', '--power-smi', 'nvidia'], /give one/],
    [['--power-smi', 'intel'], /--power-smi must be nvidia or amd/],
    [['--power-gpus', '0'], /--power-gpus needs --power-metrics or --power-smi/],
    [['--power-smi', 'nvidia', '--power-gpus', '0;rm -rf'], /--power-gpus: a GPU index, UUID or PCI bus id/],
    [['--power-smi', 'nvidia', '--mode', 'slo-hold', '--slo', 'ttft_p95_ms=400'], /--mode slo-hold varies the rate/],
  ] as const) {
    const r = await run([...flags]);
    assert.equal(r.code, 2, `${flags.join(' ')}: ${r.err}`);
    assert.match(r.err, why);
  }
});
