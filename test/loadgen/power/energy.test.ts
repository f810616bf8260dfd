import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestRecord } from '../../../src/domain/index.js';
import { parseAmdSmiPower } from '../../../src/loadgen/power/amd-smi.js';
import { chooseSeries } from '../../../src/loadgen/power/dcgm.js';
import { energyFromReading, loadWindow, seriesEnergyJ } from '../../../src/loadgen/power/energy.js';
import { parseSmiLine } from '../../../src/loadgen/power/nvidia-smi.js';
import type { GpuSeries } from '../../../src/loadgen/power/types.js';
import { parsePrometheusSeries } from '../../../src/loadgen/scrape.js';
import { exposition } from '../../helpers/dcgm-exporter.js';

const gauge = (gpu: string, tS: number[], values: number[]): GpuSeries => ({ gpu, kind: 'power_w', tS, values });
const counter = (gpu: string, tS: number[], values: number[]): GpuSeries => ({ gpu, kind: 'energy_j', tS, values });

test('a power gauge is integrated by trapezoids, and cut at the window edges by interpolation', () => {
  // 100 W at t=0 rising to 300 W at t=2: 400 J over [0, 2]; over [1, 2] the ramp from 200 to 300 W: 250 J.
  const s = gauge('0', [0, 1, 2], [100, 200, 300]);
  assert.equal(seriesEnergyJ(s, 0, 2), 400);
  assert.equal(seriesEnergyJ(s, 1, 2), 250);
  // Past the last reading (within the tolerance) the gauge holds its last value: 300 W for 0.5 s more.
  assert.equal(seriesEnergyJ(s, 0, 2.5), 550);
});

test('an energy counter gives its rise; backwards (a reset) or too far from the window, no figure', () => {
  const c = counter('1', [0, 1, 3], [1000, 1100, 1500]);
  assert.equal(seriesEnergyJ(c, 0, 3), 500);
  assert.equal(seriesEnergyJ(c, 2, 3), 200);
  assert.equal(seriesEnergyJ(c, -0.5, 3), 550, 'extended at the first interval\'s 100 W');
  assert.match(String(seriesEnergyJ(counter('1', [0, 1, 2], [10, 20, 5]), 0, 2)), /went backwards \(reset\)/);
  assert.match(String(seriesEnergyJ(c, 0, 10)), /cover 0\.00–3\.00 s of the run, not its load window 0\.00–10\.00 s/);
  assert.match(String(seriesEnergyJ(counter('1', [0], [10]), 0, 0.5)), /single energy-counter reading/);
});

test('the energy block sums the GPUs over the window, with J per output token', () => {
  const reading = { ok: true as const, source: 'nvidia-smi' as const, series: [gauge('0', [0, 4], [100, 100]), gauge('1', [0, 4], [250, 250])] };
  const e = energyFromReading(reading, { startS: 1, endS: 3 }, 700, 8);
  assert.deepEqual(e, { source: 'nvidia-smi', gpus: 2, window: { start_s: 1, end_s: 3, rule: 'load' }, avg_power_w: 350, energy_j: 700, energy_per_output_token_j: 1, output_tokens_per_joule: 1, unavailable_reason: null });
  const none = energyFromReading({ ok: false, source: 'dcgm-energy', reason: 'the DCGM exporter hung' }, { startS: 1, endS: 3 }, 700, 8);
  assert.deepEqual(none, { source: 'dcgm-energy', gpus: 8, window: null, avg_power_w: null, energy_j: null, energy_per_output_token_j: null, output_tokens_per_joule: null, unavailable_reason: 'the DCGM exporter hung' });
  assert.equal(energyFromReading(reading, null, 0, 8).unavailable_reason, 'no request was sent, so there is no load window');
  assert.equal(energyFromReading(reading, { startS: 2, endS: 2 }, 0, 8).unavailable_reason, 'the load window is empty');
  assert.equal(energyFromReading(reading, { startS: 1, endS: 3 }, 0, 8).energy_per_output_token_j, null, 'no tokens, no J per token');
});

test('the load window runs from the first measured send to the last answer, warm-up left out', () => {
  const rec = (phase: RequestRecord['phase'], send: number, done: number | null, chunks: number[] = []): RequestRecord => ({
    request_id: 'r', sched_time_s: send, enqueue_time_s: send, send_time_s: send, first_byte_time_s: chunks[0] ?? null, chunk_times_s: chunks, done_time_s: done,
    prompt_tokens: 1, prompt_tokens_client: null, output_tokens: 1, token_source: 'usage', cached_tokens: null, finish_reason: null, http_status: 200, error_kind: null, error: null, phase, worker_id: 0, loop_lag_ms: null,
  });
  assert.deepEqual(loadWindow([rec('warmup', 0, 9), rec('measure', 2, 5), rec('measure', 3, null, [3.5, 7.5]), rec('measure', 4, 6)]), { startS: 2, endS: 7.5 });
  assert.equal(loadWindow([rec('warmup', 0, 1)]), null);
});

test('DCGM: the counter when it advances on every GPU, else the gauge; frozen values are no reading', () => {
  const e = [counter('0', [0, 1], [5, 105])];
  const p = [gauge('0', [0, 1], [99, 101])];
  assert.equal(chooseSeries(e, p, null).source, 'dcgm-energy');
  assert.equal(chooseSeries([counter('0', [0, 1], [5, 5])], p, null).source, 'dcgm-power', 'a counter that never moves (unsupported) gives way to the gauge');
  const frozen = chooseSeries([counter('0', [0, 1], [5, 5])], [gauge('0', [0, 1], [99, 99])], null);
  assert.equal(frozen.ok, false);
  assert.match(frozen.ok ? '' : frozen.reason, /did not change during the run/);
  const partial = chooseSeries([counter('0', [0, 1], [5, 105])], [gauge('0', [0, 1], [99, 101]), gauge('1', [0, 1], [50, 51])], null);
  assert.equal(partial.source, 'dcgm-power', 'GPU 1 has no counter: the gauge covers both');
});

test('the DCGM exposition is read per GPU through the shared Prometheus parser, labels and escapes kept', () => {
  const series = parsePrometheusSeries(exposition([100, 250], 2, 1, 'ok'), new Set(['DCGM_FI_DEV_POWER_USAGE', 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION']));
  assert.equal(series.length, 4);
  assert.deepEqual(series.map((s) => [s.name, s.labels['gpu'], s.value]), [
    ['DCGM_FI_DEV_POWER_USAGE', '0', 100.25],
    ['DCGM_FI_DEV_POWER_USAGE', '1', 250.25],
    ['DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', '0', 9_000_200_000],
    ['DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', '1', 10_000_500_000],
  ]);
  assert.equal(series[0]?.labels['modelName'], 'NVIDIA H100 80GB HBM3');
  const odd = parsePrometheusSeries('m{a="x}y",b="q\\"u\\\\o"} 3\n', new Set(['m']));
  assert.deepEqual(odd, [{ name: 'm', labels: { a: 'x}y', b: 'q"u\\o' }, value: 3 }]);
});

test('nvidia-smi lines: readings, [N/A], and anything else', () => {
  assert.deepEqual(parseSmiLine('0, 245.67'), { gpu: '0', watts: 245.67 });
  assert.deepEqual(parseSmiLine('3, 71.02 W'), { gpu: '3', watts: 71.02 });
  assert.equal(parseSmiLine('1, [N/A]'), 'na');
  assert.equal(parseSmiLine('1, [Not Supported]'), 'na');
  assert.equal(parseSmiLine('No devices were found'), null);
  assert.equal(parseSmiLine('0, '), null);
});

test('amd-smi JSON: list or gpu_data, {value, unit} or a bare number, N/A, older field names', () => {
  assert.deepEqual([...parseAmdSmiPower('[{"gpu":0,"power":{"socket_power":{"value":142,"unit":"W"}}},{"gpu":1,"power":{"socket_power":"N/A"}}]')], [['0', 142], ['1', null]]);
  assert.deepEqual([...parseAmdSmiPower('WARNING: x\n{"gpu_data":[{"gpu":2,"power":{"average_socket_power":{"value":90000,"unit":"mW"}}}]}')], [['2', 90]]);
  assert.deepEqual([...parseAmdSmiPower('[{"gpu":0,"power":{"current_socket_power":300}}]')], [['0', 300]]);
  assert.throws(() => parseAmdSmiPower('{"error": "no"}'), /holds no list of GPUs/);
  assert.throws(() => parseAmdSmiPower('[{"gpu":0}]'), /no GPU with a power block/);
});
