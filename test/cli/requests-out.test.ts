import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { RequestRecord } from '../../src/domain/index.js';
import { RequestLatency } from '../../src/domain/request-latency.js';
import { captureIo } from '../helpers/cli.js';
import { startSimServe, type SimServeProcess } from '../helpers/sim-serve.js';

// `--requests-out FILE.jsonl`: one line per request (arrival, TTFT, ITLs, E2E in ms, tokens), the same
// from `sim run` and from `run` against a server, so percentiles pool across stages and runs.

let dir: string;
let sim: SimServeProcess;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-requests-out-'));
  sim = await startSimServe(['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.2-1b', '--speed', '10', '--seed', '1', '--startup-scale', '0']);
});
after(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

const lines = (file: string): RequestLatency[] => readFileSync(join(dir, file), 'utf8').trim().split('\n').map((l) => RequestLatency.parse(JSON.parse(l)));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

test('sim run --rate-stages --prompt-pool --requests-out: a line per request, pooling to the printed figures', async () => {
  const io = captureIo(dir);
  const argv = ['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.2-1b', '--seed', '2', '--input-len', '300', '--output-len', '12',
    '--rate-stages', '5:4,30:2', '--prompt-pool', '10', '--requests-out', 'lat.jsonl', '--records', 'rec.jsonl', '--json'];
  assert.equal(await main(argv, io), 0, io.err());
  const result = JSON.parse(io.out()) as { completed: number; median_ttft_ms: number; p99_e2el_ms: number; mean_itl_ms: number };
  const lat = lines('lat.jsonl');
  assert.equal(lat.length, 20 + 60);
  assert.equal(result.completed, 80);
  assert.ok(lat.slice(0, 20).every((l) => l.arrival_s <= 4 + 1e-9) && lat.slice(20).every((l) => l.arrival_s > 4), 'each request in its stage');
  for (const l of lat) {
    assert.equal(l.itl_ms.length, 11);
    assert.equal(l.input_tokens, 300);
    assert.equal(l.output_tokens, 12);
    assert.equal(l.token_source, 'sim');
    const sum = (l.ttft_ms ?? 0) + l.itl_ms.reduce((s, x) => s + x, 0);
    assert.ok(Math.abs(sum - (l.e2e_ms ?? 0)) < 0.02, 'TTFT + ITLs = E2E');
  }
  assert.ok(lat.slice(10).every((l) => (l.cached_tokens ?? 0) > 0), 'the pool\'s re-sends hit the prefix cache');
  assert.ok(Math.abs(median(lat.map((l) => l.ttft_ms ?? 0)) - result.median_ttft_ms) < 0.01);
  const itls = lat.flatMap((l) => l.itl_ms);
  assert.ok(Math.abs(itls.reduce((s, x) => s + x, 0) / itls.length - result.mean_itl_ms) < 0.01);
  // --records writes run --records' format, one record per request.
  const recs = readFileSync(join(dir, 'rec.jsonl'), 'utf8').trim().split('\n').map((l) => RequestRecord.parse(JSON.parse(l)));
  assert.equal(recs.length, 80);
});

test('sim run: --num-prompts above what the stages hold, or a bad --rate-stages, is a usage error naming it', async () => {
  const base = ['sim', 'run', '--gpu', 'H100-SXM', '--model', 'llama-3.2-1b', '--input-len', '8', '--output-len', '2'];
  const cases: [string[], RegExp][] = [
    [['--rate-stages', '5:4', '--num-prompts', '21'], /LMB_ERR_WORKLOAD_INVALID: workload: num_prompts: the stages hold 20 requests; num_prompts \(21\) can only lower that/],
    [['--rate-stages', '5'], /LMB_ERR_INVALID_ARGUMENT: --rate-stages: stage 1 "5" is not RATE:SECONDS/],
    [['--rate-stages', '5:4', '--request-rate', '3'], /LMB_ERR_INVALID_ARGUMENT: --rate-stages sets Poisson rates/],
    [['--prompt-pool', '0'], /LMB_ERR_INVALID_ARGUMENT: .*prompt-pool/],
  ];
  for (const [extra, re] of cases) {
    const io = captureIo(dir);
    assert.equal(await main([...base, ...extra], io), 2, extra.join(' '));
    assert.match(io.err(), re);
  }
});

test('run --rate-stages --requests-out against a server: stage by stage, the same lines', async () => {
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const argv = ['run', '--endpoint', `${sim.url}/v1/completions`, '--input-len', '64', '--output-len', '4', '--rate-stages', '20:0.5,40:0.25', '--prompt-pool', '4', '--requests-out', 'real.jsonl', '--workers', '1'];
  assert.equal(await main(argv, io), 0, io.err());
  const lat = lines('real.jsonl');
  assert.equal(lat.length, 20);
  assert.ok(lat.every((l) => l.error === null && l.output_tokens === 4 && l.ttft_ms !== null && l.itl_ms.length === 3));
  assert.ok(lat.every((l) => l.token_source === 'usage'), 'the simulated server sends usage, and the line says the count is its');
  const t = lat.map((l) => l.arrival_s).sort((a, b) => a - b);
  // The schedule, not the clock: stage 1's last arrival ends it, stage 2 ends 0.25 s later.
  assert.ok((t[9] as number) - (t[0] as number) < 0.5);
  assert.ok(Math.abs((t[19] as number) - (t[9] as number) - 0.25) < 1e-6, `stage 2 spans ${(t[19] as number) - (t[9] as number)} s`);
});

test('one workload file, one seed: `run` sends the requests `sim run` simulates, and reports the rate it offered them', async () => {
  // num_prompts 5 is the file's own arrival's; --rate-stages replaces the arrival and, in both
  // commands, the count with the stages' (20). The leading pause offers nothing: 20 requests in
  // 0.75 s of stages are 26.7 req/s offered, not 20 / 1.05 s.
  writeFileSync(join(dir, 'w.yaml'), [
    'name: w',
    'input_len: { dist: lognormal, mean: 128, std: 64, min: 4, max: 512 }',
    'output_len: { dist: uniform, min: 4, max: 40 }',
    'arrival: { kind: poisson, rate_rps: 4 }',
    'num_prompts: 5',
    'ignore_eos: true',
  ].join('\n'));
  const flags = ['--workload', 'w.yaml', '--rate-stages', '0:0.3,20:0.5,40:0.25', '--seed', '5'];
  const simIo = captureIo(dir);
  assert.equal(await main(['sim', 'run', '--gpu', 'H100-SXM', '--model', 'llama-3.2-1b', ...flags, '--requests-out', 'sim-w.jsonl'], simIo), 0, simIo.err());
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  assert.equal(await main(['run', '--endpoint', `${sim.url}/v1/completions`, ...flags, '--requests-out', 'run-w.jsonl', '--workers', '1', '--json'], io), 0, io.err());
  const simulated = lines('sim-w.jsonl');
  const sent = lines('run-w.jsonl');
  assert.equal(simulated.length, 20);
  assert.deepEqual(sent.map((l) => [l.input_tokens, l.output_tokens]), simulated.map((l) => [l.input_tokens, l.output_tokens]));
  // The runner's clock starts before its schedule: the same arrivals, shifted by one constant.
  const shift = (sent[0]?.arrival_s ?? 0) - (simulated[0]?.arrival_s ?? 0);
  sent.forEach((l, i) => assert.ok(Math.abs(l.arrival_s - shift - (simulated[i]?.arrival_s ?? 0)) < 1e-6, `request ${i} at the simulator's time`));
  const result = JSON.parse(io.out()) as { num_prompts: number; request_rate: number };
  assert.equal(result.num_prompts, 20);
  assert.ok(Math.abs(result.request_rate - 20 / 0.75) < 1e-9, `request_rate ${result.request_rate}`);
});

test('run: rate stages do not go with a rate search, nor with --request-rate; a pool needs synthetic prompts', async () => {
  const ep = ['run', '--endpoint', 'http://127.0.0.1:9/v1/completions', '--input-len', '8', '--output-len', '2'];
  const cases: [string[], RegExp][] = [
    [['--rate-stages', '2:5', '--mode', 'max-rate'], /LMB_ERR_INVALID_ARGUMENT: --mode max-rate searches the request rate; rate stages set it themselves/],
    [['--rate-stages', '2:5', '--request-rate', '3'], /LMB_ERR_INVALID_ARGUMENT: --rate-stages and --request-rate both set the rate/],
    [['--rate-stages', '2:5', '--num-prompts', '11', '--dry-run'], /LMB_ERR_WORKLOAD_INVALID: num_prompts: the stages hold 10 requests/],
  ];
  for (const [extra, re] of cases) {
    const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
    assert.equal(await main([...ep, ...extra], io), 2, extra.join(' '));
    assert.match(io.err(), re);
  }
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  assert.equal(await main(['run', '--endpoint', 'http://127.0.0.1:9/v1/completions', '--trace', 'x.csv', '--prompt-pool', '3'], io), 2);
  assert.match(io.err(), /--prompt-pool re-sends synthetic prompts/);
});

test('run --mode max-rate --requests-out --records: every probe\'s requests, each id naming its probe', async () => {
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const argv = ['run', '--endpoint', `${sim.url}/v1/completions`, '--input-len', '64', '--output-len', '4', '--num-prompts', '8', '--warmup', '0', '--workers', '1',
    '--mode', 'max-rate', '--slo', 'ttft_p95_ms=0.001', '--requests-out', 'max-rate.jsonl', '--records', 'max-rate-rec.jsonl', '--json'];
  // No server answers within 1 µs: every probe misses, so the bisection runs several and the answer is unreliable.
  assert.equal(await main(argv, io), 1, io.err());
  const body = JSON.parse(io.out()) as { probes: unknown[] };
  assert.ok(body.probes.length > 1);
  const lat = lines('max-rate.jsonl');
  const probeOf = (id: string): number => Number(/^probe(\d+)-r\d+$/.exec(id)?.[1] ?? NaN);
  // Each probe sent the workload's 8 requests, and each line says which probe (its place in `probes`).
  assert.equal(lat.length, 8 * body.probes.length);
  for (let k = 1; k <= body.probes.length; k++) assert.equal(lat.filter((l) => probeOf(l.request_id) === k).length, 8, `probe ${k}`);
  assert.ok(lat.every((l) => l.error === null && l.ttft_ms !== null && l.itl_ms.length === 3));
  // --records keeps the same requests whole (it was written empty before).
  const recs = readFileSync(join(dir, 'max-rate-rec.jsonl'), 'utf8').trim().split('\n').map((l) => RequestRecord.parse(JSON.parse(l)));
  assert.deepEqual(recs.map((r) => r.request_id), lat.map((l) => l.request_id));
});

test('run --mode slo-hold --requests-out: every request it sent; those sent in window_s are the result\'s', async () => {
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const argv = ['run', '--endpoint', `${sim.url}/v1/completions`, '--input-len', '64', '--output-len', '4',
    '--mode', 'slo-hold', '--slo', 'ttft_p95_ms=60000', '--duration-s', '2', '--window-s', '1', '--requests-out', 'slo-hold.jsonl', '--json'];
  const code = await main(argv, io);
  assert.ok(code === 0 || code === 1, io.err());
  const body = JSON.parse(io.out()) as { window_s: { from: number; to: number }; result: { completed: number; failed: number } };
  const lat = lines('slo-hold.jsonl');
  assert.ok(lat.length > 0);
  assert.equal(new Set(lat.map((l) => l.request_id)).size, lat.length);
  const inWindow = lat.filter((l) => l.send_s >= body.window_s.from && l.send_s <= body.window_s.to);
  assert.equal(inWindow.length, body.result.completed + body.result.failed);
});
