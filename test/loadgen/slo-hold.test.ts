// The control loop against a live server, in real time, is the timing lane's: slo-hold.timing.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RequestRecord } from '../../src/domain/index.js';
import { observationWindow, observedValue } from '../../src/loadgen/slo-hold.js';

function rec(sendS: number, ttftS: number, doneS: number): RequestRecord {
  return {
    request_id: `r${sendS}`, sched_time_s: sendS, enqueue_time_s: sendS, send_time_s: sendS, first_byte_time_s: sendS + ttftS,
    chunk_times_s: [sendS + ttftS, doneS], done_time_s: doneS, prompt_tokens: 10, prompt_tokens_client: 10, output_tokens: 2,
    token_source: 'usage', cached_tokens: null, finish_reason: 'length', http_status: 200, error_kind: null, error: null,
    phase: 'measure', worker_id: 0, loop_lag_ms: 0,
  };
}

test('the held TTFT percentile counts requests still waiting past the limit as breaches at their age', () => {
  // 20 requests answered in 100 ms, in the window.
  const done = Array.from({ length: 20 }, (_, i) => rec(10 + i * 0.1, 0.1, 11 + i * 0.1));
  const base = { key: 'ttft_p95_ms' as const, records: done, nowS: 15, sinceS: 11, limitMs: 400, minSamples: 20, horizonS: 30 };
  assert.ok(Math.abs((observedValue({ ...base, live: [] }) as number) - 100) < 1e-6);
  // Five more stuck in the server's queue for 3 s: they have no TTFT yet, but they are breaches.
  const stuck = Array.from({ length: 5 }, () => ({ sendS: 12, firstS: null }));
  assert.ok((observedValue({ ...base, live: stuck }) as number) > 2000);
  // Waiting, but not yet past the limit: no evidence either way, so not counted.
  const young = Array.from({ length: 5 }, () => ({ sendS: 14.9, firstS: null }));
  assert.ok(Math.abs((observedValue({ ...base, live: young }) as number) - 100) < 1e-6);
  // Too few observations: no value.
  assert.equal(observedValue({ ...base, records: done.slice(0, 5), live: [] }), null);
});

test('old breaches age out of the held percentile: a drained queue is not judged again, and too few recent answers is no breach', () => {
  // A queue 60 s ago: 20 requests that waited 3 s. Since then the server answered 3 in 100 ms.
  const old = Array.from({ length: 20 }, (_, i) => rec(i * 0.5, 3, 3 + i * 0.5 + 0.1));
  const recent = [rec(60, 0.1, 60.2), rec(62, 0.1, 62.2), rec(64, 0.1, 64.2)];
  const o = { key: 'ttft_p95_ms' as const, records: [...old, ...recent], live: [], nowS: 70, sinceS: 66, limitMs: 400, minSamples: 5, horizonS: 20 };
  assert.equal(observedValue(o), null, 'three recent answers are too few to judge, and the old breaches are past the horizon');
  assert.ok(Math.abs((observedValue({ ...o, minSamples: 3 }) as number) - 100) < 1e-6);
  // The window a slow server gets: long enough for its few answers, never older than three answer windows.
  assert.deepEqual(observationWindow(0.5, 4, 10, false), { horizonS: 30, minSamples: 7 });
  assert.deepEqual(observationWindow(20, 4, 10, false), { horizonS: 4, minSamples: 20 });
});
