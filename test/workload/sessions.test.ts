import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Workload, maxRequestTokens } from '../../src/domain/index.js';
import { sampleRequests, withPoolBlocks } from '../../src/workload/sample.js';
import { syntheticRequests } from '../../src/loadgen/prompts.js';
import { createRng } from '../../src/util/rng.js';

const conv = (extra: Record<string, unknown> = {}): Workload =>
  Workload.parse({
    name: 'c',
    input_len: { dist: 'uniform', min: 20, max: 60 },
    output_len: { dist: 'uniform', min: 10, max: 30 },
    arrival: { kind: 'poisson', rate_rps: 4 },
    num_prompts: 24,
    sessions: { turns: 3, concurrent: 4 },
    ...extra,
  });

test('sessions: conversations take turns in rotation, each turn the whole history plus a new message', () => {
  const specs = sampleRequests(conv(), createRng(5));
  // Waves of 4 conversations × 3 turns: requests 0–3 open conversations 0–3, 4–7 are their 2nd turns, …, 12–15 open 4–7.
  assert.deepEqual(specs.map((s) => s.promptId), [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7]);
  for (let i = 4; i < 24; i++) {
    if (i % 12 < 4) continue;
    const prev = specs[i - 4];
    const s = specs[i];
    assert.ok(prev !== undefined && s !== undefined);
    const message = s.inputTokens - (prev.inputTokens + prev.outputTokens);
    assert.ok(message >= 20 && message <= 60, `turn ${i}: the history (${prev.inputTokens} + ${prev.outputTokens}) then a new message (${message})`);
  }
  assert.ok(specs.slice(0, 4).every((s) => s.inputTokens <= 60), 'first turns carry no history');
  assert.equal(maxRequestTokens(conv()), 3 * (60 + 30), 'the longest request is a last turn');
});

test('sessions: the load runner sends each turn as the previous turn\'s text extended; conversations differ', () => {
  const prompts = syntheticRequests(conv({ shared_prefix: { groups: 1, length: 8 } }), 3);
  for (const i of [4, 8, 16, 20]) {
    const prev = prompts[i - 4]?.prompt ?? '';
    const cur = prompts[i]?.prompt ?? '';
    assert.ok(cur.startsWith(prev) && cur.length > prev.length, `turn ${i} extends turn ${i - 4}`);
  }
  assert.notEqual(prompts[1]?.prompt, prompts[0]?.prompt);
  assert.ok(!(prompts[12]?.prompt ?? '').startsWith(prompts[0]?.prompt ?? ''), 'a new conversation starts afresh');
});

test('sessions: a turn\'s cache blocks begin with the previous turn\'s', () => {
  const specs = withPoolBlocks(sampleRequests(conv(), createRng(5)), 16);
  const a = specs[0]?.blocks?.ids ?? [];
  const b = specs[4]?.blocks?.ids ?? [];
  assert.ok(b.length > a.length);
  assert.deepEqual(b.slice(0, a.length), a);
  assert.notDeepEqual(specs[1]?.blocks?.ids.slice(0, 1), a.slice(0, 1));
});

test('sessions do not go with a prompt pool', () => {
  const r = Workload.safeParse({ ...conv(), prompt_pool: { size: 2 } });
  assert.equal(r.success, false);
  assert.deepEqual(r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`), ['sessions: give either sessions or prompt_pool: a conversation never re-sends a prompt']);
});
