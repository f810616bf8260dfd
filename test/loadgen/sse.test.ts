import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { createSseParser } from '../../src/loadgen/sse.js';

// A recorded stream with every framing case: a comment, CRLF and lone-CR line ends, multi-byte UTF-8
// (2-, 3- and 4-byte characters), `event:`/`id:` fields, an event split over two data lines, `data:`
// without its space, a usage chunk and [DONE].
const bytes = new Uint8Array(readFileSync(new URL('../fixtures/loadgen/stream-completions.sse', import.meta.url)));

function parse(parts: Uint8Array[]): string[] {
  const out: string[] = [];
  const p = createSseParser((d) => out.push(d));
  for (const part of parts) p.push(part);
  p.end();
  return out;
}

const expected = parse([bytes]);

test('the recorded stream parses into its six events', () => {
  assert.equal(expected.length, 6);
  assert.equal(expected[5], '[DONE]');
  const texts = expected.slice(0, 4).map((d) => (JSON.parse(d) as { choices: { text: string }[] }).choices[0]?.text);
  assert.deepEqual(texts, [' Grüße', ' 日本語 🚀', ' multi', '']);
  assert.equal((JSON.parse(expected[4] as string) as { usage: { completion_tokens: number } }).usage.completion_tokens, 3);
});

test('every split into two parts gives the same events', () => {
  for (let i = 0; i <= bytes.length; i++) {
    assert.deepEqual(parse([bytes.subarray(0, i), bytes.subarray(i)]), expected, `split at byte ${i}`);
  }
});

test('every split into three parts gives the same events', () => {
  // All (i, j) pairs: ~ n²/2 parses of a 500-byte stream, well under a second.
  for (let i = 0; i <= bytes.length; i += 1) {
    for (let j = i; j <= bytes.length; j += 7) {
      assert.deepEqual(parse([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]), expected, `split at ${i}, ${j}`);
    }
  }
});

test('byte by byte gives the same events', () => {
  const parts = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
  assert.deepEqual(parse(parts), expected);
});

test('a final event without its blank line is flushed at the end', () => {
  assert.deepEqual(parse([new TextEncoder().encode('data: a\n\ndata: b')]), ['a', 'b']);
});

test("a byte-order mark before the first event is dropped, whole or split, so the first token's event is kept", () => {
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);
  const body = Buffer.from('data: {"n":1}\n\ndata: [DONE]\n\n');
  assert.deepEqual(parse([Buffer.concat([bom, body])]), ['{"n":1}', '[DONE]']);
  assert.deepEqual(parse([bom.subarray(0, 2), Buffer.concat([bom.subarray(2), body])]), ['{"n":1}', '[DONE]']);
  // Only at the stream's start: a mark later is text of its line.
  assert.deepEqual(parse([body, Buffer.concat([bom, Buffer.from('data: x\n\n')])]), ['{"n":1}', '[DONE]']);
});
