import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nearestMisses, roundUpLimit, type MeetsRule } from '../../src/optimize/nearest.js';

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

test("with the answer's rule, what a near miss would meet is an SLO the rule counts it as meeting, not its bare figures", () => {
  // A rule that asks a 50% margin over the figures (as P(meets) ≥ 0.9 under a wide spread does).
  const meets: MeetsRule = (_c, v, s) =>
    (v.ttft_p99_ms ?? Infinity) * 1.5 <= (s.ttft_p99_ms ?? 0) && (v.itl_p99_ms ?? Infinity) * 1.5 <= (s.itl_p99_ms ?? 0);
  const items = [
    { config: { max_num_seqs: 16 }, values: { ttft_p99_ms: 101, itl_p99_ms: 10, output_throughput_per_gpu: 1500 } },
    // Its figures meet both limits, but not with the margin the rule asks: a near miss too.
    { config: { max_num_seqs: 8 }, values: { ttft_p99_ms: 95, itl_p99_ms: 19, output_throughput_per_gpu: 900 } },
  ];
  const n = nearestMisses(items, slo, 3, meets);
  assert.equal(n.length, 2);
  for (const m of n) {
    assert.ok(meets(m.config, m.values, m.would_meet), `${JSON.stringify(m.would_meet)} is not met as the rule asks`);
  }
  // The figures alone would have offered ttft_p99_ms=110: the rule then still finds nothing.
  assert.ok((n.find((m) => m.config.max_num_seqs === 16)?.would_meet.ttft_p99_ms ?? 0) >= 151.5);
  // A limit the rule's margin already covers stays as asked.
  assert.equal(n.find((m) => m.config.max_num_seqs === 16)?.would_meet.itl_p99_ms, 20);
  assert.deepEqual(n.find((m) => m.config.max_num_seqs === 8)?.misses, []);
});

test('a configuration no reasonable relaxation makes the rule accept is no near miss', () => {
  const n = nearestMisses([{ config: { max_num_seqs: 16 }, values: { ttft_p99_ms: 101, itl_p99_ms: 10 } }], slo, 3, () => false);
  assert.deepEqual(n, []);
});
