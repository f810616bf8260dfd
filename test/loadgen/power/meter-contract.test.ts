import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPowerMeter, energyFromReading, PowerSpec, type PowerSpecInput } from '../../../src/loadgen/power/index.js';
import { startDcgmExporter, type DcgmStandIn } from '../../helpers/dcgm-exporter.js';

// The contract every power source keeps, checked on each one against a stand-in that prints what the real
// source prints (a loopback DCGM exporter; nvidia-smi and amd-smi scripts first on PATH, real processes):
// start() before the window, stop() after it → one reading per GPU covering the window, whose energy is
// the GPUs' wattage times the window; stop() answers the same twice and leaves no process behind.
const standInBin = fileURLToPath(new URL('../../fixtures/power/bin', import.meta.url));
const env = { ...process.env, PATH: `${standInBin}${delimiter}${process.env['PATH'] ?? ''}` };
const dir = mkdtempSync(join(tmpdir(), 'lmb-power-'));
const exporters: DcgmStandIn[] = [];
after(async () => {
  await Promise.all(exporters.map((e) => e.close()));
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Case {
  readonly name: string;
  readonly spec: () => Promise<PowerSpecInput>;
  readonly env?: Record<string, string>;
  readonly source: string;
  readonly watts: number;
  /** GPUs the readings count (2 unless said). */
  readonly gpus?: number;
}

const cases: Case[] = [
  {
    name: 'DCGM exporter, energy counter',
    spec: async () => {
      const e = await startDcgmExporter({ watts: [100, 250] });
      exporters.push(e);
      return { kind: 'dcgm', urls: [e.url], interval_ms: 100 };
    },
    source: 'dcgm-energy',
    watts: 350,
  },
  {
    name: 'DCGM exporter without the counter: power gauge integrated',
    spec: async () => {
      const e = await startDcgmExporter({ watts: [120, 80], mode: 'power-only' });
      exporters.push(e);
      return { kind: 'dcgm', urls: [e.url], interval_ms: 100 };
    },
    source: 'dcgm-power',
    watts: 200,
  },
  {
    // Two nodes' exporters tunnelled to one host on two ports: four GPUs, not two with their counters interleaved.
    name: 'two DCGM exporters on one host, two ports',
    spec: async () => {
      const a = await startDcgmExporter({ watts: [100, 250] });
      const b = await startDcgmExporter({ watts: [200, 50] });
      exporters.push(a, b);
      return { kind: 'dcgm', urls: [a.url, b.url], interval_ms: 100 };
    },
    source: 'dcgm-energy',
    watts: 600,
    gpus: 4,
  },
  { name: 'nvidia-smi', spec: () => Promise.resolve({ kind: 'nvidia-smi', interval_ms: 100 }), env: { LMB_FAKE_SMI_WATTS: '100,250' }, source: 'nvidia-smi', watts: 350 },
  { name: 'amd-smi', spec: () => Promise.resolve({ kind: 'amd-smi', interval_ms: 150 }), env: { LMB_FAKE_SMI_WATTS: '300,450', LMB_FAKE_AMDSMI_MODE: 'wrapped' }, source: 'amd-smi', watts: 750 },
];

for (const c of cases) {
  test(`${c.name}: readings over the window give the GPUs' wattage, J and J/token`, async () => {
    const pidFile = join(dir, `${c.source}.pid`);
    const meter = createPowerMeter(PowerSpec.parse(await c.spec()), { ...env, ...c.env, LMB_FAKE_SMI_PIDFILE: pidFile });
    const t0 = performance.now();
    const clock = (): number => (performance.now() - t0) / 1000;
    await meter.start(clock);
    const startS = clock();
    await sleep(700);
    const endS = clock();
    const reading = await meter.stop();
    assert.equal(reading.ok, true, reading.ok ? '' : reading.reason);
    assert.equal(reading.source, c.source);
    assert.equal(await meter.stop(), reading, 'stop answers once, the same to every caller');
    const e = energyFromReading(reading, { startS, endS }, 1000, 1);
    assert.equal(e.unavailable_reason, null);
    assert.equal(e.gpus, c.gpus ?? 2);
    assert.equal(e.source, c.source);
    const avg = e.avg_power_w ?? NaN;
    assert.ok(Math.abs(avg - c.watts) / c.watts < 0.03, `average ${avg} W, expected ${c.watts} W`);
    assert.ok(Math.abs((e.energy_j ?? NaN) - avg * (endS - startS)) < 1e-6);
    assert.ok(Math.abs((e.energy_per_output_token_j ?? NaN) - (e.energy_j ?? NaN) / 1000) < 1e-9);
    assert.deepEqual(e.window, { start_s: startS, end_s: endS, rule: 'load' });
    if (c.source === 'nvidia-smi') {
      // The streaming sampler is gone once stop() has answered.
      assert.ok(existsSync(pidFile));
      assert.throws(() => process.kill(Number(readFileSync(pidFile, 'utf8')), 0), /ESRCH/);
    }
  });
}

test('a window the readings do not cover is unavailable, not extrapolated', async () => {
  const meter = createPowerMeter(PowerSpec.parse({ kind: 'nvidia-smi', interval_ms: 100 }), env);
  const t0 = performance.now();
  const clock = (): number => (performance.now() - t0) / 1000;
  await meter.start(clock);
  await sleep(200);
  const reading = await meter.stop();
  const e = energyFromReading(reading, { startS: clock() + 5, endS: clock() + 6 }, 10, 1);
  assert.equal(e.avg_power_w, null);
  assert.match(e.unavailable_reason ?? '', /readings of GPU 0 cover .* not its load window/);
});
