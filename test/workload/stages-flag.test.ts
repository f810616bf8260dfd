import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRateStagesFlag } from '../../src/workload/stages-flag.js';
import { LmBenchError } from '../../src/errors.js';

test('--rate-stages: spaces around the colon are layout, not a refused number', () => {
  assert.deepEqual(parseRateStagesFlag('8 : 600, 20 :600'), [{ rate_rps: 8, duration_s: 600 }, { rate_rps: 20, duration_s: 600 }]);
});

test('--rate-stages: a rate or duration that is not a number is named as such, not as a missing rate', () => {
  const cases: [string, RegExp][] = [
    ['0x10:5', /the rate "0x10" is not a decimal number/],
    ['Infinity:4', /the rate "Infinity" is not a decimal number/],
    ['8:10m', /the duration "10m" is not a decimal number of seconds/],
  ];
  for (const [text, why] of cases) {
    assert.throws(
      () => parseRateStagesFlag(text),
      (e: unknown) => e instanceof LmBenchError && e.code === 'LMB_ERR_INVALID_ARGUMENT' && why.test(e.message) && !/give the stage one rate/.test(e.message),
      text,
    );
  }
});
