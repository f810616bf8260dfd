import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TimeHeap } from '../../src/sim/index.js';
import { createRng } from '../../src/util/rng.js';

test('the front-end heap pops in time order, equal times in the order pushed (FCFS into the engine)', () => {
  const rng = createRng(7);
  const heap = new TimeHeap<number>();
  const pushed: { t: number; i: number }[] = [];
  // Few distinct times, many ties, pops interleaved with pushes.
  const out: { t: number; i: number }[] = [];
  for (let i = 0; i < 2000; i++) {
    const t = Math.floor(rng.next() * 8);
    heap.push(t, i);
    pushed.push({ t, i });
    if (rng.next() < 0.3) {
      const min = Math.min(...pushed.map((p) => p.t));
      const first = pushed.find((p) => p.t === min) as { t: number; i: number };
      assert.equal(heap.peekTime(), min);
      assert.equal(heap.pop(), first.i);
      pushed.splice(pushed.indexOf(first), 1);
      out.push(first);
    }
  }
  const rest = [...pushed].sort((a, b) => a.t - b.t || a.i - b.i);
  for (const p of rest) assert.equal(heap.pop(), p.i);
  assert.equal(heap.size, 0);
  assert.equal(heap.pop(), undefined);
  assert.equal(out.length > 0, true);
});
