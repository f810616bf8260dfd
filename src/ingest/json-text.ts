import { LmBenchError } from '../errors.js';

/**
 * Bytes → JSON documents, tolerant of what benchmark tools really write: Python's `json.dump` emits
 * bare `Infinity`, `-Infinity` and `NaN` tokens that JSON.parse rejects, and `vllm bench serve
 * --append-result` turns a file into JSON Lines. Pure: no I/O.
 */

/** Non-finite tokens are turned into these strings; numeric schemas map them back (see raw.ts). */
export const NON_FINITE_STRINGS = ['Infinity', '-Infinity', 'NaN', 'inf', '-inf', 'nan'] as const;

export interface JsonDocuments {
  /** One entry per document: a whole-file JSON value, or one per non-empty JSON Lines line. */
  readonly docs: { readonly value: unknown; readonly label: string }[];
  readonly jsonLines: boolean;
}

/** Decodes UTF-8 text, refusing binary content (LMB_ERR_INGEST_UNKNOWN_FORMAT). */
export function decodeText(bytes: Uint8Array): string {
  // UTF-16 with its byte-order mark is what Windows PowerShell's `>` and Out-File write: text, not
  // binary, though every other byte is NUL. Read it as the text it is.
  const utf16 = bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : bytes[0] === 0xfe && bytes[1] === 0xff ? 'utf-16be' : null;
  if (utf16 !== null) {
    try {
      return new TextDecoder(utf16, { fatal: true }).decode(bytes.subarray(2));
    } catch (err) {
      throw unknownFormat(`binary content (a ${utf16.toUpperCase()} byte-order mark, but not valid ${utf16.toUpperCase()} text)`, err);
    }
  }
  const head = bytes.subarray(0, Math.min(bytes.length, 8192));
  if (head.includes(0)) throw unknownFormat('binary content (NUL bytes), not a JSON text file');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw unknownFormat('binary content (not valid UTF-8), not a JSON text file', err);
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export function parseJsonDocuments(text: string): JsonDocuments {
  const trimmed = text.trim();
  if (trimmed === '') throw rejected('the file is empty');
  if (trimmed[0] !== '{' && trimmed[0] !== '[') throw unknownFormat('not JSON (does not start with { or [)');
  const whole = tryParse(trimmed);
  if (whole.ok) {
    refuseDuplicateKey(text, 0);
    return { docs: [{ value: whole.value, label: 'document' }], jsonLines: false };
  }

  // JSON Lines: every non-empty line one document. A file whose lines do not all parse is rejected
  // whole (an interrupted append leaves a truncated last line; storing the rest would hide that).
  const lines = trimmed.split(/\r?\n/);
  if (lines.length > 1) {
    const docs: { value: unknown; label: string }[] = [];
    for (const [i, line] of lines.entries()) {
      if (line.trim() === '') continue;
      const one = tryParse(line);
      if (!one.ok) {
        if (docs.length === 0 && i === 0) break; // a pretty-printed document, broken somewhere
        throw rejected(`invalid JSON on line ${i + 1}: ${one.message}`);
      }
      refuseDuplicateKey(line, i);
      docs.push({ value: one.value, label: `line ${i + 1}` });
    }
    if (docs.length > 1) return { docs, jsonLines: true };
  }
  throw rejected(`invalid JSON: ${whole.message}`);
}

/**
 * JSON.parse keeps the last of two equal keys in one object without a word, so `"completed": 3, …,
 * "completed": 300` would store 300 where the tool may have meant 3 (a hand-merged or hand-edited
 * file). YAML results are refused for it (parse-file.ts, uniqueKeys); so is JSON, naming the key and
 * its line. `firstLine` is the 0-based line of the text in its file.
 */
function refuseDuplicateKey(text: string, firstLine: number): void {
  const dup = duplicateKey(text);
  if (dup === null) return;
  const line = (offset: number): number => firstLine + 1 + (text.slice(0, offset).match(/\n/g)?.length ?? 0);
  throw rejected(`line ${line(dup.offset)}: key "${dup.key}" appears twice in one object (first on line ${line(dup.firstOffset)}); JSON keeps only the last, so which value the tool wrote is unknown`);
}

/**
 * The first key that appears twice in one object of a JSON text (also with bare NaN/Infinity tokens),
 * with the offsets of both, or null. One pass over the text, tracking strings, escapes and nesting.
 */
export function duplicateKey(text: string): { key: string; offset: number; firstOffset: number } | null {
  // One entry per open container: an object's keys with their offsets, or null for an array.
  const stack: (Map<string, number> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let j = i + 1;
      let escaped = false;
      for (; j < text.length; j++) {
        const d = text.charCodeAt(j);
        if (d === 0x5c) {
          j++;
          escaped = true;
        } else if (d === 0x22) break;
      }
      const keys = stack.at(-1);
      if (expectKey && keys) {
        const raw = text.slice(i, j + 1);
        // An escaped key is compared as JSON.parse reads it ("\u0061" is "a").
        const key = escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        const first = keys.get(key);
        if (first !== undefined) return { key, offset: i, firstOffset: first };
        keys.set(key, i);
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b) {
      stack.push(new Map());
      expectKey = true;
    } else if (c === 0x5b) {
      stack.push(null);
      expectKey = false;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c) {
      expectKey = (stack.at(-1) ?? null) !== null;
    }
  }
  return null;
}

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

function tryParse(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    if (/-?Infinity|NaN/.test(text)) {
      try {
        return { ok: true, value: JSON.parse(quoteNonFinite(text)) };
      } catch {
        // fall through to the original error, which points at the real problem
      }
    }
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Quotes bare `Infinity`, `-Infinity` and `NaN` outside strings, so JSON.parse accepts them as
 * strings. Walks the text once, tracking string literals and escapes.
 */
export function quoteNonFinite(text: string): string {
  const out: string[] = [];
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped char
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    let token: string | null = null;
    if (c === 0x49 && text.startsWith('Infinity', i)) token = 'Infinity';
    else if (c === 0x4e && text.startsWith('NaN', i)) token = 'NaN';
    else if (c === 0x2d && text.startsWith('-Infinity', i)) token = '-Infinity';
    if (token !== null) {
      out.push(text.slice(last, i), `"${token}"`);
      i += token.length - 1;
      last = i + 1;
    }
  }
  out.push(text.slice(last));
  return out.join('');
}

export function rejected(reason: string, cause?: unknown): LmBenchError {
  return new LmBenchError('LMB_ERR_INGEST_REJECTED', reason, cause === undefined ? {} : { cause });
}

export function unknownFormat(reason: string, cause?: unknown): LmBenchError {
  return new LmBenchError('LMB_ERR_INGEST_UNKNOWN_FORMAT', reason, cause === undefined ? {} : { cause });
}
