/**
 * The smallest and largest of a list by a loop. Spreading a list into Math.min/Math.max passes each
 * value as an argument, and a list of ~120,000 (a trace's requests, a long run's records) overflows
 * the call stack. An empty list gives {+∞, −∞}, as Math.min() and Math.max() do.
 */
export function extentOf(xs: Iterable<number>): { readonly min: number; readonly max: number } {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const x of xs) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  return { min, max };
}
