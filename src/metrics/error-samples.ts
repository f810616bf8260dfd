import type { ErrorSample, RequestRecord } from '../domain/index.js';

/**
 * The distinct errors of a run, for the failure classifier: requests grouped by status and message
 * with the numbers masked (vLLM's "prompt too long" bodies differ only in their lengths), at most
 * `limit` groups, most frequent first. Each group keeps the message with the largest numbers in it
 * (the longest request refused), which is the one a prompt-length rule needs.
 */
export function errorSamples(records: readonly RequestRecord[], limit = 5): ErrorSample[] {
  const groups = new Map<string, { status: number | null; message: string; count: number; weight: number }>();
  for (const r of records) {
    if (r.error === null && r.error_kind === null) continue;
    const message = (r.error ?? r.error_kind ?? '').slice(0, 500);
    const key = `${r.http_status ?? ''}|${message.replace(/\d+(?:\.\d+)?/g, '#')}`;
    const weight = [...message.matchAll(/\d+(?:\.\d+)?/g)].reduce((s, m) => s + Number(m[0]), 0);
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { status: r.http_status, message, count: 1, weight });
    else {
      g.count++;
      if (weight > g.weight) {
        g.message = message;
        g.weight = weight;
      }
    }
  }
  return [...groups.values()]
    .sort((a, b) => b.count - a.count)
    .slice(0, limit)
    .map(({ status, message, count }) => ({ status, message, count }));
}
