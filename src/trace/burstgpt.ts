import { z } from 'zod';
import { countCell, csvRecords, hasColumns, secondsCell } from './csv.js';
import type { TraceReader } from './request.js';

/**
 * BurstGPT (HPMLL/BurstGPT, data/BurstGPT_*.csv): `Timestamp,Model,Request tokens,Response tokens,
 * Total tokens,Log Type`, the time in seconds from midnight of the trace's first day. The v2 files
 * insert `Session ID,Elapsed time` after the time, so columns are read by name, never by position.
 * Rows with 0 request and response tokens are the trace's failed requests (BurstGPT_without_fails
 * drops them); the parser leaves them out and counts them.
 */
const COLUMNS = ['Timestamp', 'Request tokens', 'Response tokens'] as const;

const Row = z.object({ Timestamp: secondsCell, 'Request tokens': countCell, 'Response tokens': countCell });

export const burstGptReader: TraceReader = {
  format: 'burstgpt',
  blockTokens: null,
  detect: (first) => hasColumns(first, COLUMNS),
  read: function* (lines, file) {
    for (const { line, value } of csvRecords(lines, file, COLUMNS, Row)) {
      yield {
        line,
        timeMs: value.Timestamp * 1000,
        inputTokens: value['Request tokens'],
        outputTokens: value['Response tokens'],
        hashIds: null,
      };
    }
  },
};
