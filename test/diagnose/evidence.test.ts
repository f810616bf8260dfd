import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerEvidence, type RequestRecord } from '../../src/domain/index.js';
import { atLimit, clientEvidence, evidenceFromServerMetrics, serverEvidenceFromScrapes } from '../../src/diagnose/evidence.js';
import { parsePrometheus } from '../../src/loadgen/scrape.js';

// Scrapes as vLLM writes them (two DP engines, label sets, histogram series), reduced to evidence.
interface Point {
  running: [number, number];
  waiting: [number, number];
  kv: [number, number];
  preempt: number;
  queue: [number, number];
  prefill: [number, number];
  steps: [number, number];
}
const scrape = (p: Point, kvName = 'vllm:kv_cache_usage_perc'): ReturnType<typeof parsePrometheus> =>
  parsePrometheus(
    [
      '# TYPE vllm:num_requests_running gauge',
      ...p.running.map((v, e) => `vllm:num_requests_running{engine="${e}",model_name="m"} ${v}`),
      ...p.waiting.map((v, e) => `vllm:num_requests_waiting{engine="${e}",model_name="m"} ${v}`),
      ...p.kv.map((v, e) => `${kvName}{engine="${e}",model_name="m"} ${v}`),
      `vllm:num_preemptions_total{engine="0",model_name="m"} ${p.preempt}`,
      `vllm:request_queue_time_seconds_bucket{engine="0",le="+Inf",model_name="m"} ${p.queue[1]}`,
      `vllm:request_queue_time_seconds_sum{engine="0",model_name="m"} ${p.queue[0]}`,
      `vllm:request_queue_time_seconds_count{engine="0",model_name="m"} ${p.queue[1]}`,
      `vllm:request_prefill_time_seconds_sum{engine="0",model_name="m"} ${p.prefill[0]}`,
      `vllm:request_prefill_time_seconds_count{engine="0",model_name="m"} ${p.prefill[1]}`,
      `vllm:iteration_tokens_total_sum{engine="0",model_name="m"} ${p.steps[0]}`,
      `vllm:iteration_tokens_total_count{engine="0",model_name="m"} ${p.steps[1]}`,
    ].join('\n'),
  );

const points: Point[] = [
  { running: [0, 0], waiting: [0, 0], kv: [0, 0], preempt: 7, queue: [10, 100], prefill: [5, 100], steps: [1000, 10] },
  { running: [8, 8], waiting: [3, 2], kv: [0.2, 0.5], preempt: 7, queue: [10, 100], prefill: [5, 100], steps: [1000, 10] },
  { running: [8, 7], waiting: [5, 0], kv: [0.3, 0.96], preempt: 9, queue: [12, 110], prefill: [5.5, 110], steps: [3000, 30] },
  { running: [4, 3], waiting: [0, 0], kv: [0.1, 0.2], preempt: 9, queue: [14, 120], prefill: [6, 120], steps: [5000, 50] },
];

test('gauges become shares and means over the scrapes; histograms and counters become deltas', () => {
  const e = ServerEvidence.parse(serverEvidenceFromScrapes(points.map((p) => scrape(p)), { max_num_seqs: 8, data_parallel_size: 2 }));
  assert.equal(e.samples, 4);
  assert.equal(e.running_peak, 16);
  assert.equal(e.running_mean, (0 + 16 + 15 + 7) / 4);
  assert.equal(e.waiting_peak, 5);
  assert.equal(e.waiting_share, 0.5);
  // Limit 8 × 2 = 16; "at it" from 15 on (one seat freed by a finishing request still counts as full):
  // both scrapes with requests waiting ran 16 and 15.
  assert.equal(atLimit(16), 15);
  assert.equal(atLimit(256), 243.2, 'a large batch: within 5%');
  assert.equal(e.capped_share, 0.5);
  assert.equal(e.running_limit, 16);
  assert.equal(e.running_limit_known, true);
  assert.equal(e.kv_usage_peak, 0.96, 'the fullest engine');
  assert.equal(e.kv_full_share, 0.25);
  assert.equal(e.preemptions, 2);
  assert.ok(Math.abs((e.queue_ms_mean ?? 0) - (4 / 20) * 1000) < 1e-9, 'queue: 4 s over 20 requests');
  assert.ok(Math.abs((e.prefill_ms_mean ?? 0) - 50) < 1e-9);
  assert.equal(e.decode_ms_mean, null, 'a server without that histogram');
  assert.equal(e.step_tokens_mean, 100);
});

test("a fixed run's idle scrapes before and after its load bound the counters but are no gauge samples", () => {
  const idle: Point = { running: [0, 0], waiting: [0, 0], kv: [0, 0], preempt: 9, queue: [14, 120], prefill: [6, 120], steps: [5000, 50] };
  const e = ServerEvidence.parse(serverEvidenceFromScrapes([...points, idle].map((p) => scrape(p)), { max_num_seqs: 8, data_parallel_size: 2 }, { idleEnds: true }));
  // The gauges of the three scrapes taken under load: two of three waited, one of three had an engine's KV ≥ 95%.
  assert.equal(e.samples, 3);
  assert.equal(e.running_mean, (16 + 15 + 7) / 3);
  assert.equal(e.waiting_share, 2 / 3);
  assert.equal(e.kv_full_share, 1 / 3);
  // The counters still from the first scrape to the last.
  assert.equal(e.preemptions, 2);
  assert.ok(Math.abs((e.queue_ms_mean ?? 0) - (4 / 20) * 1000) < 1e-9);
});

test('with max_num_seqs unknown the limit is the running plateau; old KV names read the same', () => {
  const e = serverEvidenceFromScrapes(points.map((p) => scrape(p, 'vllm:gpu_cache_usage_perc')), {});
  assert.equal(e?.running_limit, 16);
  assert.equal(e?.running_limit_known, false);
  assert.equal(e?.kv_usage_peak, 0.96);
  assert.equal(serverEvidenceFromScrapes([], {}), null);
  // A limit of 4: at it from 3 running (one seat freed by a finished request counts as full).
  assert.equal(atLimit(4), 3);
  assert.equal(atLimit(1), 1);
});

test('a result with only peaks gives what peaks allow: preemptions and the KV peak, no shares', () => {
  const e = evidenceFromServerMetrics(
    { kv_cache_usage_peak: 1, kv_cache_peak_gib: null, kv_cache_capacity_tokens: null, gpu_memory_reserved_gib: null, num_preemptions: 3, num_requests_running_peak: 30, num_requests_waiting_peak: 9, prefix_cache_hit_rate: null },
    { max_num_seqs: 32 },
  );
  assert.equal(e?.preemptions, 3);
  assert.equal(e?.running_limit, 32);
  assert.equal(e?.waiting_share, null);
  assert.equal(evidenceFromServerMetrics(null, {}), null);
});

test('the client is late only where it had a schedule to keep, and a wait for a free slot is not lateness', () => {
  const rec = (sched: number, enqueue: number, send: number): RequestRecord => ({
    request_id: 'r', sched_time_s: sched, enqueue_time_s: enqueue, send_time_s: send, first_byte_time_s: send + 0.1, chunk_times_s: [send + 0.1], done_time_s: send + 0.1,
    prompt_tokens: 1, prompt_tokens_client: 1, output_tokens: 1, token_source: 'usage', cached_tokens: null, finish_reason: 'length', http_status: 200,
    error_kind: null, error: null, phase: 'measure', worker_id: 0, loop_lag_ms: 0,
  });
  // Four sends: one left 150 ms late, one waited 2 s for a slot under the cap (the server's doing).
  const records = [rec(0, 0, 0), rec(1, 1.15, 1.15), rec(2, 2, 4), rec(3, 3.01, 3.01)];
  const open = clientEvidence(records, { loopLagP99Ms: 3, loopLagMaxMs: 9, cpuMs: 500, wallMs: 1000, threads: 2 }, true);
  assert.equal(open.late_send_share, 0.25);
  assert.equal(open.cpu_share, 0.25);
  assert.equal(clientEvidence(records, { loopLagP99Ms: 3, loopLagMaxMs: 9, cpuMs: null, wallMs: 1000, threads: 1 }, false).late_send_share, null);
});
