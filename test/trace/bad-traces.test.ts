import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LmBenchError } from '../../src/errors.js';
import { parseTrace, readTraceFile } from '../../src/trace/index.js';

/**
 * Bad traces are refused with LMB_ERR_TRACE_INVALID naming the file, the line and (where there is
 * one) the field. Each bad file is a real fixture cut or edited: truncated mid-line, a type confused,
 * a negative count, rows shuffled far out of order, nothing at all.
 */
const dir = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));
const lines = (name: string): string[] => readFileSync(`${dir}${name}`, 'utf8').split('\n');

function rejects(text: string, file: string, line: number | null, field: RegExp | null, why: RegExp): void {
  assert.throws(
    () => parseTrace(Buffer.from(text), file),
    (err: unknown) => {
      assert.ok(err instanceof LmBenchError, String(err));
      assert.equal(err.code, 'LMB_ERR_TRACE_INVALID');
      assert.equal(err.details['file'], file);
      assert.equal(err.details['line'], line);
      if (field !== null) assert.match(String(err.details['field']), field);
      assert.ok(err.message.startsWith(line === null ? `${file}: ` : `${file}:${line}: `), err.message);
      assert.match(err.message, why);
      return true;
    },
  );
}

/** The first n lines of a fixture and the first half of line n + 1: a file cut off while written. */
function truncated(name: string, n: number): string {
  const l = lines(name);
  const next = l[n] as string;
  return `${l.slice(0, n).join('\n')}\n${next.slice(0, Math.floor(next.length / 2))}`;
}

test('truncated files: the cut line is named', () => {
  rejects(truncated('azure-code-2023-head300.csv', 6), 'az.csv', 7, null, /fields where the header has 3|date and time/);
  rejects(truncated('burstgpt-1-head400.csv', 6), 'bg.csv', 7, null, /fields where the header has 6/);
  rejects(truncated('splitwise-conv-head300.csv', 6), 'sw.csv', 7, null, /fields where the header has 3/);
  rejects(truncated('mooncake-conversation-head300.jsonl', 5), 'mc.jsonl', 6, null, /not a JSON object/);
  rejects(truncated('plain-splitwise-conv-head50.jsonl', 5), 'pl.jsonl', 6, null, /not a JSON object/);
});

test('type-confused fields: the line and the column are named', () => {
  const az = lines('azure-code-2023-head300.csv');
  az[3] = az[3]?.replace(/,(\d+),/, ',lots,') ?? '';
  rejects(az.join('\n'), 'az.csv', 4, /ContextTokens/, /whole number of tokens/);
  const azTime = lines('azure-code-2023-head300.csv');
  azTime[2] = `1700000000,${azTime[2]?.split(',').slice(1).join(',') ?? ''}`;
  rejects(azTime.join('\n'), 'az.csv', 3, /TIMESTAMP/, /not a date and time/);
  const bg = lines('burstgpt-1-head400.csv');
  bg[4] = bg[4]?.replace(/^\d+,/, 'noon,') ?? '';
  rejects(bg.join('\n'), 'bg.csv', 5, /Timestamp/, /number of seconds/);
  const sw = lines('splitwise-conv-head300.csv');
  sw[2] = sw[2]?.replace(/,(\d+)$/, ',12.5') ?? '';
  rejects(sw.join('\n'), 'sw.csv', 3, /num_decode_tokens/, /whole number/);
  const mc = lines('mooncake-conversation-head300.jsonl');
  mc[1] = mc[1]?.replace('"input_length": 7322', '"input_length": "7322"') ?? '';
  rejects(mc.join('\n'), 'mc.jsonl', 2, /input_length/, /whole number of tokens/);
  const mcIds = lines('mooncake-conversation-head300.jsonl');
  mcIds[2] = mcIds[2]?.replace('"hash_ids": [0, 28,', '"hash_ids": ["0", 28,') ?? '';
  rejects(mcIds.join('\n'), 'mc.jsonl', 3, /hash_ids\.0/, /integer block id/);
  const pl = lines('plain-splitwise-conv-head50.jsonl');
  pl[0] = '{"timestamp_s": "0", "input_tokens": 374, "output_tokens": 44}';
  rejects(pl.join('\n'), 'pl.jsonl', 1, /timestamp_s/, /seconds/);
});

test('negative counts and times are refused, not skipped', () => {
  const bg = lines('burstgpt-1-head400.csv');
  bg[2] = '45,ChatGPT,-1087,230,1317,Conversation log';
  rejects(bg.join('\n'), 'bg.csv', 3, /Request tokens/, /cannot be negative/);
  const mc = lines('mooncake-conversation-head300.jsonl');
  mc[0] = mc[0]?.replace('"output_length": 500', '"output_length": -500') ?? '';
  rejects(mc.join('\n'), 'mc.jsonl', 1, /output_length/, /cannot be negative/);
  const sw = lines('splitwise-conv-head300.csv');
  sw[1] = '-4.5,374,44';
  rejects(sw.join('\n'), 'sw.csv', 2, /arrived_at/, /cannot be negative/);
});

test('rows far out of time order (shuffled, or another column read as the time) are refused', () => {
  const sw = lines('splitwise-conv-head300.csv');
  [sw[5], sw[20]] = [sw[20] as string, sw[5] as string];
  // Line 6 now holds row 20's time; line 7 is the first to go back more than a second.
  rejects(sw.join('\n'), 'sw.csv', 7, /time/, /not in time order/);
});

test('more hash ids than the prompt has 512-token blocks is refused', () => {
  const mc = lines('mooncake-conversation-head300.jsonl');
  mc[3] = '{"timestamp": 0, "input_length": 600, "output_length": 3, "hash_ids": [0, 42, 43]}';
  rejects(mc.join('\n'), 'mc.jsonl', 4, /hash_ids/, /fills only 2/);
});

test('empty traces: no bytes, a header alone, only failed rows', () => {
  rejects('', 'empty.csv', null, null, /empty/);
  rejects('\n\n', 'blank.jsonl', null, null, /empty/);
  rejects('TIMESTAMP,ContextTokens,GeneratedTokens\n', 'head.csv', null, null, /no requests/);
  rejects('Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1106,ChatGPT,0,0,0,Conversation log\n', 'zero.csv', null, null, /all 1 rows have 0/);
});

test('an unknown format names what it expected', () => {
  rejects('time,prompt,completion\n1,2,3\n', 'other.csv', 1, null, /Azure \(TIMESTAMP/);
  rejects('{"ts": 1, "in": 2}\n', 'other.jsonl', 1, null, /Mooncake/);
});

test('a missing file is LMB_ERR_FILE_NOT_FOUND, not a trace error', () => {
  assert.throws(() => readTraceFile(`${dir}no-such.csv`, 'no-such.csv'), (e: unknown) => e instanceof LmBenchError && e.code === 'LMB_ERR_FILE_NOT_FOUND' && /no-such\.csv/.test(e.message));
});
