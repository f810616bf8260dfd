import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Workload } from '../../src/domain/index.js';
import { promptRing, syntheticRequests, warmupRequests, type PreparedRequest } from '../../src/loadgen/prompts.js';
import { sampleRequests, trafficStreams } from '../../src/workload/sample.js';

const workload = (extra: Record<string, unknown> = {}): Workload =>
  Workload.parse({
    name: 'w',
    input_len: { dist: 'uniform', min: 40, max: 120 },
    output_len: { dist: 'uniform', min: 4, max: 16 },
    arrival: { kind: 'poisson', rate_rps: 4 },
    num_prompts: 40,
    ...extra,
  });

const shape = (rs: readonly PreparedRequest[]): unknown => rs.map((r) => [r.index, r.clientTokens, r.maxTokens, r.prompt.split(' ').length]);

/** Words two prompts share from their start. */
function commonPrefixWords(a: string, b: string): number {
  const x = a.split(' ');
  const y = b.split(' ');
  let k = 0;
  while (k < x.length && k < y.length && x[k] === y[k]) k++;
  return k;
}

test('a salt changes the words and nothing else: lengths, token counts and max_tokens stay the seed\'s', () => {
  const w = workload();
  const plain = syntheticRequests(w, 7);
  const salted = syntheticRequests(w, 7, 'a1b2');
  assert.deepEqual(shape(salted), shape(plain));
  assert.deepEqual(syntheticRequests(w, 7, 'a1b2'), salted, 'the same salt sends the same words again');
  assert.deepEqual(syntheticRequests(w, 7), plain, 'no salt: the seed alone decides the words, as before salts');
  const other = syntheticRequests(w, 7, 'c3d4');
  for (const [i, r] of salted.entries()) {
    assert.ok(commonPrefixWords(r.prompt, plain[i]?.prompt ?? '') < 8, `request ${i}: salted and unsalted words part at once`);
    assert.ok(commonPrefixWords(r.prompt, other[i]?.prompt ?? '') < 8, `request ${i}: two salts part at once`);
  }
});

test('a salted run keeps the sharing the workload asks for: shared prefixes and a pool\'s repeats', () => {
  const w = workload({ shared_prefix: { groups: 2, length: 32 }, prompt_pool: { size: 5 } });
  const specs = sampleRequests(w, trafficStreams(3).requests);
  const salted = syntheticRequests(w, 3, 'x');
  const plain = syntheticRequests(w, 3);
  for (const [i, s] of specs.entries()) {
    const r = salted[i] as PreparedRequest;
    if (s.promptId !== undefined && s.promptId !== i) assert.equal(r.prompt, salted[s.promptId]?.prompt, `request ${i} re-sends pool entry ${s.promptId}`);
    for (const [j, t] of specs.entries()) {
      if (j <= i || s.prefixGroup === null || t.prefixGroup !== s.prefixGroup) continue;
      assert.ok(commonPrefixWords(r.prompt, salted[j]?.prompt ?? '') >= 32, `requests ${i} and ${j} share group ${s.prefixGroup}'s prefix`);
    }
    assert.ok(commonPrefixWords(r.prompt, plain[i]?.prompt ?? '') < 8, `request ${i}: no word of its shared prefix is the unsalted run's`);
  }
});

test('warm-up requests have the measured requests\' lengths and none of their words', () => {
  const measured = syntheticRequests(workload(), 9, 's');
  const warm = warmupRequests(measured, 6, 9, 's');
  assert.deepEqual(warm.map((r) => [r.index, r.clientTokens, r.maxTokens]), measured.slice(0, 6).map((r, i) => [i, r.clientTokens, r.maxTokens]));
  for (const w of warm) {
    assert.equal(w.prompt.split(' ').length, w.clientTokens);
    for (const m of measured) assert.ok(commonPrefixWords(w.prompt, m.prompt) < 8, `warm-up ${w.index} shares no prefix with measured ${m.index}`);
  }
  // More warm-up than requests cycles the lengths, still in new words.
  const cycled = warmupRequests(measured.slice(0, 2), 4, 9, 's');
  assert.deepEqual(cycled.map((r) => r.clientTokens), [0, 1, 0, 1].map((i) => measured[i]?.clientTokens));
  assert.notEqual(cycled[2]?.prompt, cycled[0]?.prompt);
  assert.notEqual(warmupRequests(measured, 1, 9, 't')[0]?.prompt, warm[0]?.prompt, 'another salt, other warm-up words');
});

test('a ring of prompts repeats lengths and sharing each pass, never words', () => {
  const w = workload({ shared_prefix: { groups: 1, length: 24 } });
  const specs = sampleRequests(w, trafficStreams(4).requests);
  const at = promptRing(specs, 4, 'r');
  const first = syntheticRequests(w, 4, 'r');
  // Pass 0 is the salted request list itself.
  for (let k = 0; k < specs.length; k++) assert.deepEqual(at(k), first[k]);
  for (let k = 0; k < specs.length; k++) {
    const again = at(k + specs.length);
    const third = at(k + 2 * specs.length);
    assert.equal(again.index, k + specs.length);
    assert.equal(again.clientTokens, first[k]?.clientTokens);
    assert.equal(again.maxTokens, first[k]?.maxTokens);
    assert.ok(commonPrefixWords(again.prompt, first[k]?.prompt ?? '') < 8, `request ${k}: pass 1 is in new words`);
    assert.ok(commonPrefixWords(third.prompt, again.prompt) < 8, `request ${k}: pass 2 is in words of its own`);
  }
  // Within a pass the shared prefix is still shared.
  assert.ok(commonPrefixWords(at(specs.length).prompt, at(specs.length + 1).prompt) >= 24);
});

test('a salted conversation still extends each turn from the last, in words of its own', () => {
  const w = workload({ sessions: { turns: 3, concurrent: 4 }, num_prompts: 24 });
  const plain = syntheticRequests(w, 5);
  const salted = syntheticRequests(w, 5, 'chat-2');
  assert.deepEqual(shape(salted), shape(plain));
  for (const i of [4, 8, 16, 20]) {
    const prev = salted[i - 4]?.prompt ?? '';
    const cur = salted[i]?.prompt ?? '';
    assert.ok(cur.startsWith(prev) && cur.length > prev.length, `turn ${i} extends turn ${i - 4}`);
    assert.ok(commonPrefixWords(cur, plain[i]?.prompt ?? '') < 8, `turn ${i}: not the unsalted conversation's words`);
  }
});
