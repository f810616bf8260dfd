import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult, type RequestRecord, type Workload } from '../../src/domain/index.js';
import { buildResult } from '../../src/loadgen/result.js';
import { startSimServer, type SimServer } from '../../src/sim/server.js';
import { captureIo } from '../helpers/cli.js';

const workload: Workload = {
  name: 'fixed',
  api: 'completions',
  input_len: { dist: 'fixed', value: 64 },
  output_len: { dist: 'fixed', value: 16 },
  arrival: { kind: 'poisson', rate_rps: 10 },
  num_prompts: 200,
  ignore_eos: true,
};

/** Requests due every 0.1 s from 5 s on; the server starts request i after `startS(i)` and streams 16 tokens. */
function records(startS: (i: number, dueS: number) => number): RequestRecord[] {
  return Array.from({ length: 200 }, (_, i) => {
    const due = 5 + i * 0.1;
    const first = startS(i, due);
    const chunks = Array.from({ length: 16 }, (_, k) => first + k * 0.01);
    return {
      request_id: `r${i}`, sched_time_s: due, enqueue_time_s: due, send_time_s: due, first_byte_time_s: first, chunk_times_s: chunks, done_time_s: first + 0.16,
      prompt_tokens: 64, prompt_tokens_client: 64, output_tokens: 16, token_source: 'usage', cached_tokens: null, finish_reason: 'length', http_status: 200,
      error_kind: null, error: null, phase: 'measure', worker_id: 0, loop_lag_ms: null,
    };
  });
}
const ctx = { workload, model: 'm', api: 'completions' as const, serverMetrics: null, maxLoopLagMs: null, startEpochMs: 0 };

test('request_rate is the rate the schedule offered the requests sent: a run cut short in its first stage reports that stage\'s', () => {
  // The first stage holds exactly the 200 requests sent; the stages' mean is (200 + 12,000) / 625 s.
  const mean = 12_200 / 625;
  const stages: Workload = { ...workload, arrival: { kind: 'poisson', rate_rps: mean, stages: [{ rate_rps: 8, duration_s: 25 }, { rate_rps: 20, duration_s: 600 }] } };
  const sent = records((_, due) => due);
  assert.equal(buildResult(sent, { ...ctx, workload: stages, fromSchedule: true }).request_rate, 8, '200 requests, all in the 8 req/s stage');
  // Warm-up records are not the schedule's: 50 more counted would reach into the 20 req/s stage.
  const warm = sent.slice(0, 50).map((r) => ({ ...r, phase: 'warmup' as const }));
  assert.equal(buildResult([...warm, ...sent], { ...ctx, workload: stages, fromSchedule: true }).request_rate, 8);
  // A caller whose rate a controller moves (slo-hold) keeps the arrival's nominal rate.
  assert.equal(buildResult(sent, { ...ctx, workload: stages }).request_rate, mean);
});

test('an open-loop run whose server falls behind its arrivals is saturated, with the rate it sustained; one that keeps up is not', () => {
  // One request at a time, 0.16 s each, against one every 0.1 s: about 6 of the 10 req/s offered.
  let free = 0;
  const behind = buildResult(records((_, due) => (free = Math.max(free, due) + 0.16) - 0.16), { ...ctx, scheduleStartS: 5 });
  assert.equal(behind.saturation?.saturated, true, JSON.stringify(behind.saturation));
  assert.ok(Math.abs((behind.saturation?.offered_rps ?? 0) - 10) < 0.5);
  assert.ok((behind.saturation?.sustained_rps ?? 0) > 5 && (behind.saturation?.sustained_rps ?? 0) < 7.5, JSON.stringify(behind.saturation));
  const kept = buildResult(records((_, due) => due + 0.02), { ...ctx, scheduleStartS: 5 });
  assert.equal(kept.saturation?.saturated, false);
  // The verdict's window is on the run's own axis (the schedule began at 5 s), as the steady state's is.
  assert.ok((behind.saturation?.window_start_s ?? 0) > 5 + 9 && (behind.saturation?.window_end_s ?? 0) <= 5 + 20);
  // A server that sheds what it cannot take (503) or lets it time out fell behind too; a 400 is not load.
  const shed = records((_, due) => due + 0.02).map((r, i) => (i % 3 === 0 ? r : { ...r, chunk_times_s: [], first_byte_time_s: null, done_time_s: null, output_tokens: 0, error_kind: 'http_status' as const, http_status: 503, error: '503' }));
  assert.equal(buildResult(shed, { ...ctx, scheduleStartS: 5 }).saturation?.saturated, true);
  const refused = shed.map((r) => (r.http_status === 503 ? { ...r, http_status: 400, error: '400' } : r));
  assert.equal(buildResult(refused, { ...ctx, scheduleStartS: 5 }).saturation?.saturated, false);
  // A closed loop, or a run whose rate a controller moves, is not judged.
  assert.equal(buildResult(records((_, due) => due + 0.02), ctx).saturation, undefined);
  assert.ok(BenchmarkResult.safeParse(behind).success);
});

test('rate stages are read on the schedule\'s axis: a busy first stage that a calm second one drains is still saturated', () => {
  // 10 req/s for 20 s, then 2 req/s for 20 s, the schedule starting 5 s into the run; a server taking
  // one request every 0.16 s falls behind in the first stage and catches up in the second.
  const staged: Workload = { ...workload, arrival: { kind: 'poisson', rate_rps: 6, stages: [{ rate_rps: 10, duration_s: 20 }, { rate_rps: 2, duration_s: 20 }] } };
  const dues = [...Array.from({ length: 200 }, (_, i) => 5 + i * 0.1), ...Array.from({ length: 40 }, (_, i) => 25 + i * 0.5)];
  let free = 0;
  const recs = dues.map((due, i) => {
    const first = (free = Math.max(free, due) + 0.16) - 0.16;
    const base = records(() => 0)[0] as RequestRecord;
    return { ...base, request_id: `r${i}`, sched_time_s: due, enqueue_time_s: due, send_time_s: due, first_byte_time_s: first, chunk_times_s: Array.from({ length: 16 }, (_, k) => first + k * 0.01), done_time_s: first + 0.16 };
  });
  const r = buildResult(recs, { ...ctx, workload: staged, scheduleStartS: 5 });
  assert.equal(r.saturation?.saturated, true, JSON.stringify(r.saturation));
  // The verdict is the first stage's, whose second half lies between 15 and 25 s of the run.
  assert.ok((r.saturation?.window_start_s ?? 0) >= 14 && (r.saturation?.window_end_s ?? 0) <= 25, JSON.stringify(r.saturation));
  // Read as one rate throughout, the drained queue would hide it.
  assert.equal(buildResult(recs, { ...ctx, scheduleStartS: 5 }).saturation?.saturated, false);
});

let sim: SimServer;
let dir: string;
before(async () => {
  // One request at a time (a simulated H100 at 40× real time): about 26 requests of 32 tokens a second, offered 200.
  sim = await startSimServer({ config: { max_num_seqs: 1 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', port: 0, speed: 40, seed: 1 });
  dir = mkdtempSync(join(tmpdir(), 'lmb-saturation-'));
});
after(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

test('`run` at a rate the server cannot sustain says so, in the result and in words', async () => {
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const args = ['run', '--endpoint', `${sim.url}/v1/completions`, '--input-len', '64', '--output-len', '32', '--num-prompts', '100', '--request-rate', '200', '--output', 'over.json'];
  const code = await main(args, io);
  assert.equal(code, 0, io.err());
  assert.match(io.out(), /SATURATED: cannot sustain this load: sustains \d+(\.\d+)? req\/s of \d+(\.\d+)? offered/);
  const r = BenchmarkResult.parse(JSON.parse(readFileSync(join(dir, 'over.json'), 'utf8').trim()));
  assert.equal(r.saturation?.saturated, true);
  assert.ok((r.saturation?.sustained_rps ?? 0) < 150, JSON.stringify(r.saturation));
});
