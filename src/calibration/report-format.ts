/**
 * How docs/calibration.md writes an error: a percentage with one decimal, a dash where no row had both a
 * prediction and a measurement. One copy for every table of the report, so that a figure reads the same
 * wherever it appears.
 */

export const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

export const signedPct = (x: number): string => `${x >= 0 ? '+' : ''}${pct(x)}`;

/** sim ÷ measured − 1; null where either is missing. */
export const relError = (sim: number | null, measured: number | null): number | null => (sim === null || measured === null ? null : sim / measured - 1);

/** |sim ÷ measured − 1|; null where either is missing. */
export const absError = (sim: number | null, measured: number | null): number | null => {
  const r = relError(sim, measured);
  return r === null ? null : Math.abs(r);
};

/** Null rows are left out; a non-finite error (a measured 0) is kept, so that it shows rather than hides. */
function meanOf(xs: readonly (number | null)[], f: (x: number) => number): number | null {
  const v = xs.filter((x): x is number => x !== null).map(f);
  return v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length;
}

/** Mean absolute error of relative errors (their sign ignored), as a percentage. */
export function mapeText(xs: readonly (number | null)[]): string {
  const m = meanOf(xs, Math.abs);
  return m === null ? '–' : pct(m);
}

/** Mean signed relative error: + where the simulator predicts more than was measured. */
export function biasText(xs: readonly (number | null)[]): string {
  const m = meanOf(xs, (x) => x);
  return m === null ? '–' : signedPct(m);
}

/** A number with `digits` decimals, or a dash. */
export const fixed = (x: number | null, digits = 0): string => (x === null ? '–' : x.toFixed(digits));
