import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRng } from '../../src/util/rng.js';
import { numberFlag } from '../../src/cli/args.js';
import { main } from '../../src/cli/main.js';
import { isLmBenchError } from '../../src/errors.js';
import { captureIo } from '../helpers/cli.js';

const refused = (raw: string, opts: Parameters<typeof numberFlag>[2], message: RegExp): void =>
  assert.throws(
    () => numberFlag(raw, 'gpus', opts),
    (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && message.test(err.message) && err.details['field'] === 'gpus',
    `${raw}: ${String(message)}`,
  );

test('an integer flag takes digits only: exponent or decimal-point forms of a count are refused, not read as 10 or 8', () => {
  for (const raw of ['1e1', '8.0', '2E0', '1.', '.5e1', '1e+1']) refused(raw, { int: true, min: 1, max: 64 }, /^--gpus must be an integer ≥ 1 and ≤ 64, got "/);
  assert.equal(numberFlag('8', 'gpus', { int: true, min: 1, max: 64 }), 8);
  assert.equal(numberFlag('+8', 'gpus', { int: true, min: 1, max: 64 }), 8);
  assert.equal(numberFlag('008', 'gpus', { int: true, min: 1, max: 64 }), 8);
  // A number flag (a rate, a duration) still reads exponents.
  assert.equal(numberFlag('1e1', 'rate', { min: Number.MIN_VALUE }), 10);
});

test('an integer flag refuses what it cannot hold exactly, naming the bound, and reads -0 as 0', () => {
  // 2^53 + 1 would be read as 2^53: a different seed than the one typed.
  refused('9007199254740993', { int: true, min: 0 }, /^--gpus must be an integer ≥ 0 and ≤ 9007199254740991, got "9007199254740993"$/);
  assert.equal(numberFlag('9007199254740991', 'gpus', { int: true, min: 0 }), Number.MAX_SAFE_INTEGER);
  assert.ok(Object.is(numberFlag('-0', 'gpus', { int: true, min: 0 }), 0));
  assert.ok(Object.is(numberFlag('-0', 'gpus', { min: 0 }), 0));
});

test('`--gpus 1e1` on the command line exits 2 with the flag’s message', async () => {
  const io = captureIo(process.cwd(), { LMB_DB: '/nonexistent/lmb-cli-numbers.db', HF_HUB_OFFLINE: '1' });
  const argv = ['sim', 'run', '--gpu', 'H100', '--gpus', '1e1', '--model', 'llama-3.1-8b', '--input-len', '8', '--output-len', '4'];
  assert.equal(await main(argv, io), 2);
  assert.match(io.err(), /^lm-bench: error LMB_ERR_INVALID_ARGUMENT: --gpus must be an integer ≥ 1 and ≤ 64, got "1e1"/);
});

test('--seed past 32 bits is its own seed: the RNG mixes in the high bits, so 4294967297 does not replay seed 1', () => {
  assert.equal(numberFlag('4294967297', 'seed', { int: true, min: 0 }), 4294967297);
  const draws = (seed: number): number[] => {
    const r = createRng(seed);
    return [r.next(), r.next(), r.fork('x').next()];
  };
  assert.notDeepEqual(draws(4294967297), draws(1));
  assert.notDeepEqual(draws(2 ** 40), draws(0));
  assert.throws(() => numberFlag('9007199254740993', 'seed', { int: true, min: 0 }), /≤ 9007199254740991/);
  // A tighter bound a command gives stays.
  assert.throws(() => numberFlag('11', 'seed', { int: true, min: 0, max: 10 }), /≤ 10, got "11"/);
});
