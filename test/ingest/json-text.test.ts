import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeText, parseJsonDocuments, quoteNonFinite } from '../../src/ingest/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { garbage } from './helpers.js';

const enc = (s: string) => new TextEncoder().encode(s);
const code = (c: string) => (e: unknown) => isLmBenchError(e) && e.code === c;

describe('ingest JSON text', () => {
  it('quotes bare Infinity, -Infinity and NaN outside strings only', () => {
    const text = '{"a": Infinity, "b": -Infinity, "c": NaN, "s": "Infinity \\" NaN", "d": [1, NaN]}';
    assert.equal(quoteNonFinite(text), '{"a": "Infinity", "b": "-Infinity", "c": "NaN", "s": "Infinity \\" NaN", "d": [1, "NaN"]}');
    const { docs } = parseJsonDocuments(text);
    assert.deepEqual(docs[0]?.value, { a: 'Infinity', b: '-Infinity', c: 'NaN', s: 'Infinity " NaN', d: [1, 'NaN'] });
  });

  it('reads JSON Lines (vllm --append-result) as one document per line', () => {
    const { docs, jsonLines } = parseJsonDocuments('{"x": 1}\n\n{"x": Infinity}\n');
    assert.equal(jsonLines, true);
    assert.deepEqual(docs.map((d) => d.value), [{ x: 1 }, { x: 'Infinity' }]);
    assert.deepEqual(docs.map((d) => d.label), ['line 1', 'line 3']);
  });

  it('rejects truncated documents and truncated JSON Lines whole', () => {
    assert.throws(() => parseJsonDocuments('{"a": 1, "b": [1, 2'), code('LMB_ERR_INGEST_REJECTED'));
    assert.throws(() => parseJsonDocuments('{"a": 1}\n{"a": 2, "b'), (e: unknown) => code('LMB_ERR_INGEST_REJECTED')(e) && /line 2/.test((e as Error).message));
    assert.throws(() => parseJsonDocuments('{\n"a": 1,\n"b": \n'), code('LMB_ERR_INGEST_REJECTED'));
    assert.throws(() => parseJsonDocuments('   '), code('LMB_ERR_INGEST_REJECTED'));
    assert.throws(() => parseJsonDocuments('hello'), code('LMB_ERR_INGEST_UNKNOWN_FORMAT'));
  });

  it('refuses a key written twice in one object, naming it and both lines (JSON.parse kept the last: 300 stored for 3)', () => {
    const refused = (text: string, re: RegExp) =>
      assert.throws(() => parseJsonDocuments(text), (e: unknown) => code('LMB_ERR_INGEST_REJECTED')(e) && re.test((e as Error).message), text);
    refused('{\n  "completed": 3,\n  "x": {"completed": 1},\n  "completed": 300\n}', /^line 4: key "completed" appears twice in one object \(first on line 2\)/);
    // Escaped spellings of one key are one key; bare NaN does not hide it.
    refused('{"a": NaN, "\\u0061": 1}', /key "a" appears twice/);
    refused('{"ok": 1}\n{"n": 1, "m": [{"n": 2}], "n": Infinity}\n', /^line 2: key "n" appears twice in one object \(first on line 2\)/);
    // The same key in sibling or nested objects, in arrays, or inside a string is no duplicate.
    const { docs } = parseJsonDocuments('{"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}], "s": "\\"a\\": 5, \\"a\\""}');
    assert.deepEqual(docs[0]?.value, { a: 1, b: { a: 2 }, c: [{ a: 3 }, { a: 4 }], s: '"a": 5, "a"' });
  });

  it('refuses binary content and strips a UTF-8 byte-order mark', () => {
    assert.throws(() => decodeText(garbage(4096)), code('LMB_ERR_INGEST_UNKNOWN_FORMAT'));
    assert.throws(() => decodeText(new Uint8Array([0x7b, 0x00, 0x7d])), code('LMB_ERR_INGEST_UNKNOWN_FORMAT'));
    assert.equal(decodeText(new Uint8Array([0xef, 0xbb, 0xbf, ...enc('{}')])), '{}');
  });

  it('reads UTF-16 with a byte-order mark (Windows PowerShell\'s `>`), which was refused as binary for its NUL bytes', () => {
    const text = '{"completed": 3, "model_id": "Llama-3.1-8B-Instruct"}\r\n';
    const le = [0xff, 0xfe, ...[...text].flatMap((c) => [c.charCodeAt(0) & 0xff, c.charCodeAt(0) >> 8])];
    const be = [0xfe, 0xff, ...[...text].flatMap((c) => [c.charCodeAt(0) >> 8, c.charCodeAt(0) & 0xff])];
    assert.equal(decodeText(new Uint8Array(le)), text);
    assert.equal(decodeText(new Uint8Array(be)), text);
    // A byte-order mark does not make garbage text: an odd byte count is no UTF-16.
    assert.throws(() => decodeText(new Uint8Array([0xff, 0xfe, 0x7b])), code('LMB_ERR_INGEST_UNKNOWN_FORMAT'));
  });
});
