import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAmdSmiMeter } from '../../../src/loadgen/power/amd-smi.js';
import { createPowerMeter, PowerSpec, type PowerReading, type PowerSpecInput } from '../../../src/loadgen/power/index.js';
import { startDcgmExporter, type DcgmStandIn, type ExporterMode } from '../../helpers/dcgm-exporter.js';

// A source that fails — an exporter that hangs, refuses, answers garbage or never refreshes; a tool that is
// missing, finds no driver, reads no sensor, dies mid-run or hangs — gives a reading that says why, within
// its time-out, and never throws: the run it belongs to is measured all the same.
const standInBin = fileURLToPath(new URL('../../fixtures/power/bin', import.meta.url));
const withStandIns = { ...process.env, PATH: `${standInBin}${delimiter}${process.env['PATH'] ?? ''}` };
// A PATH holding only `node` (the stand-ins need it), so no nvidia-smi or amd-smi is found, real or not.
const bare = mkdtempSync(join(tmpdir(), 'lmb-bare-path-'));
symlinkSync(process.execPath, join(bare, 'node'));
const exporters: DcgmStandIn[] = [];
after(async () => {
  await Promise.all(exporters.map((e) => e.close()));
  rmSync(bare, { recursive: true, force: true });
});

async function measure(spec: PowerSpecInput, env: Record<string, string | undefined>, holdMs = 300): Promise<{ reading: PowerReading; ms: number }> {
  const t0 = performance.now();
  const meter = createPowerMeter(PowerSpec.parse(spec), env);
  await meter.start(() => (performance.now() - t0) / 1000);
  await new Promise((r) => setTimeout(r, holdMs));
  const reading = await meter.stop();
  return { reading, ms: performance.now() - t0 };
}

async function exporter(mode: ExporterMode): Promise<string> {
  const e = await startDcgmExporter({ mode });
  exporters.push(e);
  return e.url;
}

const unavailable = (r: PowerReading): string => {
  assert.equal(r.ok, false, 'the reading is unavailable');
  return r.ok ? '' : r.reason;
};

test('an exporter that hangs is given up after its time-out, once', async () => {
  const { reading, ms } = await measure({ kind: 'dcgm', urls: [await exporter('hang')], timeout_ms: 300 }, {});
  assert.match(unavailable(reading), /^the DCGM exporter http:\/\/127\.0\.0\.1:\d+\/metrics did not answer within 300 ms$/);
  assert.ok(ms < 1500, `${ms} ms`);
});

test('an exporter that answers garbage, an error, or refuses says so', async () => {
  assert.match(unavailable((await measure({ kind: 'dcgm', urls: [await exporter('garbage')] }, {})).reading), /exports neither DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION nor DCGM_FI_DEV_POWER_USAGE per GPU \(is it a DCGM exporter\? it answered "<html>/);
  assert.match(unavailable((await measure({ kind: 'dcgm', urls: [await exporter('http500')] }, {})).reading), /answered HTTP 500$/);
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0));
    });
  });
  assert.match(unavailable((await measure({ kind: 'dcgm', urls: [`http://127.0.0.1:${port}/metrics`] }, {})).reading), /refused the connection$/);
});

test('frozen exporter values (a collect interval longer than the run) are unavailable, not zero watts', async () => {
  const { reading } = await measure({ kind: 'dcgm', urls: [await exporter('stale')], interval_ms: 100 }, {});
  assert.match(unavailable(reading), /did not change during the run: its collect interval \(dcgm-exporter -c/);
});

test('--power-gpus naming GPUs the exporter lacks is unavailable, naming them', async () => {
  const { reading } = await measure({ kind: 'dcgm', urls: [await exporter('ok')], gpus: ['5', '6'] }, {});
  assert.match(unavailable(reading), /reports none of GPUs 5, 6$/);
});

test('nvidia-smi missing from PATH, without a driver, without a sensor, or dying mid-run', async () => {
  assert.equal(unavailable((await measure({ kind: 'nvidia-smi' }, { PATH: bare })).reading), 'nvidia-smi is not on PATH (no NVIDIA driver tools on this machine?)');
  assert.match(unavailable((await measure({ kind: 'nvidia-smi' }, { ...withStandIns, LMB_FAKE_SMI_MODE: 'no-driver' })).reading), /^nvidia-smi exited 9 before the run ended: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/);
  assert.equal(unavailable((await measure({ kind: 'nvidia-smi', interval_ms: 50 }, { ...withStandIns, LMB_FAKE_SMI_MODE: 'na' })).reading), 'nvidia-smi reports power.draw as [N/A] for GPU 0, 1 (no power sensor readable)');
  assert.match(unavailable((await measure({ kind: 'nvidia-smi', interval_ms: 50 }, { ...withStandIns, LMB_FAKE_SMI_MODE: 'die' }, 500)).reading), /^nvidia-smi exited 1 before the run ended$/);
  assert.match(unavailable((await measure({ kind: 'nvidia-smi', interval_ms: 50 }, { ...withStandIns, LMB_FAKE_SMI_MODE: 'garbage' })).reading), /^nvidia-smi printed no power reading: Failed to initialize NVML/);
});

test('nvidia-smi is asked for exactly the GPUs named, by argv', async () => {
  const argvFile = join(bare, 'argv.json');
  const { reading } = await measure({ kind: 'nvidia-smi', gpus: ['1'], interval_ms: 100 }, { ...withStandIns, LMB_FAKE_SMI_ARGV: argvFile });
  assert.equal(reading.ok, true);
  if (reading.ok) assert.deepEqual(reading.series.map((s) => s.gpu), ['1']);
  assert.deepEqual(JSON.parse(readFileSync(argvFile, 'utf8')), ['--query-gpu=index,power.draw', '--format=csv,noheader,nounits', '-lms', '100', '-i', '1']);
});

test('amd-smi missing, without a driver, printing garbage, N/A, or hanging', async () => {
  assert.equal(unavailable((await measure({ kind: 'amd-smi' }, { PATH: bare })).reading), 'amd-smi is not on PATH (no AMD driver tools on this machine?)');
  assert.match(unavailable((await measure({ kind: 'amd-smi' }, { ...withStandIns, LMB_FAKE_AMDSMI_MODE: 'no-driver' })).reading), /^amd-smi exited 1: ERROR:root:Unable to detect any GPU devices/);
  assert.match(unavailable((await measure({ kind: 'amd-smi' }, { ...withStandIns, LMB_FAKE_AMDSMI_MODE: 'garbage' })).reading), /^amd-smi metric --power --json: no JSON in its output: Segmentation fault/);
  assert.equal(unavailable((await measure({ kind: 'amd-smi' }, { ...withStandIns, LMB_FAKE_AMDSMI_MODE: 'na' })).reading), 'amd-smi reports socket power as N/A for GPU 0, 1');
  const t0 = performance.now();
  const meter = createAmdSmiMeter(PowerSpec.parse({ kind: 'amd-smi' }) as Extract<PowerSpec, { kind: 'amd-smi' }>, { env: { ...withStandIns, LMB_FAKE_AMDSMI_MODE: 'hang' }, pollTimeoutMs: 300 });
  await meter.start(() => (performance.now() - t0) / 1000);
  assert.equal(unavailable(await meter.stop()), 'amd-smi did not answer within 300 ms');
  assert.ok(performance.now() - t0 < 2000);
});

test('amd-smi: a warning line before the JSON and a GPU selection are understood', async () => {
  const argvFile = join(bare, 'amd-argv.json');
  const { reading } = await measure({ kind: 'amd-smi', gpus: ['1'], interval_ms: 100 }, { ...withStandIns, LMB_FAKE_AMDSMI_MODE: 'warning', LMB_FAKE_SMI_ARGV: argvFile });
  assert.equal(reading.ok, true, reading.ok ? '' : reading.reason);
  if (reading.ok) {
    assert.deepEqual(reading.series.map((s) => s.gpu), ['1']);
    assert.ok(reading.series[0]?.values.every((w) => w === 450));
  }
  assert.deepEqual(JSON.parse(readFileSync(argvFile, 'utf8')), ['metric', '--power', '--json', '-g', '1']);
});

test('a DCGM URL off this machine is refused under LMB_LOOPBACK_ONLY=1, before anything is read', () => {
  assert.throws(() => createPowerMeter(PowerSpec.parse({ kind: 'dcgm', urls: ['http://10.1.2.3:9400/metrics'] }), { LMB_LOOPBACK_ONLY: '1' }), (e: Error & { code?: string }) => e.code === 'LMB_ERR_ENDPOINT_NOT_LOOPBACK' && /10\.1\.2\.3 is not a loopback address/.test(e.message));
  assert.throws(() => createPowerMeter(PowerSpec.parse({ kind: 'dcgm', urls: ['http://user:pw@127.0.0.1:9400/'] }), {}), /must not carry credentials/);
  assert.throws(() => createPowerMeter(PowerSpec.parse({ kind: 'dcgm', urls: ['file:///etc/passwd'] }), {}), /must be http\(s\)/);
});

test('--power-gpus: a GPU named by UUID counts; one the exporter lacks makes power unavailable, not a smaller sum', async () => {
  const url = await exporter('ok');
  const byUuid = (await measure({ kind: 'dcgm', urls: [url], gpus: ['GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e51'] }, {})).reading;
  assert.equal(byUuid.ok, true, byUuid.ok ? '' : byUuid.reason);
  if (byUuid.ok) assert.deepEqual(byUuid.series.map((s) => s.gpu), ['1']);
  assert.equal(unavailable((await measure({ kind: 'dcgm', urls: [url], gpus: ['0', '7'] }, {})).reading), 'the DCGM exporter reports no GPU 7');
});
