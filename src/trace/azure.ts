import { z } from 'zod';
import { countCell, csvRecords, hasColumns } from './csv.js';
import type { TraceReader } from './request.js';

/**
 * Azure LLM inference traces (Azure/AzurePublicDataset, AzureLLMInferenceTrace_{code,conv}.csv, 2023
 * and 2024): `TIMESTAMP,ContextTokens,GeneratedTokens`, the time a datetime string with up to seven
 * fractional digits ("2023-11-16 18:17:03.9799600") and, in the 2024 files, a UTC offset.
 */
const COLUMNS = ['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'] as const;
// The offset as ISO 8601 writes it, ±hh:mm, ±hhmm or ±hh (PostgreSQL's timestamptz prints "+00").
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Epoch ms of an Azure timestamp, or NaN. Without an offset the time is read as UTC (only differences matter). */
export function azureTimeMs(text: string): number {
  const m = DATETIME.exec(text.trim());
  if (m === null) return Number.NaN;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const base = Date.UTC(y, mo - 1, d, h, mi, s);
  // The whole date must survive the round trip: 2023-02-30 is refused, not moved to March.
  const back = new Date(base);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return Number.NaN;
  const frac = m[7] === undefined ? 0 : Number(`0.${m[7]}`) * 1000;
  const tz = m[8];
  let offsetMs = 0;
  if (tz !== undefined && tz !== 'Z') {
    const sign = tz.startsWith('-') ? -1 : 1;
    const digits = tz.slice(1).replace(':', '').padEnd(4, '0');
    const [oh, om] = [Number(digits.slice(0, 2)), Number(digits.slice(2))];
    if (oh > 23 || om > 59) return Number.NaN;
    offsetMs = sign * (oh * 60 + om) * 60_000;
  }
  return base + frac - offsetMs;
}

const Row = z.object({
  TIMESTAMP: z.string().transform((s, ctx) => {
    const ms = azureTimeMs(s);
    if (Number.isNaN(ms)) ctx.addIssue({ code: 'custom', message: `"${s.slice(0, 40)}" is not a date and time like 2023-11-16 18:17:03.9799600` });
    return ms;
  }),
  ContextTokens: countCell,
  GeneratedTokens: countCell,
});

export const azureReader: TraceReader = {
  format: 'azure',
  blockTokens: null,
  detect: (first) => hasColumns(first, COLUMNS),
  read: function* (lines, file) {
    for (const { line, value } of csvRecords(lines, file, COLUMNS, Row)) {
      yield {
        line,
        timeMs: value.TIMESTAMP,
        inputTokens: value.ContextTokens,
        outputTokens: value.GeneratedTokens,
        hashIds: null,
      };
    }
  },
};
