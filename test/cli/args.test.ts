import { test } from 'node:test';
import assert from 'node:assert/strict';
import { numberFlag, parseFlags } from '../../src/cli/args.js';
import { main } from '../../src/cli/main.js';
import { isLmBenchError } from '../../src/errors.js';
import { captureIo } from '../helpers/cli.js';

const refused = (fn: () => unknown, message: RegExp, field: string): void =>
  assert.throws(fn, (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && message.test(err.message) && err.details['field'] === field, String(message));

test('numberFlag reads plain decimal only: hex, binary, octal, empty, padded or trailing text is refused naming the flag', () => {
  for (const raw of ['0x10', '0b1', '0o7', '', ' ', ' 12', '12 ', '12abc', '1_000', 'Infinity', 'NaN', '1e', '.', '--1']) {
    refused(() => numberFlag(raw, 'seed', { int: true, min: 0 }), new RegExp(`^--seed must be an integer ≥ 0, got "${raw.replace('.', '\\.')}"$`), 'seed');
  }
  assert.equal(numberFlag('12', 'seed', { int: true, min: 0 }), 12);
  assert.equal(numberFlag('-3', 'x', { int: true }), -3);
  assert.equal(numberFlag('+0.5', 'x'), 0.5);
  assert.equal(numberFlag('.5', 'x'), 0.5);
  assert.equal(numberFlag('2e3', 'x'), 2000);
  assert.equal(numberFlag(undefined, 'x'), undefined);
});

test('numberFlag states its bounds as a person writes them: "> 0" for a positive number, never 5e-324', () => {
  refused(() => numberFlag('0', 'rate', { min: Number.MIN_VALUE, max: 1e6 }), /^--rate must be a number > 0 and ≤ 1000000, got "0"$/, 'rate');
  refused(() => numberFlag('-1', 'timeout-s', { min: Number.MIN_VALUE }), /^--timeout-s must be a number > 0, got "-1"$/, 'timeout-s');
  refused(() => numberFlag('65', 'gpus', { int: true, min: 1, max: 64 }), /^--gpus must be an integer ≥ 1 and ≤ 64, got "65"$/, 'gpus');
  assert.equal(numberFlag('5e-324', 'rate', { min: Number.MIN_VALUE }), Number.MIN_VALUE);
});

test('parseFlags takes a negative number as the value of the flag before it, so the flag’s own range check answers', () => {
  const opts = { seed: { type: 'string' }, gpus: { type: 'string' }, json: { type: 'boolean' } } as const;
  const values = (argv: string[]): Record<string, unknown> => ({ ...parseFlags(argv, opts).values });
  assert.deepEqual(values(['--seed', '-1', '--gpus', '-.5', '--json']), { seed: '-1', gpus: '-.5', json: true });
  assert.deepEqual(values(['--seed', '-inf']), { seed: '-inf' });
  assert.deepEqual(values(['--seed=-2']), { seed: '-2' });
  // Only after a flag that takes a value, and never past `--`.
  assert.throws(() => parseFlags(['--json', '-1'], opts), (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && /Unknown option '-1'/.test(err.message));
  assert.deepEqual(parseFlags(['--', '--seed', '-1'], opts, true).positionals, ['--seed', '-1']);
  // A value that looks like a flag is still refused as ambiguous.
  assert.throws(() => parseFlags(['--seed', '--json'], opts), (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && /ambiguous/.test(err.message));
});

test('negative numbers on the command line get the flag’s range message and exit 2, not parseArgs’ "ambiguous"', async () => {
  const sim = ['sim', 'run', '--gpu', 'H100', '--model', 'llama-3.1-8b', '--input-len', '8', '--output-len', '4'];
  const cases: [string[], RegExp][] = [
    [['recommend', '--gpu', 'H100', '--gpus', '-1', '--model', 'llama-3.1-8b', '--workload', 'data/workloads/chat.yaml'], /--gpus must be an integer ≥ 1 and ≤ 64, got "-1"/],
    [[...sim, '--gpus', '1', '--seed', '-1'], /--seed must be an integer ≥ 0, got "-1"/],
    [[...sim, '--gpus', '1', '--request-rate', '-1'], /--request-rate must be a number > 0 or "inf", got "-1"/],
    [[...sim, '--gpus', '1', '--prompt-pool', '-3'], /--prompt-pool must be an integer ≥ 1 and ≤ 1000000, got "-3"/],
    [['plan', '--model', 'llama-3.1-8b', '--workload', 'data/workloads/chat.yaml', '--rate', '0'], /--rate must be a number > 0 and ≤ 1000000, got "0"/],
  ];
  for (const [argv, message] of cases) {
    const io = captureIo(process.cwd(), { LMB_DB: '/nonexistent/lmb-args-test.db', HF_HUB_OFFLINE: '1' });
    assert.equal(await main(argv, io), 2, argv.join(' '));
    assert.match(io.err(), /^lm-bench: error LMB_ERR_INVALID_ARGUMENT: /, argv.join(' '));
    assert.match(io.err(), message, argv.join(' '));
    assert.doesNotMatch(io.err(), /ambiguous/);
  }
});

test('a flag that does not repeat, given twice with different values, is refused naming it and both values; the same value twice passes', () => {
  const opts = { gpu: { type: 'string' }, model: { type: 'string', short: 'm' }, set: { type: 'string', multiple: true }, json: { type: 'boolean' } } as const;
  const refusedRepeat = (argv: string[], message: string, field: string): void =>
    assert.throws(
      () => parseFlags(argv, opts),
      (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && err.message === message && err.details['field'] === field,
      argv.join(' '),
    );
  refusedRepeat(['--gpu', 'H100', '--json', '--gpu', 'A100'], '--gpu was given twice, as "H100" and then "A100"; give it once', 'gpu');
  refusedRepeat(['--gpu=H100', '--gpu', 'A100'], '--gpu was given twice, as "H100" and then "A100"; give it once', 'gpu');
  // A short form is the same flag.
  refusedRepeat(['-m', 'llama-3.1-8b', '--model', 'qwen3-8b'], '--model was given twice, as "llama-3.1-8b" and then "qwen3-8b"; give it once', 'model');
  assert.deepEqual({ ...parseFlags(['--gpu', 'H100', '--gpu', 'H100', '--json', '--json'], opts).values }, { gpu: 'H100', json: true });
  // A flag meant to repeat keeps every value.
  assert.deepEqual(parseFlags(['--set', 'a=1', '--set', 'a=2'], opts).values.set, ['a=1', 'a=2']);
});

test('a switch given with its --no- form is refused, whichever comes last', () => {
  const opts = { 'enable-prefix-caching': { type: 'boolean' }, 'no-enable-prefix-caching': { type: 'boolean' } } as const;
  for (const argv of [['--enable-prefix-caching', '--no-enable-prefix-caching'], ['--no-enable-prefix-caching', '--enable-prefix-caching']]) {
    assert.throws(() => parseFlags(argv, opts), (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && /contradict each other/.test(err.message), argv.join(' '));
  }
  assert.deepEqual({ ...parseFlags(['--no-enable-prefix-caching'], opts).values }, { 'no-enable-prefix-caching': true });
});

test('`sim run --gpu H100 … --gpu A100` exits 2 naming both GPUs, before simulating anything', async () => {
  const io = captureIo(process.cwd(), { LMB_DB: '/nonexistent/lmb-args-test.db', HF_HUB_OFFLINE: '1' });
  const argv = ['sim', 'run', '--gpu', 'H100-SXM', '--model', 'llama-3.1-8b', '--input-len', '8', '--output-len', '4', '--num-prompts', '2', '--gpu', 'A100-80GB'];
  assert.equal(await main(argv, io), 2);
  assert.equal(io.err(), 'lm-bench: error LMB_ERR_INVALID_ARGUMENT: --gpu was given twice, as "H100-SXM" and then "A100-80GB"; give it once\n');
  assert.equal(io.out(), '');
});

test('a stray word says what it most likely was: the model of a command with --model, or a value given to a switch', async () => {
  const opts = { model: { type: 'string' }, json: { type: 'boolean' } } as const;
  const refusedWord = (argv: string[], message: string): void =>
    assert.throws(() => parseFlags(argv, opts), (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && err.message === message, argv.join(' '));
  refusedWord(['Qwen/Qwen3-8B'], "Unexpected argument 'Qwen/Qwen3-8B': this command takes flags only; did you mean --model Qwen/Qwen3-8B?");
  refusedWord(['--json', 'true'], "Unexpected argument 'true': this command takes flags only; --json is a switch and takes no value");
  refusedWord(['--model', 'a', 'b'], "Unexpected argument 'b': this command takes flags only; run the command with --help for its flags");
  const io = captureIo(process.cwd(), { LMB_DB: '/nonexistent/lmb-args-test.db', HF_HUB_OFFLINE: '1' });
  assert.equal(await main(['sim', 'run', 'llama-3.1-8b', '--gpu', 'H100-SXM'], io), 2);
  assert.equal(io.err(), "lm-bench: error LMB_ERR_INVALID_ARGUMENT: Unexpected argument 'llama-3.1-8b': this command takes flags only; did you mean --model llama-3.1-8b?\n");
});
