import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSpace } from '../../src/space/index.js';
import { ctxOf, spaceEditor, VLLM_SPACE } from './helpers.js';

// vLLM takes any data_parallel_size (only tensor_parallel_size must divide the heads): the shipped
// grid [1, 2, 4, 8] never tried 3 replicas on 3 GPUs, nor DP 3 × TP 2 or DP 6 on 6.
const space = loadSpace(VLLM_SPACE);
const dpAt = space.knobs.findIndex((k) => k.name === 'data_parallel_size');

const layouts = (gpus: number): Set<string> => {
  const ctx = ctxOf('H100-SXM', gpus, 'llama-3.1-8b');
  const b = space.bind(ctx);
  const tps = b.options[space.knobs.findIndex((k) => k.name === 'tensor_parallel_size')] ?? [];
  const out = new Set<string>();
  for (const tp of tps) {
    for (const dp of b.options[dpAt] ?? []) {
      // vLLM's defaults otherwise: only the layout decides whether the static and memory rules pass.
      const v = space.isFeasible({ tensor_parallel_size: tp as number, data_parallel_size: dp as number }, ctx);
      if (v.ok) out.add(`${String(tp)}x${String(dp)}`);
      else assert.ok(['C1', 'C2', 'C3', 'C4'].includes(v.rule ?? ''), `${String(tp)}x${String(dp)} removed by ${v.rule ?? '?'}: ${v.message ?? ''}`);
    }
  }
  return out;
};

test('the data_parallel_size grid holds every replica count the GPUs fit, up to the knob high of 8', () => {
  const dp = (gpus: number): unknown[] => [...(space.bind(ctxOf('H100-SXM', gpus, 'llama-3.1-8b')).options[dpAt] ?? [])];
  assert.deepEqual(dp(1), [1, 2, 4, 8], 'one GPU: the powers of two as before (C1 removes the rest)');
  assert.deepEqual(dp(3), [1, 2, 3, 4, 8]);
  assert.deepEqual(dp(6), [1, 2, 3, 4, 5, 6, 8]);
  assert.deepEqual(dp(8), [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(dp(16), [1, 2, 3, 4, 5, 6, 7, 8], 'capped at the knob high');
});

test('3 GPUs: DP 3 is a feasible layout; 6 GPUs: DP 3 × TP 2 and DP 6 too, every TP × DP that fits', () => {
  assert.deepEqual([...layouts(3)].sort(), ['1x1', '1x2', '1x3', '2x1']);
  const six = layouts(6);
  for (const l of ['1x3', '1x5', '1x6', '2x3', '4x1']) assert.ok(six.has(l), `${l} on 6 GPUs`);
  for (const l of six) {
    const [tp, dp] = l.split('x').map(Number);
    assert.ok((tp ?? 0) * (dp ?? 0) <= 6, l);
  }
  assert.equal(six.size, 6 + 3 + 1, 'TP 1 × DP 1–6, TP 2 × DP 1–3, TP 4 × DP 1');
});

test('neighbours step to the new replica counts', () => {
  const ctx = ctxOf('H100-SXM', 6, 'llama-3.1-8b');
  const from = space.complete({ tensor_parallel_size: 2, data_parallel_size: 2 }, ctx);
  const dps = new Set(space.neighbours(from, ctx).map((c) => c.data_parallel_size));
  // One grid step from DP 2 is DP 1 or DP 3 (the grid is ascending), not DP 4.
  assert.deepEqual([...dps].filter((d) => d !== 2).sort(), [1, 3]);
});

const edited = spaceEditor('lmb-fleet-grid-');

test('a list symbol as a default, or a symbol yielding no numbers, is refused naming the knob or symbol', () => {
  const asDefault = loadSpace(edited('list-default.yaml', 'grid: [1, 2, 4, 8, replica_counts]\n    default: 1', 'grid: [1, 2, 4, 8, replica_counts]\n    default: replica_counts'));
  assert.throws(
    () => asDefault.defaultsFor(ctxOf('H100-SXM', 3, 'llama-3.1-8b')),
    (e: Error & { code?: string }) => e.code === 'LMB_ERR_SPACE_INVALID' && /list-default\.yaml:\d+: knobs\.data_parallel_size\.default: symbol replica_counts yields a list \(1, 2, 3\), not one number/.test(e.message),
  );
  const strings = loadSpace(edited('strings.yaml', "expr: '[1, 2, 3, 4, 5, 6, 7, 8].filter(n, n <= hardware.gpus)'", "expr: '[\"a\", \"b\"]'"));
  assert.throws(
    () => strings.bind(ctxOf('H100-SXM', 3, 'llama-3.1-8b')),
    (e: Error & { code?: string }) => e.code === 'LMB_ERR_RULE_INVALID' && /symbol replica_counts: .* yields "a"; a symbol yields a number or a list of numbers/.test(e.message),
  );
});
