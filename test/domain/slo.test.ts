import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSloString, SLO_KEYS } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';

test('parseSloString reads key=value pairs', () => {
  assert.deepEqual(parseSloString(' ttft_p99_ms=350, itl_p99_ms=50 '), { ttft_p99_ms: 350, itl_p99_ms: 50 });
});

test('parseSloString reads decimal limits with a fraction or an exponent', () => {
  assert.deepEqual(parseSloString('ttft_p99_ms=0.5,itl_p99_ms=5e1,e2el_p99_ms=+1200'), { ttft_p99_ms: 0.5, itl_p99_ms: 50, e2el_p99_ms: 1200 });
});

test('parseSloString raises the catalog error itself, naming the flag and the part at fault', () => {
  const bad: [string, RegExp][] = [
    ['', /empty/],
    [' , ', /empty/],
    ['ttft_p99_ms', /"ttft_p99_ms" is not key=value/],
    ['ttft_p99_ms=', /"ttft_p99_ms=" is not key=value/],
    ['ttft_p99=5', /unknown key "ttft_p99"/],
    ['ttft_p99_ms=abc', /ttft_p99_ms=abc: the limit must be a positive number/],
    ['ttft_p99_ms=-3', /ttft_p99_ms=-3/],
    ['itl_p99_ms=50,ttft_p99_ms=0', /ttft_p99_ms=0/],
    // A key given twice is refused, naming it, rather than the last one silently kept.
    ['ttft_p99_ms=350,ttft_p99_ms=100', /ttft_p99_ms is given twice \(350 and 100\); give it once/],
    ['ttft_p99_ms=350,itl_p99_ms=50, ttft_p99_ms=350', /ttft_p99_ms is given twice/],
    // Plain decimal only: Number() would read these as 16, 1, 7 and Infinity.
    ['ttft_p99_ms=0x10', /ttft_p99_ms=0x10: the limit must be a positive number of milliseconds, in plain decimal/],
    ['ttft_p99_ms=0b1', /ttft_p99_ms=0b1: /],
    ['ttft_p99_ms=0o7', /ttft_p99_ms=0o7: /],
    ['ttft_p99_ms=Infinity', /ttft_p99_ms=Infinity: /],
    ['ttft_p99_ms=350ms', /ttft_p99_ms=350ms: /],
    ['ttft_p99_ms=3 50', /ttft_p99_ms=3 50: /],
  ];
  for (const [text, why] of bad) {
    assert.throws(
      () => parseSloString(text),
      (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && err.message.startsWith('--slo: ') && why.test(err.message) && err.details['field'] === 'slo',
      JSON.stringify(text),
    );
  }
  assert.throws(() => parseSloString('x=1', { label: '--goal', field: 'goal' }), (err: unknown) => isLmBenchError(err) && /^--goal: unknown key "x"; known: /.test(err.message) && err.details['field'] === 'goal');
  assert.ok(SLO_KEYS.includes('ttft_p99_ms'));
});
