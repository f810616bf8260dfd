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
    const fail = (why: string): LmBenchError =>
      new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${flag}: stage ${i + 1} "${part}" is not RATE:SECONDS (e.g. 8:600,20:600)${why}`, { details: { field: flag } });
    const m = /^([^:]+):([^:]+)$/.exec(part);
    if (m === null) throw fail('');
    // Spaces around the colon are the user's layout, not part of a number ("8 : 600").
    const [rateText, secondsText] = [(m[1] ?? '').trim(), (m[2] ?? '').trim()];
    const rate = readDecimal(rateText);
    const seconds = readDecimal(secondsText);
    // Named here: undefined would reach the schema as a missing rate ("give the stage one rate").
    if (rate === undefined) throw fail(`: the rate "${rateText}" is not a decimal number of requests per second`);
    if (seconds === undefined) throw fail(`: the duration "${secondsText}" is not a decimal number of seconds`);
    const parsed = RateStage.safeParse({ rate_rps: rate, duration_s: seconds });
    if (!parsed.success) throw fail(`: ${formatZodIssues(parsed.error.issues)}`);
    return parsed.data;
  });
}
