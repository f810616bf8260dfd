/**
 * Exhaustive grid search for the kernel fits (vidur-kernels.ts, aic-kernels.ts, aic-moe.ts): one or two
 * efficiencies over a few hundred rows, where trying every grid point is cheap and has no local minimum
 * to fall into, and the losses those fits minimise and report.
 */

/** Grid points from `from` to `to` inclusive, `by` apart, rounded so that they print as written. */
export const steps = (from: number, to: number, by: number): number[] => Array.from({ length: Math.round((to - from) / by) + 1 }, (_, i) => Number((from + i * by).toFixed(4)));

/** The minimiser of `loss` over the grid `xs` × `ys` (the first of equal losses, in order). */
export function grid2(xs: readonly number[], ys: readonly number[], loss: (x: number, y: number) => number): [number, number] {
  let best: [number, number] = [xs[0] as number, ys[0] as number];
  let bestLoss = Number.POSITIVE_INFINITY;
  for (const x of xs) {
    for (const y of ys) {
      const l = loss(x, y);
      if (l < bestLoss) [best, bestLoss] = [[x, y], l];
    }
  }
  return best;
}

/** The minimiser of a one-parameter loss over a grid. */
export function grid1(xs: readonly number[], loss: (x: number) => number): number {
  return grid2(xs, [0], (x) => loss(x))[0];
}

/** Mean |ln(predicted / measured)| and mean |predicted / measured − 1| of (predicted, measured) pairs; 0 for none. */
export const meanAbsLog = (pairs: readonly (readonly [number, number])[]): number => (pairs.length === 0 ? 0 : pairs.reduce((acc, [p, m]) => acc + Math.abs(Math.log(p / m)), 0) / pairs.length);
export const mape = (pairs: readonly (readonly [number, number])[]): number => (pairs.length === 0 ? 0 : pairs.reduce((acc, [p, m]) => acc + Math.abs(p / m - 1), 0) / pairs.length);
