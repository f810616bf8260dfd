import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ErrorKindName, RequestRecord } from '../../src/domain/index.js';
import { GONE_AFTER_REFUSALS, watchServerGone } from '../../src/loadgen/server-gone.js';

// When a server has gone away: requests in a row that found no server (refused, or reset before any
// byte), counted until anything answers. The run that stops on it: run-slo-hold-stop.test.ts.

function rec(sendS: number, kind: ErrorKindName | null, firstByteS: number | null = kind === null ? sendS + 0.1 : null): RequestRecord {
  return {
    request_id: `r${sendS}`, sched_time_s: sendS, enqueue_time_s: sendS, send_time_s: sendS, first_byte_time_s: firstByteS,
    chunk_times_s: kind === null ? [sendS + 0.1] : [], done_time_s: sendS + 0.2, prompt_tokens: 10, prompt_tokens_client: 10, output_tokens: 1,
    token_source: 'usage', cached_tokens: null, finish_reason: kind === null ? 'length' : null, http_status: kind === null ? 200 : null,
    error_kind: kind, error: kind === null ? null : `connect ${kind}`, phase: 'measure', worker_id: 0, loop_lag_ms: 0,
  };
}

test('the limit-th refusal in a row says the server is gone, from the first of them', () => {
  const w = watchServerGone(3);
  w.see(rec(1, null));
  w.see(rec(2, 'connection_refused'));
  w.see(rec(3, 'connection_refused'));
  assert.equal(w.gone(), null);
  w.see(rec(4, 'connection_refused'));
  assert.deepEqual(w.gone(), { requests: 3, sinceS: 2, error: 'connect connection_refused' });
});

test('anything answered, an error status included, starts the count again; a reset before any byte counts, one mid-answer does not', () => {
  const w = watchServerGone(3);
  w.see(rec(1, 'connection_refused'));
  w.see(rec(2, 'connection_reset'));
  // A 503: the server is there, shedding load.
  w.see({ ...rec(3, 'http_status', 3.01), http_status: 503 });
  w.see(rec(4, 'connection_refused'));
  w.see(rec(5, 'connection_refused'));
  // Reset part-way through an answer: the server was there when it answered.
  w.see(rec(6, 'connection_reset', 6.1));
  w.see(rec(7, 'connection_refused'));
  assert.equal(w.gone(), null, 'one in a row since the answer cut short');
  // Time-outs and the caller's aborts say nothing either way.
  w.see(rec(8, 'timeout'));
  w.see(rec(9, 'aborted'));
  w.see(rec(10, 'connection_refused'));
  assert.equal(w.gone(), null);
  w.see(rec(11, 'connection_reset'));
  assert.deepEqual(w.gone(), { requests: 3, sinceS: 7, error: 'connect connection_reset' });
});

test(`by default ${GONE_AFTER_REFUSALS} refusals in a row, no fewer`, () => {
  const w = watchServerGone();
  for (let i = 0; i < GONE_AFTER_REFUSALS - 1; i++) w.see(rec(i, 'connection_refused'));
  assert.equal(w.gone(), null);
  w.see(rec(99, 'connection_refused'));
  assert.equal(w.gone()?.requests, GONE_AFTER_REFUSALS);
});
