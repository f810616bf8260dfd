import { RateStage, readDecimal } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';

/**
 * `--rate-stages 8:600,20:600` → rate stages (8 req/s for 600 s, then 20 req/s for 600 s): the
 * command-line form of a Poisson arrival's `stages`, for `run` and `sim run` alike.
 */
export function parseRateStagesFlag(text: string, flag = 'rate-stages'): RateStage[] {
  const parts = text.split(',').map((p) => p.trim());
  return parts.map((part, i) => {
    const m = /^([^:]+):([^:]+)$/.exec(part);
    const parsed = m === null ? null : RateStage.safeParse({ rate_rps: readDecimal(m[1] ?? ''), duration_s: readDecimal(m[2] ?? '') });
    if (parsed === null || !parsed.success) {
      const why = parsed?.success === false ? `: ${formatZodIssues(parsed.error.issues)}` : '';
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${flag}: stage ${i + 1} "${part}" is not RATE:SECONDS (e.g. 8:600,20:600)${why}`, { details: { field: flag } });
    }
    return parsed.data;
  });
}
