import { TARGET_NAMES, type Slo, type SloStat } from '../domain/index.js';
import { assertNever } from '../errors.js';
import { sloConstraints } from '../optimize/objectives.js';

/**
 * Where an answer judges an SLO limit on another statistic than the one it names (objectives.ts
 * `sloConstraints`): the surrogate and the simulator's error model know each latency at p50 and p99 only
 * (e2el at p99), so a p90 or p95 limit is read against the p99 figure and a mean against the median. The
 * answer says so in one line per limit, or a user reads the pick's P(meets the SLOs) as being about the
 * p90 they asked for. Pure; empty when every limit is judged on its own statistic.
 */

/** What reading `asked` on `judged` does to the verdict, in words. */
function direction(asked: SloStat, judged: string): string {
  switch (asked) {
    case 'p90':
    case 'p95':
      return judged === 'p99' ? 'stricter than the limit asks' : 'not the statistic the limit names';
    case 'mean':
      // Latencies have long right tails: the mean sits above the median, so the median passes a mean limit more easily.
      return judged === 'p50' ? 'looser than the limit asks: a latency’s mean is usually above its median, so a measured run may miss it' : 'stricter than the limit asks';
    case 'p50':
      return judged === 'p99' ? 'stricter than the limit asks' : 'not the statistic the limit names';
    case 'p99':
      return 'not the statistic the limit names';
    default:
      return assertNever(asked, 'SLO statistic');
  }
}

/**
 * One line per SLO limit judged on a stand-in statistic. `by` says whose figure is read: the trained
 * model's predictions, or the simulator's figures under its measured error (the simulated run's own
 * statistic is checked as well; the probability and the near misses read the stand-in).
 */
export function judgedOnLines(slo: Slo, by: 'predicted' | 'simulated'): string[] {
  return sloConstraints(slo).flatMap((c) => {
    const [metric, asked] = c.key.split('_') as [string, SloStat];
    const judged = c.target.split('_')[1] ?? '';
    if (judged === asked) return [];
    const known = TARGET_NAMES.filter((t) => t.startsWith(`${metric}_`) && t.endsWith('_ms')).map((t) => t.split('_')[1]);
    const figures = known.length === 1 ? known[0] : `${known.slice(0, -1).join(', ')} and ${known.at(-1) ?? ''}`;
    const who =
      by === 'predicted'
        ? `judged on the predicted ${judged} (${c.target}): the model predicts ${metric.toUpperCase()} at ${figures} only`
        : `judged on the simulated ${judged} (${c.target}) in P(meets the SLOs) and the near misses: the simulator's error is known for ${metric.toUpperCase()} at ${figures} only (the simulated run's own ${asked} is checked too)`;
    return [`${c.key} ${who}; ${direction(asked, judged)}`];
  });
}
