import { test } from 'node:test';
import assert from 'node:assert/strict';
import { absError, biasText, fixed, mapeText, pct, relError, signedPct } from '../../src/calibration/report-format.js';

test('errors are relative to the measurement, and missing on either side is missing', () => {
  assert.equal(relError(110, 100)?.toFixed(6), '0.100000');
  assert.equal(absError(90, 100)?.toFixed(6), '0.100000');
  assert.equal(relError(null, 100), null);
  assert.equal(absError(90, null), null);
});

test('MAPE ignores the sign and the rows without a prediction; the bias keeps the sign', () => {
  const xs = [0.25, -0.5, null, 0.25];
  assert.equal(mapeText(xs), '33.3%');
  assert.equal(biasText(xs), '+0.0%');
  assert.equal(biasText([-0.25, -0.05]), '-15.0%');
  // A measured 0 makes an infinite error: shown, not dropped, so that the bad row is seen.
  assert.equal(mapeText([Number.POSITIVE_INFINITY, 0.5]), 'Infinity%');
});

test('nothing to average, or no number, is a dash', () => {
  assert.equal(mapeText([]), '–');
  assert.equal(biasText([null]), '–');
  assert.equal(fixed(null), '–');
  assert.equal(fixed(12.345, 1), '12.3');
  assert.equal(pct(0.1234), '12.3%');
  assert.equal(signedPct(0.05), '+5.0%');
  assert.equal(signedPct(-0.05), '-5.0%');
});
