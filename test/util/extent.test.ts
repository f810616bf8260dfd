import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extentOf } from '../../src/util/extent.js';
import { maxChunksPerSecond } from '../../src/metrics/benchmark.js';
import type { RequestRecord } from '../../src/domain/index.js';

test('extentOf: the least and greatest, of a list too long to spread into Math.min (which overflows the stack)', () => {
  const xs = Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 300_000);
  assert.throws(() => Math.max(...xs), RangeError);
  assert.deepEqual(extentOf(xs), { min: 0, max: 299_999 });
  assert.deepEqual(extentOf(new Set([3, -2, 5]).values()), { min: -2, max: 5 });
  assert.deepEqual(extentOf([]), { min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY });
});

test('a run of 200,000 requests has its peak chunk rate (it had overflowed the stack)', () => {
  const records = Array.from({ length: 200_000 }, (_, i): RequestRecord => ({ send_time_s: i / 1000, chunk_times_s: [i / 1000 + 0.01], error_kind: null }) as unknown as RequestRecord);
  assert.equal(maxChunksPerSecond(records), 1000);
});
