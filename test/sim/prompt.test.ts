import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readPrompt, readPrompts, type ReadPrompt } from '../../src/sim/prompt.js';

const words = (n: number, tag = 'w'): string => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');

function read(body: Record<string, unknown>, chat = false, blockSize = 16): ReadPrompt {
  const r = readPrompt(body, chat, blockSize);
  if (typeof r === 'string') assert.fail(r);
  return r;
}

test('one id per full block, the same for the same text, and the count the tokenizer gives', () => {
  const a = read({ prompt: words(50) });
  assert.equal(a.tokens, 50);
  assert.equal(a.blocks.tokens, 16);
  assert.equal(a.blocks.ids.length, 3);
  assert.deepEqual(read({ prompt: `  ${words(50).replaceAll(' ', '\n ')} ` }).blocks.ids, a.blocks.ids, 'whitespace does not change the words');
  assert.equal(new Set(a.blocks.ids).size, 3);
  for (const id of a.blocks.ids) assert.ok(Number.isSafeInteger(id) && id >= 0 && id < 2 ** 46);
});

test('a prompt extended keeps its blocks; a word changed changes that block and every later one', () => {
  const base = read({ prompt: words(48) }).blocks.ids;
  assert.deepEqual(read({ prompt: `${words(48)} more words here` }).blocks.ids.slice(0, 3), base);
  const changed = words(48).split(' ');
  changed[20] = 'other';
  const ids = read({ prompt: changed.join(' ') }).blocks.ids;
  assert.equal(ids[0], base[0]);
  assert.notEqual(ids[1], base[1]);
  assert.notEqual(ids[2], base[2], 'a block is keyed by everything before it, as vLLM chains block hashes');
  assert.notDeepEqual(read({ prompt: `ab c ${words(30)}` }).blocks.ids[0], read({ prompt: `a bc ${words(30)}` }).blocks.ids[0]);
});

test('chat reads every message content in order; token-id prompts key by the ids', () => {
  const chat = read({ messages: [{ role: 'system', content: words(10, 's') }, { role: 'user', content: [{ type: 'text', text: words(22, 'u') }] }] }, true);
  assert.equal(chat.tokens, 32);
  assert.deepEqual(chat.blocks.ids, read({ prompt: `${words(10, 's')} ${words(22, 'u')}` }).blocks.ids);
  const ids = Array.from({ length: 40 }, (_, i) => i + 100);
  const t = read({ prompt: ids });
  assert.equal(t.tokens, 40);
  assert.equal(t.blocks.ids.length, 2);
  assert.deepEqual(read({ prompt: [ids] }).blocks.ids, t.blocks.ids);
  assert.equal(read({ prompt: ids }, false, 8).blocks.ids.length, 5);
});

test('bodies the server cannot read get the 400 message', () => {
  const message = (r: ReadPrompt | string): string => (typeof r === 'string' ? r : 'read');
  assert.match(message(readPrompt({ messages: [] }, true, 16)), /messages/);
  assert.match(message(readPrompt({ prompt: 7 }, false, 16)), /prompt/);
  assert.match(message(readPrompt({ prompt: [{}] }, false, 16)), /prompt/);
});

test('a batch of prompts reads as one prompt each; token ids must be whole numbers ≥ 0', () => {
  const batch = readPrompts({ prompt: [words(20), words(3)] }, false, 16);
  assert.ok(Array.isArray(batch));
  assert.deepEqual(
    batch.map((p) => p.tokens),
    [20, 3],
  );
  const ids = readPrompts({ prompt: [[1, 2, 3], [4]] }, false, 16);
  assert.ok(Array.isArray(ids));
  assert.deepEqual(
    ids.map((p) => p.tokens),
    [3, 1],
  );
  assert.equal(typeof readPrompts({ prompt: [1, -2] }, false, 16), 'string');
  assert.equal(typeof readPrompts({ prompt: [[1], []] }, false, 16), 'string');
});
