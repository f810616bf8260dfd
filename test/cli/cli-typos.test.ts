import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFlags } from '../../src/cli/args.js';
import { main } from '../../src/cli/main.js';
import { isLmBenchError } from '../../src/errors.js';
import { captureIo, type CapturedIo } from '../helpers/cli.js';

const opts = { json: { type: 'boolean' }, 'max-num-seqs': { type: 'string' }, 'tensor-parallel-size': { type: 'string' }, 'input-len': { type: 'string' } } as const;

const refusedWith = (argv: string[], message: string, field: string): void =>
  assert.throws(
    () => parseFlags(argv, opts),
    (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && err.message === message && err.details['field'] === field,
    message,
  );

test('a mistyped flag names the flag it most likely meant, not parseArgs’ advice to pass it after `--`', () => {
  refusedWith(['--jsn'], "Unknown option '--jsn'; did you mean --json?", 'jsn');
  refusedWith(['--jsno'], "Unknown option '--jsno'; did you mean --json?", 'jsno');
  refusedWith(['--max-num-seq', '4'], "Unknown option '--max-num-seq'; did you mean --max-num-seqs?", 'max-num-seq');
  refusedWith(['--tensor-paralel-size=2'], "Unknown option '--tensor-paralel-size'; did you mean --tensor-parallel-size?", 'tensor-paralel-size');
  // Nothing near: no guess, a pointer to the flags.
  refusedWith(['--zzz'], "Unknown option '--zzz'; run the command with --help for its flags", 'zzz');
  refusedWith(['-x'], "Unknown option '-x'; run the command with --help for its flags", 'x');
});

test('a mistyped command names the command it most likely meant (never the deprecated alias), exit 2', async () => {
  const cases: [string, string][] = [
    ['simm', 'unknown command "simm"; did you mean `lm-bench sim`?'],
    ['reccomend', 'unknown command "reccomend"; did you mean `lm-bench recommend`?'],
    ['modle', 'unknown command "modle"; did you mean `lm-bench models`?'],
    ['foo', 'unknown command "foo"; run `lm-bench --help`'],
  ];
  for (const [name, message] of cases) {
    const io = captureIo();
    assert.equal(await main([name], io), 2, name);
    assert.equal(io.err(), `lm-bench: error LMB_ERR_UNKNOWN_COMMAND: ${message}\n`);
    assert.equal(io.out(), '');
  }
});

test('`lm-bench help CMD` prints that command’s usage, as `lm-bench CMD --help` does', async () => {
  const viaHelp = captureIo();
  const viaFlag = captureIo();
  assert.equal(await main(['help', 'sim'], viaHelp), 0);
  assert.equal(await main(['sim', '--help'], viaFlag), 0);
  assert.match(viaHelp.out(), /lm-bench sim run --gpu GPU/);
  assert.equal(viaHelp.out(), viaFlag.out());
  const typo = captureIo();
  assert.equal(await main(['help', 'simm'], typo), 2);
  assert.match(typo.err(), /unknown command "simm"; did you mean `lm-bench sim`\?/);
});

test('a flag written before the command is named as such (as JSON when it is --json), not as an unknown command', async () => {
  const io = captureIo();
  assert.equal(await main(['--json', 'models', 'show', 'llama-3.1-8b'], io), 2);
  const { error } = JSON.parse(io.out()) as { error: { code: string; message: string } };
  assert.equal(error.code, 'LMB_ERR_UNKNOWN_COMMAND');
  assert.equal(error.message, '"--json" is a flag, not a command; write it after the command: `lm-bench models … --json`');
  assert.equal(io.err(), '');
  const bare = captureIo();
  assert.equal(await main(['--gpus', '2'], bare), 2);
  assert.match(bare.err(), /"--gpus" is a flag, not a command; give a command first: `lm-bench <command> \[flags\]`/);
});

test('`--json=true`, refused as a boolean given a value, still answers with one JSON document on stdout', async () => {
  const io = captureIo();
  assert.equal(await main(['models', 'show', 'llama-3.1-8b', '--json=true'], io), 2);
  const { error } = JSON.parse(io.out()) as { error: { code: string; message: string } };
  assert.equal(error.code, 'LMB_ERR_INVALID_ARGUMENT');
  assert.match(error.message, /'--json' does not take an argument/);
  assert.equal(io.err(), '');
});

test('an internal error says how to get its stack trace (LMB_DEBUG=1), which then goes to stderr', async () => {
  const failingStdout = { write: (): boolean => { throw new TypeError('boom'); } } as unknown as CapturedIo['stdout'];
  const plain = captureIo(process.cwd(), { HF_HUB_OFFLINE: '1' });
  assert.equal(await main(['models', 'show', 'llama-3.1-8b'], { ...plain, stdout: failingStdout }), 70);
  assert.equal(plain.err(), 'lm-bench: error LMB_ERR_INTERNAL: boom\nlm-bench: run again with LMB_DEBUG=1 to print the stack trace for the report\n');
  const debug = captureIo(process.cwd(), { HF_HUB_OFFLINE: '1', LMB_DEBUG: '1' });
  assert.equal(await main(['models', 'show', 'llama-3.1-8b'], { ...debug, stdout: failingStdout }), 70);
  assert.match(debug.err(), /^lm-bench: error LMB_ERR_INTERNAL: boom\nTypeError: boom\n\s+at /);
});
