import { z } from 'zod';
import { countCell, csvRecords, hasColumns, secondsCell } from './csv.js';
import type { TraceReader } from './request.js';

/**
 * Splitwise's traces as Vidur ships them (microsoft/vidur, data/processed_traces/splitwise_{conv,code}.csv):
 * `arrived_at,num_prefill_tokens,num_decode_tokens`, the time in seconds from the first request. They
 * are Azure's 2023 traces re-timed, so the same requests read from either file agree.
 */
const COLUMNS = ['arrived_at', 'num_prefill_tokens', 'num_decode_tokens'] as const;

const Row = z.object({ arrived_at: secondsCell, num_prefill_tokens: countCell, num_decode_tokens: countCell });

export const splitwiseReader: TraceReader = {
  format: 'splitwise',
  blockTokens: null,
  detect: (first) => hasColumns(first, COLUMNS),
  read: function* (lines, file) {
    for (const { line, value } of csvRecords(lines, file, COLUMNS, Row)) {
      yield {
        line,
        timeMs: value.arrived_at * 1000,
        inputTokens: value.num_prefill_tokens,
        outputTokens: value.num_decode_tokens,
        hashIds: null,
      };
    }
  },
};
