import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argvCommand, argvOf, splitArgv } from '../../src/targets/argv.js';
import { isLmBenchError } from '../../src/errors.js';

test('argvOf: words, quotes and escapes; an unterminated quote or no word at all is a problem, not a throw', () => {
  assert.deepEqual(argvOf(`a "b c" 'd e' f\\ g "h\\"i"`), { argv: ['a', 'b c', 'd e', 'f g', 'h"i'] });
  assert.deepEqual(argvOf(`x ''`), { argv: ['x', ''] });
  for (const [text, why] of [['run.sh "a b', /unterminated "/], ["run.sh 'a", /unterminated '/], ['   ', /no program/]] as const) {
    const r = argvOf(text);
    assert.ok('problem' in r && why.test(r.problem), `${JSON.stringify(text)} → ${JSON.stringify(r)}`);
  }
});

test('splitArgv raises LMB_ERR_INVALID_ARGUMENT naming the field and the text', () => {
  assert.throws(
    () => splitArgv('vllm "serve', 'vllm'),
    (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && err.message === 'vllm: unterminated " in command: vllm "serve' && err.details['field'] === 'vllm',
  );
});

test('argvCommand keeps the string and refuses one that does not split', () => {
  assert.equal(argvCommand.parse('run.sh "a b"'), 'run.sh "a b"');
  const r = argvCommand.safeParse('run.sh "a b');
  assert.equal(r.success, false);
  assert.match(r.error?.issues[0]?.message ?? '', /unterminated "/);
});
