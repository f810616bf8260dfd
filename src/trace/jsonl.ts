import { z } from 'zod';
import { recordError, traceError, type NumberedLine, type RawRequest, type TraceReader } from './request.js';

/**
 * JSON Lines traces: Mooncake's (kvcache-ai/Mooncake, FAST25-release/traces/*.jsonl: `timestamp` in
 * ms, `input_length`, `output_length`, `hash_ids`, blocks of 512 tokens per its README) and
 * lm-bench's plain form, `{timestamp_s, input_tokens, output_tokens}`. A line that is not one JSON
 * object (a truncated last line, say) is an error naming it.
 */
function jsonRecord(file: string, { line, text }: NumberedLine): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw traceError(file, line, null, 'not a JSON object (a truncated or garbled line)');
  }
}

function firstRecordKeys(first: string): Set<string> {
  try {
    const obj = JSON.parse(first) as unknown;
    return typeof obj === 'object' && obj !== null && !Array.isArray(obj) ? new Set(Object.keys(obj)) : new Set();
  } catch {
    return new Set();
  }
}

const count = z.int('expected a whole number of tokens').nonnegative('a token count cannot be negative');

/** Mooncake's block size: each hash id stands for 512 prompt tokens (FAST25-release/README.md). */
export const MOONCAKE_BLOCK_TOKENS = 512;

const MooncakeRecord = z.object({
  timestamp: z.number('expected a time in ms').nonnegative('a time cannot be negative'),
  input_length: count,
  output_length: count,
  hash_ids: z.array(z.int('expected an integer block id').nonnegative('a block id cannot be negative'), 'expected a list of block ids').optional(),
});

export const mooncakeReader: TraceReader = {
  format: 'mooncake',
  blockTokens: MOONCAKE_BLOCK_TOKENS,
  detect: (first) => {
    const keys = firstRecordKeys(first);
    return keys.has('input_length') && keys.has('output_length');
  },
  read: function* (lines, file): Generator<RawRequest> {
    for (const l of lines) {
      const res = MooncakeRecord.safeParse(jsonRecord(file, l));
      if (!res.success) throw recordError(file, l.line, res.error);
      const r = res.data;
      const ids = r.hash_ids ?? null;
      const blocks = Math.ceil(r.input_length / MOONCAKE_BLOCK_TOKENS);
      // More ids than the prompt has blocks would name content the prompt does not hold.
      if (ids !== null && ids.length > blocks) {
        throw traceError(file, l.line, 'hash_ids', `${ids.length} blocks of ${MOONCAKE_BLOCK_TOKENS} tokens, but input_length ${r.input_length} fills only ${blocks}`);
      }
      yield { line: l.line, timeMs: r.timestamp, inputTokens: r.input_length, outputTokens: r.output_length, hashIds: ids };
    }
  },
};

const PlainRecord = z.object({
  timestamp_s: z.number('expected a time in seconds').nonnegative('a time cannot be negative'),
  input_tokens: count,
  output_tokens: count,
});

export const plainJsonlReader: TraceReader = {
  format: 'jsonl',
  blockTokens: null,
  detect: (first) => {
    const keys = firstRecordKeys(first);
    return keys.has('timestamp_s') && keys.has('input_tokens');
  },
  read: function* (lines, file): Generator<RawRequest> {
    for (const l of lines) {
      const res = PlainRecord.safeParse(jsonRecord(file, l));
      if (!res.success) throw recordError(file, l.line, res.error);
      const r = res.data;
      yield { line: l.line, timeMs: r.timestamp_s * 1000, inputTokens: r.input_tokens, outputTokens: r.output_tokens, hashIds: null };
    }
  },
};
