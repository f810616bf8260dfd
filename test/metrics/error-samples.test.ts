import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestRecord } from '../../src/domain/index.js';
import { errorSamples } from '../../src/metrics/error-samples.js';

function record(i: number, error: string | null, status: number | null = error === null ? 200 : 400): RequestRecord {
  return {
    request_id: `r${i}`,
    sched_time_s: i,
    enqueue_time_s: i,
    send_time_s: i,
    first_byte_time_s: error === null ? i + 0.1 : null,
    chunk_times_s: [],
    done_time_s: i + 0.2,
    prompt_tokens: 10,
    prompt_tokens_client: null,
    output_tokens: error === null ? 4 : 0,
    token_source: 'usage',
    cached_tokens: null,
    finish_reason: null,
    http_status: status,
    error_kind: error === null ? null : 'http_status',
    error,
    phase: 'measure',
    worker_id: 0,
    loop_lag_ms: null,
  };
}

const tooLong = (p: number): string => `This model's maximum context length is 2048 tokens. However, you requested ${p + 200} tokens (${p} in the messages, 200 in the completion).`;

test("a run's errors are grouped by wording, most frequent first, each keeping its longest refusal", () => {
  const records = [record(0, null), record(1, tooLong(2100)), record(2, tooLong(2900)), record(3, tooLong(2300)), record(4, 'connection reset by peer', null), record(5, null)];
  const s = errorSamples(records);
  assert.equal(s.length, 2);
  assert.deepEqual(s[0], { status: 400, message: tooLong(2900), count: 3 });
  assert.deepEqual(s[1], { status: null, message: 'connection reset by peer', count: 1 });
  assert.deepEqual(errorSamples([record(0, null)]), []);
  // At most `limit` groups.
  const many = Array.from({ length: 9 }, (_, i) => record(i, `error kind ${String.fromCharCode(97 + i)}`));
  assert.equal(errorSamples(many, 5).length, 5);
});
