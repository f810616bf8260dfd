import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nearestMisses, roundUpLimit } from '../../src/optimize/nearest.js';

const slo = { ttft_p99_ms: 100, itl_p99_ms: 20 };

test('the nearest configurations are those whose worst latency is least past its limit, each with the SLO it would meet', () => {
  const items = [
    { config: { max_num_seqs: 8 }, values: { ttft_p99_ms: 400, itl_p99_ms: 10, output_throughput_per_gpu: 900 } },
    { config: { max_num_seqs: 16 }, values: { ttft_p99_ms: 130, itl_p99_ms: 21, output_throughput_per_gpu: 1500 } },
    { config: { max_num_seqs: 32 }, values: { ttft_p99_ms: 90, itl_p99_ms: 28, output_throughput_per_gpu: 2500 } },
    // Meets both: not a near miss (the caller found nothing that meets, but a prediction may).
    { config: { max_num_seqs: 4 }, values: { ttft_p99_ms: 90, itl_p99_ms: 19, output_throughput_per_gpu: 500 } },
    // Lacks a figure the SLO needs: cannot be judged.
    { config: { max_num_seqs: 2 }, values: { ttft_p99_ms: 50 } },
  ];
  const n = nearestMisses(items, slo);
  assert.deepEqual(n.map((m) => m.config.max_num_seqs), [16, 32, 8]);
  const first = n[0];
  assert.ok(first !== undefined);
  assert.equal(first.worst_ratio, 1.3);
  assert.deepEqual(first.misses.map((m) => m.slo), ['ttft_p99_ms', 'itl_p99_ms']);
  assert.deepEqual(first.would_meet, { ttft_p99_ms: 130, itl_p99_ms: 21 });
  // A limit it already meets stays as asked.
  assert.deepEqual(n[1]?.would_meet, { ttft_p99_ms: 100, itl_p99_ms: 28 });
});

test('two configurations that would meet the same SLO count once', () => {
  const items = [
    { config: { max_num_seqs: 1 }, values: { ttft_p99_ms: 121, itl_p99_ms: 10 } },
    { config: { max_num_seqs: 2 }, values: { ttft_p99_ms: 122, itl_p99_ms: 10 } },
  ];
  assert.equal(nearestMisses(items, slo).length, 1);
});

test('limits are rounded up to two significant digits', () => {
  assert.equal(roundUpLimit(384.2), 390);
  assert.equal(roundUpLimit(21.01), 22);
  assert.equal(roundUpLimit(7.3), 8);
  assert.equal(roundUpLimit(1234), 1300);
  assert.equal(roundUpLimit(130), 130);
});
