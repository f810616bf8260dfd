import type { RequestRecord } from '../domain/index.js';
import { isSuccess } from '../domain/index.js';

/**
 * Whether the server generated the output the workload asked for. With `ignore_eos` every answer is
 * exactly its `max_tokens` on vLLM and SGLang; a server that does not honour `ignore_eos` stops at the
 * model's end of sequence, and one that caps or ignores `max_tokens` stops elsewhere. Its run then
 * measures other output lengths than the workload's (fewer decode steps, a different batch mix), so its
 * throughput, TPOT and goodput do not compare with a run that generated them, and nothing in the
 * figures says so. A request counts as short when its usage says fewer tokens than asked, or, without
 * usage (chunks may carry several tokens), when it finished for a reason other than `length`; long
 * when its usage says more.
 */
export interface OutputLengths {
  /** Successful measured requests checked. */
  readonly requests: number;
  readonly short: number;
  readonly long: number;
  /** max_tokens of the mismatched requests, summed, and what they generated. */
  readonly asked_tokens: number;
  readonly output_tokens: number;
  /** finish_reason of the mismatched requests ("none" where the stream gave none). */
  readonly finish_reasons: Readonly<Record<string, number>>;
}

/**
 * Null when the run did not ask for exact lengths (`ignore_eos` off) or every answer had its length.
 * `askedOf`: the max_tokens a measured request was sent with (undefined: not one to check).
 */
export function outputLengths(records: readonly RequestRecord[], askedOf: (r: RequestRecord) => number | undefined, ignoreEos: boolean): OutputLengths | null {
  if (!ignoreEos) return null;
  let checked = 0;
  let short = 0;
  let long = 0;
  let askedTokens = 0;
  let outputTokens = 0;
  const reasons: Record<string, number> = {};
  for (const r of records) {
    if (r.phase !== 'measure' || !isSuccess(r)) continue;
    const max = askedOf(r);
    if (max === undefined) continue;
    checked++;
    const fromUsage = r.token_source === 'usage';
    const isShort = fromUsage ? r.output_tokens < max : r.finish_reason !== null && r.finish_reason !== 'length';
    const isLong = fromUsage && r.output_tokens > max;
    if (!isShort && !isLong) continue;
    if (isShort) short++;
    else long++;
    askedTokens += max;
    outputTokens += r.output_tokens;
    const why = r.finish_reason ?? 'none';
    reasons[why] = (reasons[why] ?? 0) + 1;
  }
  if (short + long === 0) return null;
  return { requests: checked, short, long, asked_tokens: askedTokens, output_tokens: outputTokens, finish_reasons: reasons };
}

/** The warning `run` prints: how many answers missed their length, and what that does to the figures. */
export function outputLengthsWarning(o: OutputLengths): string {
  const reasons = Object.entries(o.finish_reasons).map(([k, n]) => `${k} ×${n}`).join(', ');
  const what = [...(o.short > 0 ? [`${o.short} ended before their max_tokens`] : []), ...(o.long > 0 ? [`${o.long} ran past it`] : [])].join(' and ');
  return (
    `of ${o.requests} completed requests, ${what} (${o.output_tokens} tokens generated where ${o.asked_tokens} were asked; finish_reason ${reasons}) although ignore_eos was sent: ` +
    "the server does not honour ignore_eos or max_tokens, so the output lengths are not the workload's and the throughput and TPOT do not compare with runs that generated them"
  );
}
